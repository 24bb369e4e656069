/**
 * `ollama-delegate review` as a user runs it in a terminal: the real program in a subprocess,
 * the emulator playing the reviewers on the native engine.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ChatRequestView } from "../support/emulator/emulator.ts";
import { cliEnv, runCli } from "./jobs_support.ts";
import { emulator, jobCount, MODELS, repo, reviewers } from "./review_support.ts";

Deno.test("review by hand: a panel in the terminal, as text and as JSON", async () => {
  const seen: ChatRequestView[] = [];
  await using emu = await emulator({
    models: MODELS.map((name) => ({ name })),
    chatScript: reviewers(seen),
  });
  const ctx = cliEnv({ env: { OLLAMA_HOST: emu.url, OLLAMA_MCP_DEFAULT_ENGINE: "native" } });
  const dir = repo();
  writeFileSync(join(dir, "app.ts"), "const a = 1;\nconst b = eval(input); // TODO\nexport {};\n");
  const text = await runCli({ ...ctx, cwd: dir }, [
    "review",
    "--models",
    MODELS.join(","),
    "--focus",
    "security",
  ]);
  assert.equal(text.code, 0, text.stderr);
  assert.match(
    text.stdout,
    /^reviewed: +1 file \(\+1 -0\) of uncommitted changes, focus: security$/m,
  );
  assert.match(text.stdout, /^reviewers: +3 of 3 answered$/m);
  assert.match(
    text.stdout,
    /^1\. \[high\] app\.ts:2 \(2 of 3: qwen3-coder:30b, gpt-oss:20b\) {2}"eval of input runs arbitrary code \(qwen3-coder:30b\)"$/m,
  );
  assert.match(
    text.stdout,
    /^2\. \[low\] app\.ts:2 \(1 of 3: qwen3-coder:30b\) {2}"a TODO left in the code"$/m,
  );

  const json = await runCli({ ...ctx, cwd: dir }, [
    "review",
    "--models",
    MODELS.join(","),
    "--min-agreement",
    "2",
    "--json",
  ]);
  assert.equal(json.code, 0, json.stderr);
  const out = JSON.parse(json.stdout);
  assert.equal(out.answered, 3);
  assert.deepEqual(
    out.findings.map((
      f: { severity: string; agreed: number; of: number },
    ) => [f.severity, f.agreed, f.of]),
    [["high", 2, 3]],
  );
  assert.deepEqual(out.belowAgreement.map((f: { claim: string }) => f.claim), [
    "a TODO left in the code",
  ]);
  assert.deepEqual(out.findings[0].reviewers.map((r: { model: string }) => r.model), [
    "qwen3-coder:30b",
    "gpt-oss:20b",
  ]);
  // The reviewers are ordinary jobs in the state dir: 3 per review.
  assert.equal(jobCount(ctx.stateDir), 6);

  const bad = await runCli({ ...ctx, cwd: dir }, ["review", "--models", "qwen3-coder:30b"]);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /a panel has 2-5 reviewers/);
  const usage = await runCli({ ...ctx, cwd: dir }, ["review", "--engine", "gpt"]);
  assert.equal(usage.code, 2);
});

/**
 * Where the work goes (issue 29, item 4): with both a local and a cloud model pulled, the real
 * server says which one runs and where, and `residency: local` keeps every choice of a model
 * (the default, `model: "auto"`, an agent's fallback, a review panel, a named backend, a
 * follow-up) on this machine or a private network. What reached the emulator shows that no
 * request named a cloud model.
 */
import { git } from "../support/git_repo.ts";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { LedgerEntry } from "../../src/jobs/ledger/ledger.ts";
import { repoIdOf } from "../../src/jobs/repo_id.ts";
import { field, tempDir } from "../support/harness.ts";
import { type InProcessScene, startInProcessScene } from "../support/in_process_scene.ts";

const LOCAL = "qwen3:8b";
const SMALL = "llama3.2:3b";
const CLOUD = "gpt-oss:120b-cloud";
/** A model made FROM a cloud one: its name does not say cloud, Ollama's listing does. */
const DERIVED = "team-coder:latest";
/** TEST-NET-3 (RFC 5737): a public address nothing answers on; never connected to here. */
const REMOTE_URL = "http://203.0.113.7:8000";

const modelsAsked = (scene: InProcessScene) => [
  ...scene.emulator.nativeChatRequests().map((r) => (r.json as { model: string }).model),
  ...scene.emulator.requests.filter((r) => r.path === "/v1/messages")
    .map((r) => (r.json as { model: string }).model),
];

/** Ledger entries of the tester agent here: `model` passed `passed` checks of `passed + failed`. */
function entries(model: string, passed: number, failed: number, repo: string): LedgerEntry[] {
  return Array.from({ length: passed + failed }, (_, i) => ({
    v: 1 as const,
    at: Date.now() - 3_600_000 + i,
    job: crypto.randomUUID(),
    model,
    engine: "native",
    backend: "ollama",
    agent: "tester",
    repo,
    verified: i < passed,
    rounds: 0,
    toolCalls: 2,
    tokensIn: 500,
    tokensOut: 50,
    cost: null,
    wallMs: 4000,
    state: i < passed ? "completed" : "failed",
  }));
}

Deno.test("residency local: the cloud default, a cloud or remote model, a cloud fallback and a panel with a cloud member are refused; auto stays local", async () => {
  await using scene = await startInProcessScene({
    emulator: {
      models: [{ name: LOCAL }, { name: SMALL }, { name: CLOUD }, { name: DERIVED, remote: true }],
    },
    server: false,
  });
  const work = tempDir("od-resident-");
  const repo = await repoIdOf(work);
  mkdirSync(scene.stateDir, { recursive: true });
  // The cloud model has the best record by far: auto would pick it if it could.
  writeFileSync(
    join(scene.stateDir, "ledger.jsonl"),
    [...entries(CLOUD, 10, 0, repo), ...entries(SMALL, 1, 3, repo)]
      .map((e) => JSON.stringify(e)).join("\n") + "\n",
  );
  const agents = join(scene.home, ".ollama-mcp", "agents");
  mkdirSync(agents, { recursive: true });
  // The user's own agents: a project's could not move work to the cloud anyway (issue 28).
  writeFileSync(join(agents, "tester.md"), "---\nengine: native\nmodel: auto\n---\nTests.\n");
  writeFileSync(
    join(agents, "steady.md"),
    `---\nengine: native\nmodel: ${LOCAL}\nfallback: [${CLOUD}, ${SMALL}]\n---\nHelp.\n`,
  );
  await scene.startServer({
    userConfig: {
      residency: "local",
      defaultModel: CLOUD,
      backends: {
        lab: { url: scene.emulator.url, kind: "ollama" },
        rented: { url: REMOTE_URL, kind: "openai" },
      },
    },
  });
  const start = (args: Record<string, unknown>) =>
    scene.call("delegate_start", { cwd: work, wait_seconds: 60, ...args });

  // The default model is a cloud one: a call that names none is refused, and says why and how.
  const byDefault = await start({ engine: "native", prompt: "@reply done\nsummarise" });
  assert.equal(byDefault.isError, true, byDefault.text);
  assert.match(
    byDefault.text,
    /^Cannot start job: the default model "gpt-oss:120b-cloud" \(backend "ollama"\) would leave this machine: gpt-oss:120b-cloud runs on ollama\.com, through http:\/\/127\.0\.0\.1:\d+; the setting residency is "local"/,
  );
  assert.match(byDefault.text, /ollama-delegate config --default-model <a local model>/);
  // The claude engine's default is the same model on the same Ollama.
  const claude = await start({ prompt: "summarise" });
  assert.equal(claude.isError, true, claude.text);
  assert.match(claude.text, /the default model "gpt-oss:120b-cloud" .* residency is "local"/);

  // A cloud model named by the call, one that is cloud only by Ollama's listing, a remote backend.
  for (
    const [args, why] of [
      [{ model: CLOUD }, /model "gpt-oss:120b-cloud" \(backend "ollama"\) would leave/],
      [{ model: DERIVED }, /model "team-coder:latest" .* team-coder:latest runs on ollama\.com/],
      [
        { model: LOCAL, backend: "rented" },
        /model "qwen3:8b" \(backend "rented"\) would leave this machine: http:\/\/203\.0\.113\.7:8000 is not this machine nor a private network/,
      ],
    ] as const
  ) {
    const refused = await start({ engine: "native", prompt: "@reply done\nx", ...args });
    assert.equal(refused.isError, true, refused.text);
    assert.match(refused.text, why);
    assert.match(refused.text, /only the user can change this, from a terminal/);
  }

  // A local model runs, and the reply says where.
  const local = await start({ engine: "native", model: LOCAL, prompt: "@reply done\nx" });
  assert.equal(field(local.text, "state"), "completed", local.text);
  assert.match(
    field(local.text, "where")!,
    /^local \(http:\/\/127\.0\.0\.1:\d+, this machine\)$/,
  );
  const lab = await start({ engine: "native", model: SMALL, backend: "lab", prompt: "@reply ok" });
  assert.equal(field(lab.text, "state"), "completed", lab.text);
  assert.match(field(lab.text, "where")!, /^local \(http:\/\/127\.0\.0\.1:\d+, this machine\)$/);

  // The local model fails: the cloud fallback is left out and said so, the local one takes over.
  const steady = await start({ agent: "steady", prompt: "@fail 503 99\nsummarise" });
  assert.match(
    steady.text,
    /^warning: +agent "steady"'s fallback model "gpt-oss:120b-cloud" is left out: it runs on ollama\.com, and residency is "local"$/m,
  );
  assert.match(field(steady.text, "fallback") ?? "", /^qwen3:8b -> llama3\.2:3b /, steady.text);

  // auto: the cloud model's better record does not count.
  const auto = await start({ agent: "tester", prompt: "@reply done\nwrite the tests" });
  assert.equal(field(auto.text, "state"), "completed", auto.text);
  assert.match(
    field(auto.text, "model")!,
    /^llama3\.2:3b \(auto: .*left out by residency "local"\)$/,
  );

  // A review panel with a cloud member starts no reviewer at all.
  git(work, "init", "-q", "-b", "main");
  writeFileSync(join(work, "app.ts"), "export const a = 1;\n");
  git(work, "add", ".");
  git(work, "commit", "-q", "-m", "one");
  writeFileSync(join(work, "app.ts"), "export const a = eval(input);\n");
  const before = modelsAsked(scene).length;
  const panel = await scene.call("delegate_review", {
    cwd: work,
    engine: "native",
    models: [LOCAL, CLOUD],
    wait_seconds: 30,
  });
  assert.equal(panel.isError, true, panel.text);
  assert.match(panel.text, /reviewer model "gpt-oss:120b-cloud" \(backend "ollama"\) would leave/);
  assert.equal(modelsAsked(scene).length, before, "no reviewer ran");

  assert.ok(
    !modelsAsked(scene).some((m) => m === CLOUD || m === DERIVED),
    String(modelsAsked(scene)),
  );

  // ollama_models says what is in force and what it refuses.
  const report = (await scene.call("ollama_models")).text;
  assert.match(
    report,
    /^Residency: +local: only this machine or a private network .*; the default model gpt-oss:120b-cloud is refused/m,
  );
  assert.match(report, /^ {2}x gpt-oss:120b-cloud +\[cloud\] .*BLOCKED by residency "local"/m);
  assert.match(report, /^ {4}qwen3:8b +\[local\]/m);
});

Deno.test("residency any: the cloud default is named as cloud in the reply and ollama_models; local keeps the next turns home", async () => {
  await using scene = await startInProcessScene({
    emulator: { models: [{ name: LOCAL }, { name: CLOUD }] },
  });
  const work = tempDir("od-resident-");
  const report = (await scene.call("ollama_models")).text;
  assert.match(report, /^Default model: +gpt-oss:120b-cloud \(auto\)$/m);
  assert.match(
    report,
    /^Residency: +any; the default model gpt-oss:120b-cloud is cloud: gpt-oss:120b-cloud runs on ollama\.com, through http:\/\/127\.0\.0\.1:\d+\. ollama-delegate config --residency local keeps work local$/m,
  );
  const cloud = await scene.call("delegate_start", {
    engine: "native",
    prompt: "@reply done\nsummarise",
    cwd: work,
    wait_seconds: 60,
  });
  assert.equal(field(cloud.text, "state"), "completed", cloud.text);
  assert.equal(field(cloud.text, "model"), CLOUD);
  assert.match(
    field(cloud.text, "where")!,
    /^cloud \(gpt-oss:120b-cloud runs on ollama\.com, through http:\/\/127\.0\.0\.1:\d+; ollama-delegate config --residency local keeps work local\)$/,
  );

  // The user keeps work local from now on: the automatic default becomes the local model, and
  // the session that runs on the cloud model is not continued there.
  const resident = await scene.startServer({ env: { OLLAMA_MCP_RESIDENCY: "local" } });
  const next = await resident.call("delegate_start", {
    engine: "native",
    prompt: "@reply done\nsummarise",
    cwd: work,
    wait_seconds: 60,
  });
  assert.equal(field(next.text, "state"), "completed", next.text);
  assert.equal(field(next.text, "model"), LOCAL);
  assert.match(field(next.text, "where")!, /^local \(/);
  const followup = await resident.call("delegate_followup", {
    job_id: field(cloud.text, "job_id"),
    prompt: "@reply more\nand more",
    wait_seconds: 60,
  });
  assert.equal(followup.isError, true, followup.text);
  assert.match(
    followup.text,
    /the session's model "gpt-oss:120b-cloud" \(backend "ollama"\) would leave this machine.*Start a new task on a local model/,
  );
  const report2 = (await resident.call("ollama_models")).text;
  assert.match(report2, /^Default model: +qwen3:8b \(auto\)$/m);
  assert.match(report2, /^Residency: +local: .*; the default model qwen3:8b runs locally/m);
});

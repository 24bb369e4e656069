/**
 * `ollama-delegate doctor --probe` as a user runs it: our CLI in a subprocess against the
 * Ollama emulator, with models that make structured tool calls, write them as text, answer
 * without one, fail, and never answer.
 */
import assert from "node:assert/strict";
import {
  type ChatReply,
  type EmulatedModel,
  type Reply,
  startOllamaEmulator,
} from "../support/emulator/emulator.ts";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliEnv, runCli } from "./jobs_support.ts";

const MODELS: EmulatedModel[] = [
  // A Modelfile num_ctx that holds Claude Code's prompt.
  { name: "qwen3:8b", numCtx: 32_768 },
  { name: "hermes3:8b", toolCallStyle: "hermes" },
  // Loads with the server default (4096 here), below the claude engine's prompt.
  { name: "qwen3:4b" },
  { name: "talker:1b", numCtx: 16_384 },
  { name: "gone:cloud", retiredText: "model gone:cloud was retired on 2026-11-01" },
  { name: "slow:1b" },
];

const CALL = { name: "Read", arguments: { file_path: "notes.txt" } };
const SAID = "The notes probably list the next steps.";

/** What each model does with the task, on both APIs. */
function nativeReply(model: string): ChatReply {
  if (model.startsWith("talker")) return { kind: "text", text: SAID };
  if (model.startsWith("slow")) return { kind: "hang" };
  return { kind: "tool_calls", calls: [CALL] };
}

function messagesReply(model: string): Reply {
  if (model.startsWith("talker")) return { kind: "text", text: SAID };
  if (model.startsWith("slow")) return { kind: "hang" };
  return { kind: "tool_use", name: CALL.name, input: CALL.arguments };
}

interface Outcome {
  call?: string;
  tool?: string;
  format?: string;
  error?: string;
  said?: string;
}

interface ProbedJson {
  model: string;
  cloud: boolean;
  native: Outcome;
  claude: Outcome;
  promptTokensPerSecond?: number;
  generationTokensPerSecond?: number;
  secondsPerTurn: { native?: number; claude?: number };
  context: { effective?: number; source: string };
  usableWith: string[];
  notes: string[];
}

async function emulator() {
  return await startOllamaEmulator({
    models: MODELS,
    // As a real Ollama without OLLAMA_CONTEXT_LENGTH on a small GPU.
    contextMode: "real",
    defaultContextLength: 4096,
    chatScript: (view) => nativeReply(view.model),
    script: (view) => messagesReply(view.model),
  });
}

Deno.test("doctor --probe --json: call kinds per engine path, Ollama's speeds, seconds per turn, errors", async () => {
  const emu = await emulator();
  try {
    // Claude Code's full harness, whose prompt a 4,096-token context cannot hold.
    const ctx = cliEnv({
      env: { OLLAMA_MCP_BASE_URL: emu.url, OLLAMA_MCP_CLAUDE_HARNESS: "full" },
    });
    const run = await runCli(ctx, ["doctor", "--probe", "--json", "--timeout", "3"]);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    const report = JSON.parse(run.stdout) as {
      ok: boolean;
      baseUrl: string;
      assumptions: {
        promptTokens: { native: number; claude: number };
        claudeRequiredContext: number;
        replyTokens: number;
      };
      models: ProbedJson[];
    };
    assert.equal(report.ok, true);
    assert.equal(report.baseUrl, emu.url);
    // With no allowlist every installed model is probed, in Ollama's order.
    assert.deepEqual(report.models.map((m) => m.model), MODELS.map((m) => m.name));
    const by = (name: string) => report.models.find((m) => m.model === name)!;
    const { native: nativePrompt, claude: claudePrompt } = report.assumptions.promptTokens;
    const reply = report.assumptions.replyTokens;

    // Structured calls on both paths; the emulator reads 5000 prompt tokens/s and writes 50/s
    // (prompt_eval_duration 0.2 ms and eval_duration 20 ms per token).
    const qwen = by("qwen3:8b");
    assert.deepEqual([qwen.native.call, qwen.native.tool], ["structured", "Read"]);
    assert.deepEqual([qwen.claude.call, qwen.claude.tool], ["structured", "Read"]);
    assert.equal(qwen.promptTokensPerSecond, 5000);
    assert.equal(qwen.generationTokensPerSecond, 50);
    const turn = (prompt: number) => Math.round((prompt / 5000 + reply / 50) * 100) / 100;
    assert.equal(qwen.secondsPerTurn.native, turn(nativePrompt));
    assert.equal(qwen.secondsPerTurn.claude, turn(claudePrompt));
    assert.ok(qwen.secondsPerTurn.claude! > qwen.secondsPerTurn.native!);
    assert.deepEqual(qwen.context, {
      max: 32768,
      numCtx: 32768,
      loaded: 32768,
      effective: 32768,
      source: "modelfile",
    });
    assert.deepEqual(qwen.usableWith, ["native", "claude"]);

    // A call written as text: the native engine recovers it, Claude Code would not run it.
    const hermes = by("hermes3:8b");
    assert.deepEqual([hermes.native.call, hermes.native.tool, hermes.native.format], [
      "text",
      "Read",
      "hermes",
    ]);
    assert.deepEqual([hermes.claude.call, hermes.claude.format], ["text", "hermes"]);
    assert.deepEqual(hermes.usableWith, ["native"]);
    assert.ok(
      hermes.notes.some((n) =>
        /writes its tool call as text, which Claude Code does not run/.test(n)
      ),
    );

    // Structured calls on both paths, but loaded with the server default, too small for
    // Claude Code's prompt: the claude engine is out, and models derive is the fix.
    const small = by("qwen3:4b");
    assert.deepEqual([small.native.call, small.claude.call], ["structured", "structured"]);
    assert.deepEqual(small.context, {
      max: 32768,
      loaded: 4096,
      effective: 4096,
      source: "loaded",
    });
    assert.deepEqual(small.usableWith, ["native"]);
    assert.ok(
      small.notes.some((n) =>
        n.includes(
          `4096 tokens (as loaded now), is less than the ${report.assumptions.claudeRequiredContext} the claude engine needs`,
        ) &&
        n.includes("ollama-delegate models derive qwen3:4b --ctx 32k (makes qwen3:4b-ctx32k)")
      ),
      small.notes.join("\n"),
    );

    // An answer without a call works on neither engine.
    const talker = by("talker:1b");
    assert.deepEqual([talker.native.call, talker.claude.call], ["none", "none"]);
    assert.equal(talker.native.said, SAID);
    assert.deepEqual(talker.usableWith, []);

    // Errors are reported per path, not as a crash: Ollama's own text, and the timeout.
    const gone = by("gone:cloud");
    assert.equal(gone.cloud, true);
    assert.match(gone.native.error ?? "", /HTTP 410.*model gone:cloud was retired on 2026-11-01/);
    assert.match(gone.claude.error ?? "", /HTTP 410: model gone:cloud was retired on 2026-11-01/);
    assert.deepEqual(gone.usableWith, []);
    const slow = by("slow:1b");
    assert.equal(slow.native.error, "/api/chat: no answer within 3 s");
    assert.equal(slow.claude.error, "/v1/messages: no answer within 3 s");
    assert.deepEqual(slow.usableWith, []);

    // One request per model on each path, each with the two tools and a fresh first line.
    const native = emu.nativeChatRequests().map((r) => r.json as Record<string, unknown>);
    const messages = emu.messageRequests().map((r) => r.json as Record<string, unknown>);
    assert.deepEqual(native.map((b) => b.model), MODELS.map((m) => m.name));
    assert.deepEqual(messages.map((b) => b.model), MODELS.map((m) => m.name));
    for (const body of native) {
      const tools = (body.tools as { function: { name: string } }[]).map((t) => t.function.name);
      assert.deepEqual(tools, ["Read", "Bash"]);
    }
    for (const body of messages) {
      assert.deepEqual((body.tools as { name: string }[]).map((t) => t.name), ["Read", "Bash"]);
    }
    const systems = native.map((b) => (b.messages as { content: string }[])[0]!.content);
    assert.equal(new Set(systems.map((s) => s.split("\n")[0])).size, systems.length);
  } finally {
    await emu.close();
  }
});

Deno.test("doctor --probe: the table, named models, the allowlist, and exit 1 when no model works", async () => {
  const emu = await emulator();
  try {
    const ctx = cliEnv({
      env: { OLLAMA_MCP_BASE_URL: emu.url },
      userConfig: { allowedModels: ["qwen3:8b", "hermes3:8b", "talker:1b", "other:cloud"] },
    });
    const run = await runCli(ctx, ["doctor", "--probe", "--timeout", "3"]);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    const rows = run.stdout.split("\n");
    const row = (model: string) => {
      const found = rows.find((l) => l.startsWith(`  ${model} `));
      assert.ok(found, `no row for ${model} in:\n${run.stdout}`);
      return found.split(/ {2,}/).map((c) => c.trim()).filter(Boolean);
    };
    assert.match(
      rows.find((l) => l.includes("MODEL")) ?? "",
      /MODEL +NATIVE +CLAUDE +PROMPT tok\/s +GEN tok\/s +s\/turn NATIVE +s\/turn CLAUDE +USE WITH/,
    );
    assert.deepEqual(row("qwen3:8b").slice(1, 5), ["tool call", "tool call", "5000", "50"]);
    assert.equal(row("qwen3:8b").at(-1), "native, claude");
    assert.deepEqual(row("hermes3:8b").slice(1, 3), ["from text (hermes)", "as text, not run"]);
    assert.equal(row("hermes3:8b").at(-1), "native");
    assert.deepEqual(row("talker:1b").slice(1, 3), ["no call", "no call"]);
    assert.equal(row("talker:1b").at(-1), "none");
    // An allowed cloud model is tried although Ollama does not list it; the others are not.
    assert.deepEqual(row("other:cloud").slice(1, 3), ["error", "error"]);
    assert.match(
      run.stdout,
      /^ {2}other:cloud: native: .*HTTP 404.*model 'other:cloud' not found$/m,
    );
    assert.ok(!rows.some((l) => l.startsWith("  gone:cloud ") || l.startsWith("  slow:1b ")));
    assert.match(
      run.stdout,
      /^ {2}talker:1b: native: answered without a call: "The notes probably/m,
    );
    assert.match(run.stdout, /^s\/turn: the engine's prompt per request/m);

    // Work kept local: no cloud model is tried unless named.
    const resident = await runCli(
      { ...ctx, env: { ...ctx.env, OLLAMA_MCP_RESIDENCY: "local" } },
      ["doctor", "--probe", "--timeout", "3"],
    );
    assert.equal(resident.code, 0, resident.stdout + resident.stderr);
    assert.match(resident.stdout, /^ {2}qwen3:8b /m);
    assert.doesNotMatch(resident.stdout, /other:cloud/);

    // Named models are probed whatever the allowlist says, and flagged.
    const named = await runCli(ctx, [
      "doctor",
      "--probe",
      "talker:1b",
      "slow:1b",
      "--timeout",
      "2",
    ]);
    assert.equal(named.code, 1, "no named model can do delegated work");
    assert.match(named.stdout, /^ {2}slow:1b: native: \/api\/chat: no answer within 2 s$/m);
    assert.match(named.stdout, /^ {2}slow:1b: not in allowedModels/m);
    assert.match(named.stdout, /No probed model made a usable tool call/);
  } finally {
    await emu.close();
  }
});

Deno.test("doctor --probe: usage errors and a stopped Ollama", async () => {
  const emu = await startOllamaEmulator();
  const url = emu.url;
  await emu.close();
  const ctx = cliEnv({ env: { OLLAMA_MCP_BASE_URL: url } });
  for (
    const [args, message] of [
      [["qwen3:8b"], /unexpected argument "qwen3:8b" \(models are named only with --probe\)/],
      [["--timeout", "5"], /--timeout goes with --probe/],
      [["--probe", "--timeout", "soon"], /Cannot use --timeout "soon"/],
      [["--probe", "--timeout", "0"], /Cannot use --timeout "0"/],
    ] as Array<[string[], RegExp]>
  ) {
    const run = await runCli(ctx, ["doctor", ...args]);
    assert.equal(run.code, 2, args.join(" "));
    assert.match(run.stderr, message);
  }
  const run = await runCli(ctx, ["doctor", "--probe", "--json"]);
  assert.equal(run.code, 1);
  const report = JSON.parse(run.stdout) as { ok: boolean; error: string; models: unknown[] };
  assert.equal(report.ok, false);
  assert.deepEqual(report.models, []);
  assert.ok(report.error.includes(`Cannot reach Ollama at ${url}`), report.error);
  const help = await runCli(ctx, ["doctor", "--help"]);
  assert.match(help.stdout, /doctor --probe \[model\.\.\.\] \[--timeout <seconds>\] \[--json\]/);
});

Deno.test("doctor --probe: models whose past jobs wrote tool calls as text, from the quality ledger, also when Ollama is down", async () => {
  const emu = await startOllamaEmulator();
  const url = emu.url;
  await emu.close();
  const ctx = cliEnv({ env: { OLLAMA_MCP_BASE_URL: url } });
  const line = (job: string, model: string, engine: string, extra: Record<string, unknown>) =>
    JSON.stringify({
      v: 1,
      at: 1,
      job,
      model,
      engine,
      backend: "ollama",
      agent: "adhoc",
      repo: "",
      verified: null,
      rounds: 0,
      toolCalls: 1,
      tokensIn: 10,
      tokensOut: 5,
      cost: 0,
      wallMs: 100,
      state: "completed",
      ...extra,
    });
  writeFileSync(
    join(ctx.stateDir, "ledger.jsonl"),
    [
      line("a", "hermes3:8b", "claude", { state: "failed", unrunCall: true }),
      line("b", "hermes3:8b", "claude", {}),
      line("c", "hermes3:8b", "native", { recovered: 3 }),
      line("d", "qwen3:8b", "claude", {}),
    ].join("\n") + "\n",
  );
  const json = await runCli(ctx, ["doctor", "--probe", "--json"]);
  const report = JSON.parse(json.stdout) as { textCallsInJobs: unknown[] };
  assert.deepEqual(report.textCallsInJobs, [
    { model: "hermes3:8b", engine: "claude", jobs: 2, unrun: 1, recovered: 0 },
    { model: "hermes3:8b", engine: "native", jobs: 1, unrun: 0, recovered: 3 },
  ]);
  const text = await runCli(ctx, ["doctor", "--probe"]);
  assert.match(
    text.stdout,
    /Tool calls written as text in past jobs \(quality ledger; the native engine runs them, Claude Code does not\):\n {2}hermes3:8b: 1 of 2 claude jobs ended on a tool call written as text that did not run\n {2}hermes3:8b: native, 1 job; 3 calls recovered from text and run/,
  );
  assert.ok(!text.stdout.includes("qwen3:8b"));
});

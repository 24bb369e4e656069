/**
 * The claude engine and the model's context, with the real Claude Code CLI against the
 * emulator: the tools a delegate is shown (`--tools`, and so the size of every request), the
 * refusal before a turn when Ollama has the model loaded with too small a context, and the
 * warning after a turn whose prompt Ollama cut, on its first request or a later one.
 */
import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { OllamaEmulator, Reply } from "../support/emulator/emulator.ts";
import { field, startServer, tempDir, type TestServer } from "../support/harness.ts";
import { startScene } from "../support/scene.ts";

const WAIT = 150;
const CALL = { timeoutMs: 200_000 };
const SIX = ["Bash", "Edit", "Glob", "Grep", "Read", "Write"];
/** Claude Code's full harness (claudeHarness "full"), whose prompt is 5-7k tokens. */
const FULL = { OLLAMA_MCP_CLAUDE_HARNESS: "full" };

/** The built-in tools a request offered, sorted, without Claude Code's placeholder entry. */
function toolNames(body: unknown): string[] {
  const tools = (body as { tools?: { name?: string }[] }).tools ?? [];
  return tools.map((t) => t.name ?? "").filter((n) => n !== "DeferredToolPlaceholder").sort();
}

async function withServer(
  emu: OllamaEmulator,
  fn: (server: TestServer) => Promise<void>,
  env: Record<string, string> = {},
): Promise<void> {
  await using server = await startServer({ baseUrl: emu.url, env });
  await fn(server);
}

/** Loads the model as `ollama run` would (no num_ctx): it gets the server's context. */
async function load(emu: OllamaEmulator, model: string): Promise<void> {
  const res = await fetch(`${emu.url}/api/generate`, {
    method: "POST",
    body: JSON.stringify({ model }),
  });
  assert.equal(res.status, 200);
  await res.body?.cancel();
}

Deno.test("full claude harness: the first request stays under 6,000 tokens with the default tools", async () => {
  await using scene = await startScene({
    emulator: { models: [{ name: "qwen3:8b" }] },
    server: false,
  });
  await withServer(scene.emulator, async (server) => {
    const reply = await server.call("delegate_start", {
      prompt: "@reply done",
      model: "qwen3:8b",
      cwd: tempDir("od-ctx-"),
      wait_seconds: WAIT,
    }, CALL);
    assert.equal(field(reply.text, "state"), "completed", reply.text);
    const first = scene.emulator.messageRequests()[0];
    assert.ok(first, "Claude Code sent a request");
    const tokens = Math.ceil(first.bodyText.length / 4);
    // Claude Code 2.1.332 sends about 12.3k with its whole tool set, 5.3k with these six.
    assert.ok(tokens < 6_000, `first request is ${tokens} tokens (chars/4)`);
    assert.deepEqual(toolNames(first.json), SIX);
    // Its sandbox, on where bubblewrap is, describes itself in about 1.9k more: measured by
    // bench/first_request_bench.ts, off here so that this measures the tools.
  }, { ...FULL, OLLAMA_MCP_SANDBOX: "off" });
});

Deno.test("claude engine: allowed_tools narrows the tools and never widens them", async () => {
  await using scene = await startScene({
    emulator: { models: [{ name: "qwen3:8b" }] },
    server: false,
  });
  await withServer(scene.emulator, async (server) => {
    const narrowed = await server.call("delegate_start", {
      prompt: "@reply narrowed",
      model: "qwen3:8b",
      cwd: tempDir("od-ctx-"),
      allowed_tools: ["Bash(git status)", "Read", "WebFetch", "Agent"],
      disallowed_tools: ["Read"],
      wait_seconds: WAIT,
    }, CALL);
    assert.equal(field(narrowed.text, "state"), "completed", narrowed.text);
    assert.deepEqual(toolNames(scene.emulator.messageRequests().at(-1)!.json), ["Bash"]);
  }, { ...FULL, OLLAMA_MCP_CLAUDE_TOOLS: "Bash,Read,Grep" });
});

Deno.test("claude engine: read-only permission modes still refuse a write, lean and full", async () => {
  await using scene = await startScene({
    emulator: { models: [{ name: "qwen3:8b" }] },
    server: false,
  });
  for (const [harness, tools] of [["lean", ["Bash", "Edit", "Read"]], ["full", SIX]] as const) {
    await withServer(scene.emulator, async (server) => {
      for (const mode of ["plan", "dontAsk", "manual"]) {
        const work = tempDir("od-ctx-");
        const reply = await server.call("delegate_start", {
          prompt: "@bash touch written-by-delegate\nplease",
          model: "qwen3:8b",
          cwd: work,
          permission_mode: mode,
          wait_seconds: WAIT,
        }, CALL);
        assert.equal(field(reply.text, "state"), "completed", `${mode}: ${reply.text}`);
        assert.equal(existsSync(join(work, "written-by-delegate")), false, mode);
        assert.match(field(reply.text, "denied") ?? "", /^1: Bash/, `${mode}: ${reply.text}`);
        assert.deepEqual(toolNames(scene.emulator.messageRequests().at(-1)!.json), tools, mode);
      }
    }, { OLLAMA_MCP_CLAUDE_HARNESS: harness });
  }
});

Deno.test("claude context: with the full harness, a model loaded with a 4096 context is refused before Claude Code starts", async () => {
  await using scene = await startScene({
    emulator: { contextMode: "real", models: [{ name: "qwen3:8b" }] },
    server: false,
  });
  await load(scene.emulator, "qwen3:8b");
  assert.equal(scene.emulator.loadedModels().models[0]?.context_length, 4096);
  await withServer(scene.emulator, async (server) => {
    const reply = await server.call("delegate_start", {
      prompt: "@reply should never run",
      model: "qwen3:8b",
      cwd: tempDir("od-ctx-"),
      wait_seconds: WAIT,
    }, CALL);
    assert.equal(field(reply.text, "state"), "failed", reply.text);
    const error = field(reply.text, "error") ?? "";
    assert.match(error, /^context_overflow: Cannot start the claude engine with qwen3:8b/);
    assert.match(error, /loaded with a context of 4,096 tokens/);
    assert.match(error, /every request Claude Code sends is about [\d,]+ tokens/);
    assert.match(error, /OLLAMA_CONTEXT_LENGTH=32768/);
    assert.match(error, /ollama-delegate models derive qwen3:8b --ctx 32768/);
    assert.match(error, /engine: "native"/);
    assert.equal(scene.emulator.messageRequests().length, 0, "Claude Code never reached the model");
  }, FULL);
});

/** A job on a model Ollama loads with 4096 on its first request: the prompt is cut. */
async function assertCutJob(emu: OllamaEmulator, loadedAfter: boolean): Promise<void> {
  // The full harness: the lean one's requests fit 4096 (see the test below).
  await withServer(emu, async (server) => {
    const reply = await server.call("delegate_start", {
      prompt: "@reply the task arrived",
      model: "qwen3:8b",
      cwd: tempDir("od-ctx-"),
      wait_seconds: WAIT,
    }, CALL);
    const cut = emu.contextRecords.filter((r) => r.path === "/v1/messages" && r.truncated);
    assert.ok(
      cut.length >= 1,
      `the emulator cut the prompt: ${JSON.stringify(emu.contextRecords)}`,
    );
    assert.equal(emu.loadedModels().models.length, loadedAfter ? 1 : 0);
    assert.notEqual(field(reply.text, "state"), "completed", reply.text);
    assert.equal(field(reply.text, "state"), "failed", reply.text);
    const warning = field(reply.text, "warning") ?? "";
    assert.match(warning, /^Ollama cut the prompt: /, reply.text);
    if (loadedAfter) assert.match(warning, /qwen3:8b is loaded with a context of 4,096 tokens/);
    assert.match(warning, /every request of this engine is about [\d,]+ tokens/);
    assert.match(warning, /OLLAMA_CONTEXT_LENGTH=\d+/);
    assert.match(warning, /models derive qwen3:8b --ctx \d+/);
    assert.match(warning, /engine: "native"/);
    assert.match(field(reply.text, "error") ?? "", /^context_overflow: /);
    const id = field(reply.text, "job_id")!;
    for (const tool of ["delegate_status", "delegate_result"]) {
      const again = await server.call(tool, { job_id: id }, CALL);
      assert.equal(field(again.text, "warning"), warning, `${tool}: ${again.text}`);
      assert.equal(field(again.text, "state"), "failed", `${tool}: ${again.text}`);
    }
    const result = await server.call("delegate_result", { job_id: id }, CALL);
    assert.equal(result.isError, true, "a cut job is not a success");
    // What the model said is still there, marked as partial.
    assert.match(result.text, /--- partial output ---/);
  }, FULL);
}

Deno.test("claude context: a prompt Ollama cut on first load leaves a warning and a failed job", async () => {
  await using scene = await startScene({
    emulator: { contextMode: "real", models: [{ name: "qwen3:8b" }] },
    server: false,
  });
  assert.equal(scene.emulator.loadedModels().models.length, 0);
  await assertCutJob(scene.emulator, true);
});

Deno.test("claude context: the cut is seen from the reported tokens when the model is unloaded after", async () => {
  // keep_alive 0: /api/ps lists nothing after the turn, so only Ollama's usage report tells.
  await using scene = await startScene({
    emulator: {
      contextMode: "real",
      keepAlive: 0,
      models: [{ name: "qwen3:8b" }],
    },
    server: false,
  });
  await assertCutJob(scene.emulator, false);
});

Deno.test("claude context: a lean turn whose second request Ollama cut (a 33 KB file read on a 4,096 context) fails with the warning", async () => {
  const work = tempDir("od-ctx-");
  // About 33 KB in 1,500 lines (Claude Code's Read gives up to 2,000): some 10k tokens.
  const lines = Array.from({ length: 1_500 }, (_, i) => `line ${i} of the log: ok`);
  writeFileSync(join(work, "big.log"), `${lines.join("\n")}\n`);
  await using scene = await startScene({
    emulator: {
      contextMode: "real",
      models: [{ name: "qwen3:8b" }],
      script: (req): Reply | undefined => {
        if (req.tools.length === 0) return undefined;
        if (!req.firstUserText.includes("BEGIN-TASK")) {
          // The task and the system prompt are gone: only the file's tail is left to answer.
          return { kind: "text", text: `the log ends with ${req.firstUserText.slice(-30)}` };
        }
        if (req.lastToolResult !== undefined) return { kind: "text", text: "read it all" };
        return { kind: "tool_use", name: "Read", input: { file_path: join(work, "big.log") } };
      },
    },
    server: false,
  });
  await load(scene.emulator, "qwen3:8b");
  await withServer(scene.emulator, async (server) => {
    const reply = await server.call("delegate_start", {
      prompt: "BEGIN-TASK summarise big.log",
      model: "qwen3:8b",
      cwd: work,
      wait_seconds: WAIT,
    }, CALL);
    const records = scene.emulator.contextRecords.filter((r) => r.path === "/v1/messages");
    assert.equal(records.length, 2, JSON.stringify(records));
    assert.equal(records[0]!.truncated, false, "the first request fits");
    assert.equal(records[1]!.truncated, true, "the second request was cut");
    assert.ok(records[1]!.estimatedTokens > 10_000, `${records[1]!.estimatedTokens} tokens`);
    assert.equal(field(reply.text, "state"), "failed", reply.text);
    const warning = field(reply.text, "warning") ?? "";
    assert.match(
      warning,
      /^Ollama cut the prompt: qwen3:8b is loaded with a context of 4,096 tokens; Ollama reported reading about [\d,]+ input tokens of request 2 of 2, which carried about [\d,]+ tokens: every request of this engine is about [\d,]+ tokens/,
      reply.text,
    );
    assert.match(warning, /OLLAMA_CONTEXT_LENGTH=32768/);
    assert.match(warning, /engine: "native"/);
    assert.match(field(reply.text, "error") ?? "", /^context_overflow: /);
    const result = await server.call("delegate_result", {
      job_id: field(reply.text, "job_id")!,
    }, CALL);
    assert.equal(result.isError, true, "a cut job is not a success");
    assert.match(result.text, /--- partial output ---[\s\S]*the log ends with/);
  });
});

Deno.test("claude context: no refusal and no warning when the context holds the requests", async () => {
  const setups = [
    { what: "OLLAMA_CONTEXT_LENGTH, model loaded", serverContextLength: 32_768, preload: true },
    { what: "Modelfile num_ctx, not loaded", numCtx: 32_768, preload: false },
  ];
  for (const setup of setups) {
    await using scene = await startScene({
      emulator: {
        contextMode: "real",
        ...(setup.serverContextLength ? { serverContextLength: setup.serverContextLength } : {}),
        models: [{ name: "qwen3:8b", ...(setup.numCtx ? { numCtx: setup.numCtx } : {}) }],
      },
      server: false,
    });
    if (setup.preload) await load(scene.emulator, "qwen3:8b");
    await withServer(scene.emulator, async (server) => {
      const reply = await server.call("delegate_start", {
        prompt: "@reply the task arrived",
        model: "qwen3:8b",
        cwd: tempDir("od-ctx-"),
        wait_seconds: WAIT,
      }, CALL);
      assert.equal(field(reply.text, "state"), "completed", `${setup.what}: ${reply.text}`);
      assert.equal(field(reply.text, "warning"), undefined, `${setup.what}: ${reply.text}`);
      assert.equal(scene.emulator.contextRecords.some((r) => r.truncated), false, setup.what);
      assert.equal(scene.emulator.loadedModels().models[0]?.context_length, 32_768, setup.what);
      const result = await server.call("delegate_result", {
        job_id: field(reply.text, "job_id")!,
      }, CALL);
      assert.match(result.text, /the task arrived/, setup.what);
    });
  }
});

Deno.test("lean claude engine (default): one request is at most 1,500 tokens with Claude Code's sandbox on, and a one-line task completes on a model loaded with 4,096", async () => {
  await using scene = await startScene({
    emulator: { contextMode: "real", models: [{ name: "qwen3:8b" }] },
    server: false,
  });
  await load(scene.emulator, "qwen3:8b");
  assert.equal(scene.emulator.loadedModels().models[0]?.context_length, 4096);
  await withServer(scene.emulator, async (server) => {
    const work = tempDir("od-ctx-");
    const reply = await server.call("delegate_start", {
      prompt: "@bash echo hello > hello.txt\nWrite hello.txt",
      model: "qwen3:8b",
      cwd: work,
      allowed_tools: ["Bash"],
      wait_seconds: WAIT,
    }, CALL);
    assert.equal(field(reply.text, "state"), "completed", reply.text);
    assert.equal(field(reply.text, "warning"), undefined, reply.text);
    assert.ok(existsSync(join(work, "hello.txt")), "the command ran");
    const records = scene.emulator.contextRecords.filter((r) => r.path === "/v1/messages");
    assert.ok(records.length >= 2, "a tool round trip and an answer");
    assert.equal(records.some((r) => r.truncated), false, JSON.stringify(records));
    // Every request, prompt as the emulator counts it (chars/4 of system, messages, tools).
    for (const r of records) assert.ok(r.estimatedTokens <= 1_500, `${r.estimatedTokens} tokens`);
    const first = scene.emulator.messageRequests()[0]!;
    assert.deepEqual(toolNames(first.json), ["Bash"]);
    assert.match(JSON.stringify((first.json as { system?: unknown }).system), /You are a delegate/);
  });
});

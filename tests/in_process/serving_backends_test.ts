/**
 * Both engines on a named backend of kind anthropic, the way users outgrow one Ollama: a
 * vLLM (its `/v1/messages`) behind an API key, emulated as vLLM answers (serving_flavours.ts).
 * The claude engine runs the real Claude Code CLI in its jail there; the key reaches the
 * backend and never the delegate (the relay holds it); the native engine chats over the same
 * Messages API; an engine that cannot speak a backend's API is refused with what to do.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import type { MessagesRequestView, Reply } from "../support/emulator/emulator.ts";
import { field } from "../support/harness.ts";
import { startInProcessScene } from "../support/in_process_scene.ts";

const linux = process.platform === "linux";
const MODEL = "Qwen/Qwen3-Coder-30B-A3B-Instruct";
const KEY = "sk-vllm-0123456789abcdef-never-in-the-jail";
const LONG = { timeoutMs: 200_000 };

/**
 * Everything a delegate's command can read of the processes around it: its environment and
 * every command line and environment in its pid namespace (Claude Code's own included).
 */
const SNOOP = "{ env; for f in /proc/[0-9]*/cmdline /proc/[0-9]*/environ; do " +
  "tr '\\0' '\\n' < \"$f\"; done; } > snooped.txt 2>/dev/null; echo SNOOPED";

function snooper(req: MessagesRequestView): Reply {
  if (req.lastToolResult !== undefined) return { kind: "text", text: "looked around" };
  return { kind: "tool_use", name: "Bash", input: { command: SNOOP } };
}

const vllmBackend = (url: string) => ({
  backends: { vllm: { url, kind: "anthropic", apiKeyEnv: "VLLM_KEY" } },
});

Deno.test({
  name: "claude engine on an Anthropic-compatible backend: the key reaches vLLM, never the jail",
  ignore: !linux,
  async fn() {
    await using scene = await startInProcessScene({
      emulator: {
        flavour: "vllm",
        apiKey: KEY,
        models: [{ name: MODEL, contextLength: 65536 }],
        script: snooper,
      },
      server: false,
    });
    await scene.startServer({
      userConfig: vllmBackend(scene.emulator.url),
      env: { VLLM_KEY: KEY },
      // No Ollama anywhere: nothing of the job may need one.
      baseUrl: "http://127.0.0.1:9",
    });
    const reply = await scene.call("delegate_start", {
      engine: "claude",
      backend: "vllm",
      model: MODEL,
      prompt: "look around",
      allowed_tools: ["Bash"],
      wait_seconds: 150,
    }, LONG);
    assert.equal(reply.isError, false, reply.text);
    assert.equal(field(reply.text, "state"), "completed", reply.text);
    assert.equal(field(reply.text, "engine"), "claude (backend vllm)");
    assert.match(reply.text, /looked around/);

    const sent = scene.emulator.messageRequests();
    assert.ok(sent.length >= 2, `${sent.length} request(s)`);
    // Every request reached vLLM with its key, and nothing asked for Ollama's API.
    for (const r of sent) assert.equal(r.headers.authorization, `Bearer ${KEY}`);
    assert.deepEqual(scene.emulator.requests.filter((r) => r.path.startsWith("/api/")), []);

    // The command ran and read its environment and every process's: no key there.
    assert.ok(sent.some((r) => r.bodyText.includes("SNOOPED")), "the command ran");
    const seen = readFileSync(join(scene.cwd, "snooped.txt"), "utf8");
    assert.match(seen, /--settings=/, "Claude Code's command line was readable");
    assert.ok(!seen.includes(KEY), "the backend's key was readable inside the jail");
    assert.match(seen, /ANTHROPIC_BASE_URL=http:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{64}/);
  },
});

Deno.test({
  name: "native engine on an Anthropic-compatible backend: a tool round over /v1/messages",
  ignore: !linux,
  async fn() {
    await using scene = await startInProcessScene({
      emulator: { flavour: "vllm", apiKey: KEY, models: [{ name: MODEL, contextLength: 65536 }] },
      server: false,
    });
    await scene.startServer({
      userConfig: vllmBackend(scene.emulator.url),
      env: { VLLM_KEY: KEY },
    });
    const reply = await scene.call("delegate_start", {
      engine: "native",
      backend: "vllm",
      model: MODEL,
      prompt: "@bash echo from-the-sandbox",
      allowed_tools: ["Bash"],
      wait_seconds: 90,
    }, LONG);
    assert.equal(field(reply.text, "state"), "completed", reply.text);
    assert.equal(field(reply.text, "commands"), "1 run: echo from-the-sandbox (exit 0)");
    assert.match(reply.text, /tool result: exit code 0 \(\S+\)\nfrom-the-sandbox/);
    const sent = scene.emulator.messageRequests();
    assert.equal(sent.length, 2);
    for (const r of sent) assert.equal(r.headers.authorization, `Bearer ${KEY}`);
    assert.equal(scene.emulator.chatRequests().length, 0);
  },
});

Deno.test({
  name: "claude engine on an OpenAI-only backend: refused before it starts, with what to do",
  async fn() {
    await using scene = await startInProcessScene({ server: false });
    await scene.startServer({
      userConfig: { backends: { lms: { url: scene.emulator.url, kind: "openai" } } },
    });
    const reply = await scene.call("delegate_start", {
      engine: "claude",
      backend: "lms",
      model: "qwen3:8b",
      prompt: "hi",
    });
    assert.equal(reply.isError, true);
    assert.match(
      reply.text,
      /the claude engine needs a backend that serves Anthropic's Messages API \(kind ollama or anthropic\), and backend "lms" is of kind openai/,
    );
    assert.equal(scene.emulator.messageRequests().length, 0);
  },
});

Deno.test({
  name:
    "claude engine on a vLLM that serves too small a context: refused before it starts, in vLLM's terms",
  ignore: !linux,
  async fn() {
    await using scene = await startInProcessScene({
      emulator: { flavour: "vllm", models: [{ name: MODEL, contextLength: 1024 }] },
      server: false,
    });
    await scene.startServer({
      userConfig: { backends: { vllm: { url: scene.emulator.url, kind: "anthropic" } } },
      baseUrl: "http://127.0.0.1:9",
    });
    const reply = await scene.call("delegate_start", {
      engine: "claude",
      backend: "vllm",
      model: MODEL,
      prompt: "hi",
      wait_seconds: 60,
    }, LONG);
    assert.equal(field(reply.text, "state"), "failed", reply.text);
    assert.match(
      reply.text,
      /context_overflow: Cannot start the claude engine with .*: backend "vllm" at http:\/\/127\.0\.0\.1:\d+ serves it with a context of 1,024 tokens/,
    );
    assert.match(reply.text, /vLLM --max-model-len \d+/);
    assert.doesNotMatch(reply.text, /OLLAMA_CONTEXT_LENGTH/);
    assert.equal(scene.emulator.messageRequests().length, 0);
  },
});

/** The job's record and its ledger line, as the server wrote them. */
function recordAndLedger(stateDir: string, id: string) {
  const record = JSON.parse(readFileSync(join(stateDir, id, "job.json"), "utf8"));
  const ledger = readFileSync(join(stateDir, "ledger.jsonl"), "utf8").trim().split("\n")
    .map((l) => JSON.parse(l));
  return { record, line: ledger.find((e) => e.job === id) };
}

Deno.test({
  name: "defaultBackend: a claude job that names no backend runs on the named vLLM (issue 33)",
  ignore: !linux,
  async fn() {
    await using scene = await startInProcessScene({
      emulator: {
        flavour: "vllm",
        apiKey: KEY,
        models: [{ name: MODEL, contextLength: 65536 }],
        script: () => ({ kind: "text", text: "answered by vllm" }),
      },
      server: false,
    });
    await scene.startServer({
      userConfig: {
        ...vllmBackend(scene.emulator.url),
        defaultBackend: "vllm",
        defaultModel: MODEL,
      },
      env: { VLLM_KEY: KEY },
      // No Ollama anywhere: a job that went to the Ollama at baseUrl would fail.
      baseUrl: "http://127.0.0.1:9",
    });
    const reply = await scene.call("delegate_start", {
      engine: "claude",
      prompt: "say something",
      wait_seconds: 150,
    }, LONG);
    assert.equal(field(reply.text, "state"), "completed", reply.text);
    assert.equal(field(reply.text, "engine"), "claude (backend vllm)");
    assert.match(reply.text, /answered by vllm/);
    const sent = scene.emulator.messageRequests();
    assert.ok(sent.length >= 1);
    for (const r of sent) {
      assert.equal(r.headers.authorization, `Bearer ${KEY}`);
      assert.equal(JSON.parse(r.bodyText).model, MODEL, "the defaultModel, asked of vLLM");
    }
    const { record, line } = recordAndLedger(scene.stateDir, field(reply.text, "job_id")!);
    assert.equal(record.backend, "vllm");
    assert.equal(line?.backend, "vllm");
  },
});

Deno.test({
  name: "defaultBackend of kind openai: a claude job without backend is refused as backend: is",
  async fn() {
    await using scene = await startInProcessScene({ server: false });
    await scene.startServer({
      userConfig: {
        backends: { lms: { url: scene.emulator.url, kind: "openai" } },
        defaultBackend: "lms",
        defaultModel: "qwen3:8b",
      },
    });
    const reply = await scene.call("delegate_start", { engine: "claude", prompt: "hi" });
    assert.equal(reply.isError, true);
    assert.match(
      reply.text,
      /the claude engine needs a backend that serves Anthropic's Messages API \(kind ollama or anthropic\), and backend "lms" is of kind openai/,
    );
    assert.equal(scene.emulator.messageRequests().length, 0);
    assert.equal(scene.emulator.nativeChatRequests().length, 0);
  },
});

Deno.test({
  name: "defaultBackend: a native job that names no backend runs on the named OpenAI server",
  ignore: !linux,
  async fn() {
    await using scene = await startInProcessScene({
      emulator: { flavour: "vllm", apiKey: KEY, models: [{ name: MODEL, contextLength: 65536 }] },
      server: false,
    });
    await scene.startServer({
      userConfig: {
        backends: { lms: { url: scene.emulator.url, kind: "openai", apiKeyEnv: "VLLM_KEY" } },
        defaultBackend: "lms",
        defaultModel: MODEL,
      },
      env: { VLLM_KEY: KEY },
      baseUrl: "http://127.0.0.1:9",
    });
    const reply = await scene.call("delegate_start", {
      engine: "native",
      prompt: "@bash echo on-the-default\n@reply done",
      allowed_tools: ["Bash"],
      wait_seconds: 90,
    }, LONG);
    assert.equal(field(reply.text, "state"), "completed", reply.text);
    assert.equal(field(reply.text, "engine"), "native (backend lms)");
    assert.equal(field(reply.text, "commands"), "1 run: echo on-the-default (exit 0)");
    const sent = scene.emulator.chatRequests();
    assert.equal(sent.length, 2);
    for (const r of sent) {
      assert.equal(r.headers.authorization, `Bearer ${KEY}`);
      assert.equal(JSON.parse(r.bodyText).model, MODEL);
    }
    assert.equal(scene.emulator.nativeChatRequests().length, 0);
    const { record, line } = recordAndLedger(scene.stateDir, field(reply.text, "job_id")!);
    assert.equal(record.backend, "lms");
    assert.equal(line?.backend, "lms");

    // ollama_models says where jobs that name no backend go.
    const models = await scene.call("ollama_models", {});
    assert.match(
      models.text,
      /^Default backend: {2}lms {2}http:\/\/127\.0\.0\.1:\d+ {2}\[openai\] {2}\(defaultBackend: jobs that name no backend run there\)$/m,
    );
    assert.match(models.text, /^Default model: {4}Qwen\/Qwen3-Coder-30B-A3B-Instruct$/m);
  },
});

/**
 * The anthropic backend kind against emulated serving engines that answer as vLLM, llama.cpp's
 * llama-server and a LiteLLM proxy do (tests/support/serving_flavours.ts): chat over the
 * Messages API with tool calls both ways, the key sent only to its endpoint, what each server
 * says about its models and their context, and its errors in its own words.
 */
import assert from "node:assert/strict";
import { anthropicBackend } from "../../../src/backends/anthropic/kind.ts";
import { messagesBody } from "../../../src/backends/anthropic/chat.ts";
import { ChatHttpError } from "../../../src/backends/chat_types.ts";
import { startOllamaEmulator } from "../../support/emulator/emulator.ts";

const MODEL = "Qwen/Qwen3-Coder-30B-A3B-Instruct";
const ABORT = new AbortController().signal;

Deno.test("messages: a tool call and its result make a Messages conversation and back", async () => {
  await using emu = await disposable(
    startOllamaEmulator({
      flavour: "vllm",
      apiKey: "sk-vllm",
      models: [{ name: MODEL, contextLength: 65536 }],
    }),
  );
  const client = anthropicBackend({ url: emu.url, apiKey: "sk-vllm", label: 'backend "v"' })
    .chat({ session: { id: "11111111-2222-3333-4444-555555555555" } });
  const tools = [{
    type: "function" as const,
    function: { name: "Bash", description: "run", parameters: { type: "object" } },
  }];
  const first = await client.complete({
    model: MODEL,
    messages: [{ role: "system", content: "be brief" }, {
      role: "user",
      content: "@bash echo hi",
    }],
    tools,
  }, ABORT);
  assert.equal(first.toolCalls.length, 1, JSON.stringify(first));
  assert.equal(first.toolCalls[0]!.function.name, "Bash");
  assert.deepEqual(JSON.parse(first.toolCalls[0]!.function.arguments).command, "echo hi");
  assert.equal(first.finishReason, "tool_calls");
  assert.ok(first.usage && first.usage.promptTokens > 0 && first.usage.completionTokens > 0);

  const second = await client.complete({
    model: MODEL,
    messages: [
      { role: "system", content: "be brief" },
      { role: "user", content: "@bash echo hi" },
      { role: "assistant", content: null, tool_calls: first.toolCalls },
      { role: "tool", tool_call_id: first.toolCalls[0]!.id, content: "hi" },
    ],
    tools,
  }, ABORT);
  assert.equal(second.content, "tool result: hi");
  assert.equal(second.finishReason, "stop");

  const sent = emu.messageRequests();
  assert.equal(sent.length, 2);
  const body = sent[1]!.json as Record<string, unknown>;
  assert.equal(body.system, "be brief");
  assert.deepEqual(
    (body.messages as Array<{ role: string }>).map((m) => m.role),
    ["user", "assistant", "user"],
  );
  // The key both ways Messages servers read one, and the session the ways gateways do.
  for (const r of sent) {
    assert.equal(r.headers.authorization, "Bearer sk-vllm");
    assert.equal(r.headers["x-api-key"], "sk-vllm");
    assert.equal(r.headers["x-dynamo-session-id"], "11111111-2222-3333-4444-555555555555");
    assert.deepEqual((r.json as { metadata?: unknown }).metadata, {
      user_id: "11111111-2222-3333-4444-555555555555",
    });
  }
});

Deno.test("messages: tool results in a row and a user message after them are one user turn", () => {
  const { system, messages } = messagesBody([
    { role: "system", content: "a" },
    { role: "system", content: "b" },
    { role: "user", content: "go" },
    {
      role: "assistant",
      content: "two calls",
      tool_calls: [
        { id: "c1", type: "function", function: { name: "Read", arguments: '{"file_path":"x"}' } },
        { id: "c2", type: "function", function: { name: "Bash", arguments: "not json" } },
      ],
    },
    { role: "tool", tool_call_id: "c1", content: "x" },
    { role: "tool", tool_call_id: "c2", content: "y" },
    { role: "user", content: "and now?" },
  ]);
  assert.equal(system, "a\n\nb");
  assert.equal(messages.length, 3);
  assert.deepEqual(messages[1], {
    role: "assistant",
    content: [
      { type: "text", text: "two calls" },
      { type: "tool_use", id: "c1", name: "Read", input: { file_path: "x" } },
      { type: "tool_use", id: "c2", name: "Bash", input: {} },
    ],
  });
  assert.deepEqual(messages[2], {
    role: "user",
    content: [
      { type: "tool_result", tool_use_id: "c1", content: "x" },
      { type: "tool_result", tool_use_id: "c2", content: "y" },
      { type: "text", text: "and now?" },
    ],
  });
});

Deno.test("anthropic kind: what vLLM, llama-server and LiteLLM say of their models and context", async () => {
  await using vllm = await disposable(
    startOllamaEmulator({ flavour: "vllm", models: [{ name: MODEL, contextLength: 40960 }] }),
  );
  await using llama = await disposable(
    startOllamaEmulator({
      flavour: "llamacpp",
      models: [{ name: "qwen3-coder", contextLength: 16384 }],
    }),
  );
  await using lite = await disposable(
    startOllamaEmulator({ flavour: "litellm", apiKey: "sk-lite", models: [{ name: "coder" }] }),
  );
  const at = (url: string, apiKey?: string) =>
    anthropicBackend({ url, label: "b", ...(apiKey ? { apiKey } : {}) });

  assert.deepEqual(await at(vllm.url).models(2000), [MODEL]);
  assert.equal((await at(vllm.url).connect(MODEL, {})).model?.contextLength, 40960);
  // No Ollama API there: the kind never asks for it.
  assert.equal(vllm.requests.filter((r) => r.path.startsWith("/api/")).length, 0);

  // llama-server lists its training context; the one it runs with is in /props, whatever
  // name a request gives.
  assert.equal((await at(llama.url).connect("anything", {})).model?.contextLength, 16384);

  const denied = await at(lite.url).identify(2000);
  assert.equal(denied.ok, false);
  assert.equal(!denied.ok && denied.rejected, true);
  assert.match(denied.summary, /HTTP 401: Authentication Error/);
  const ok = await at(lite.url, "sk-lite").identify(2000);
  assert.equal(ok.ok, true, JSON.stringify(ok));
  // LiteLLM does not say the context: unknown, not guessed.
  assert.equal((await at(lite.url, "sk-lite").connect("coder", {})).model, undefined);
});

Deno.test("anthropic kind: a server's refusal is its own words, not retried", async () => {
  await using emu = await disposable(
    startOllamaEmulator({ flavour: "vllm", noToolChoice: true, models: [{ name: MODEL }] }),
  );
  const client = anthropicBackend({ url: emu.url, label: 'backend "v"' }).chat({});
  const missing = await client.complete({
    model: "nope",
    messages: [{ role: "user", content: "hi" }],
  }, ABORT).catch((e) => e);
  assert.ok(missing instanceof ChatHttpError, String(missing));
  assert.equal(missing.status, 404);
  assert.equal(missing.detail, "The model `nope` does not exist.");
  const tools = await client.complete({
    model: MODEL,
    messages: [{ role: "user", content: "hi" }],
    tools: [{ type: "function", function: { name: "Bash", description: "", parameters: {} } }],
  }, ABORT).catch((e) => e);
  assert.ok(tools instanceof ChatHttpError);
  assert.match(tools.detail, /--enable-auto-tool-choice/);
  assert.equal(emu.messageRequests().length, 2, "a 4xx is not retried");
});

async function disposable<T extends { close(): Promise<void> }>(
  started: Promise<T>,
): Promise<T & AsyncDisposable> {
  const value = await started;
  return Object.assign(value, { [Symbol.asyncDispose]: () => value.close() });
}

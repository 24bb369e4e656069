/**
 * Job error texts for each way a backend fails, from the errors the chat clients really raise
 * against a hostile backend: each starts with a status word the orchestrator can act on, and
 * only a failed connection says "Cannot reach".
 */
import assert from "node:assert/strict";
import { BackendReplyError } from "../../../src/backends/bounded.ts";
import { ChatHttpError } from "../../../src/backends/chat_types.ts";
import { OllamaChatClient } from "../../../src/backends/ollama/chat.ts";
import { ChatClient } from "../../../src/backends/openai/chat.ts";
import { endpointError, missingKeyError, wordOf } from "../../../src/engines/native/failures.ts";
import { unknownBackendError } from "../../../src/engines/backend_failures.ts";
import type { BackendNaming } from "../../../src/engines/native/failures.ts";
import { type HostileMode, startHostileBackend } from "../../support/hostile_backend.ts";

const MiB = 1024 * 1024;

async function errorOf(client: OllamaChatClient | ChatClient): Promise<unknown> {
  try {
    await client.complete(
      { model: "m:1", messages: [{ role: "user", content: "go" }] },
      new AbortController().signal,
    );
  } catch (e) {
    return e;
  }
  assert.fail("the request did not fail");
}

/**
 * The job error for one mode, on the default Ollama (over Ollama's own API, as the engine
 * speaks to it) and on a named OpenAI-compatible backend.
 */
async function texts(mode: HostileMode): Promise<{ ollama: string; named: string }> {
  const hostile = await startHostileBackend({ mode, floodBytes: 64 * MiB });
  try {
    const options = { baseUrl: hostile.url, label: "x", backoffMs: () => 10 };
    const ollama: BackendNaming = { name: "ollama", url: hostile.url, kind: "ollama" };
    const named: BackendNaming = { name: "lab", url: hostile.url, kind: "openai" };
    return {
      ollama: endpointError(await errorOf(new OllamaChatClient(options)), ollama, "m:1"),
      named: endpointError(await errorOf(new ChatClient(options)), named, "m:1"),
    };
  } finally {
    await hostile.close();
  }
}

Deno.test("failures: unreachable is the only 'Cannot reach', with the start hint for Ollama", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const url = `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`;
  listener.close();
  const client = new ChatClient({ baseUrl: url, label: "x", backoffMs: () => 1 });
  const error = await client.complete({ model: "m:1", messages: [] }, new AbortController().signal)
    .catch((e) => e);
  const text = endpointError(error, { name: "ollama", url, kind: "ollama" }, "m:1");
  assert.match(
    text,
    /^backend_unreachable: Cannot reach Ollama at http:\/\/127\.0\.0\.1:\d+: connection failed \(.+\)\. Start it with "ollama serve"/,
  );
});

Deno.test("failures: an over-cap reply names the backend, the model and the cap", async () => {
  const { ollama, named } = await texts("content");
  assert.match(
    named,
    /^backend_protocol_error: Stopped reading backend "lab" \(http:\/\/127\.0\.0\.1:\d+\): for "m:1" it sent over 4,000,000 characters of text in one reply \(the cap\)\. The model may be stuck/,
  );
  // Over Ollama's API the flood is not NDJSON: a protocol error as well.
  assert.match(ollama, /^backend_protocol_error: /);
});

Deno.test("failures: a reply that is not a chat stream says so, for the API the backend speaks", async () => {
  const { ollama, named } = await texts("html");
  assert.match(
    ollama,
    /^backend_protocol_error: Ollama at .* did not answer "m:1" with an Ollama chat stream: .*\. Check that baseUrl points at Ollama itself/,
  );
  assert.match(
    named,
    /^backend_protocol_error: backend "lab" .* did not answer "m:1" with an OpenAI-compatible chat completion stream: it answered with text\/html instead of an event stream, ".*"\. Check that the URL of backend "lab" is the server's root \(without \/v1\) and that the server serves \/v1\/chat\/completions$/,
  );
  assert.doesNotMatch(ollama + named, /Cannot reach|ollama serve/);
  const ollamaNamed = endpointError(
    new BackendReplyError("protocol", "x", "x"),
    { name: "gpu", url: "http://h:11434", kind: "ollama" },
    "m:1",
  );
  assert.match(ollamaNamed, /serves \/api\/chat$/);
});

Deno.test("failures: a reply cut midway is 'broke off', after the retries", async () => {
  const { named } = await texts("cut");
  assert.match(
    named,
    /^backend_protocol_error: backend "lab" .* broke off its reply for "m:1" \(3 attempts\): the stream broke: .*check its log/,
  );
  assert.doesNotMatch(named, /Cannot reach|ollama serve/);
});

Deno.test("failures: an HTTP 500 with a huge body shows the start of it, after the retries", async () => {
  const { named } = await texts("error500");
  assert.match(
    named,
    /^backend_unreachable: backend "lab" \(.*\) failed for "m:1" \(HTTP 500: \{"error":\{"message":"x+\.\.\. \[error body over 64 KiB, not read\]\) after 3 attempts$/,
  );
});

Deno.test("failures: each HTTP status gets the word the orchestrator acts on, the text stays", () => {
  const ollama: BackendNaming = { name: "ollama", url: "http://127.0.0.1:11434", kind: "ollama" };
  const http = (status: number, detail: string) =>
    endpointError(new ChatHttpError(status, detail, detail), ollama, "m:1");
  assert.equal(
    http(401, "unauthorized"),
    'auth_failed: Ollama at http://127.0.0.1:11434 refused the request for "m:1" (HTTP 401: ' +
      'unauthorized). Cloud models need "ollama signin"',
  );
  assert.match(http(403, "forbidden"), /^auth_failed: /);
  assert.equal(
    http(404, 'model "m:1" not found'),
    'backend_refused: Ollama at http://127.0.0.1:11434 has no model "m:1" (HTTP 404: model ' +
      '"m:1" not found). Pull it with "ollama pull m:1", or pick one from ollama_models',
  );
  assert.match(http(410, "retired"), /^backend_refused: Model "m:1" was retired/);
  assert.match(
    http(400, "registry.ollama.ai/library/m:1 does not support tools"),
    /^backend_refused: Model "m:1" on Ollama .* does not support tools \(HTTP 400: .*\)\. Use a model with tool support/,
  );
  assert.match(http(422, "bad"), /^backend_refused: Ollama .* failed for "m:1" \(HTTP 422: bad\)$/);
  assert.match(http(503, "busy"), /^backend_unreachable: .*\(HTTP 503: busy\) after 3 attempts$/);
  assert.match(http(429, "slow down"), /^backend_unreachable: .* after 3 attempts$/);
  // What no chat client raised gets no word rather than a wrong one.
  assert.equal(
    endpointError(new Error("disk on fire"), ollama, "m:1"),
    "The run failed: disk on fire",
  );
  assert.equal(wordOf(new Error("x")), undefined);
});

Deno.test("failures: an unknown backend and a missing key variable are misconfigured", () => {
  assert.equal(
    unknownBackendError("nope", ["ollama", "lab"]),
    'misconfigured: Cannot run job: there is no backend "nope" (configured: ollama, lab)',
  );
  assert.equal(
    missingKeyError({ name: "lab", url: "http://h", kind: "openai", apiKeyEnv: "LAB_KEY" }),
    'misconfigured: Cannot run job: backend "lab" takes its API key from $LAB_KEY, which is ' +
      "not set in the server's environment. Set it where the MCP server is started (e.g. " +
      "claude mcp add ... -e LAB_KEY=...)",
  );
});

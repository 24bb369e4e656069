/**
 * Job error texts for each way a backend fails, from the errors ChatClient really raises
 * against a hostile backend: only a failed connection says "Cannot reach".
 */
import assert from "node:assert/strict";
import { ChatClient } from "../../../src/backends/openai.ts";
import { endpointError } from "../../../src/engines/native/failures.ts";
import type { ResolvedBackend } from "../../../src/engines/native/backend.ts";
import { type HostileMode, startHostileBackend } from "../../support/hostile_backend.ts";

const MiB = 1024 * 1024;

/** The job error for one mode, on the default Ollama and on a named backend. */
async function texts(mode: HostileMode): Promise<{ ollama: string; named: string }> {
  const hostile = await startHostileBackend({ mode, floodBytes: 64 * MiB });
  try {
    const client = new ChatClient({ baseUrl: hostile.url, label: "x", backoffMs: () => 10 });
    let error: unknown;
    try {
      await client.complete(
        { model: "m:1", messages: [{ role: "user", content: "go" }] },
        new AbortController().signal,
      );
    } catch (e) {
      error = e;
    }
    assert.ok(error, `${mode} failed`);
    const ollama: ResolvedBackend = { name: "ollama", url: hostile.url, kind: "ollama" };
    const named: ResolvedBackend = { name: "lab", url: hostile.url, kind: "openai" };
    return {
      ollama: endpointError(error, ollama, "m:1"),
      named: endpointError(error, named, "m:1"),
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
    /^Cannot reach Ollama at http:\/\/127\.0\.0\.1:\d+: connection failed \(.+\)\. Start it with "ollama serve"/,
  );
});

Deno.test("failures: an over-cap reply names the backend, the model and the cap", async () => {
  const { ollama, named } = await texts("content");
  assert.match(
    ollama,
    /^Stopped reading Ollama at http:\/\/127\.0\.0\.1:\d+: for "m:1" it sent over 4,000,000 characters of text in one reply \(the cap\)\. The model may be stuck/,
  );
  assert.match(named, /^Stopped reading backend "lab" \(http:\/\/127\.0\.0\.1:\d+\): for "m:1"/);
});

Deno.test("failures: a reply that is not a chat stream says so and where to look", async () => {
  const { ollama, named } = await texts("html");
  assert.match(
    ollama,
    /^Ollama at .* did not answer "m:1" with an OpenAI-compatible chat completion stream: it answered with text\/html instead of an event stream, ".*"\. Check that baseUrl points at Ollama itself/,
  );
  assert.match(named, /Check that the URL of backend "lab" is the server's root \(without \/v1\)/);
  assert.doesNotMatch(ollama + named, /Cannot reach|ollama serve/);
});

Deno.test("failures: a reply cut midway is 'broke off', after the retries", async () => {
  const { ollama } = await texts("cut");
  assert.match(
    ollama,
    /^Ollama at .* broke off its reply for "m:1" \(3 attempts\): the stream broke: .*check its log/,
  );
  assert.doesNotMatch(ollama, /Cannot reach|ollama serve/);
});

Deno.test("failures: an HTTP 500 with a huge body shows the start of it, after the retries", async () => {
  const { named } = await texts("error500");
  assert.match(
    named,
    /^backend "lab" \(.*\) failed for "m:1" \(HTTP 500: \{"error":\{"message":"x+\.\.\. \[error body over 64 KiB, not read\]\) after 3 attempts$/,
  );
});

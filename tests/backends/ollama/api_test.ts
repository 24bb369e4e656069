/** OllamaClient (`/api/*`) against a hostile backend: bodies are read under caps; the /api/show reader. */
import assert from "node:assert/strict";
import { OllamaClient, OllamaHttpError, parseShow } from "../../../src/backends/ollama/api.ts";
import { startHostileBackend } from "../../support/hostile_backend.ts";

const MiB = 1024 * 1024;

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  assert.fail("expected a rejection");
}

async function settled(requests: { cancelled: boolean; ended: boolean }[]): Promise<void> {
  const deadline = Date.now() + 5000;
  while (requests.some((r) => !r.cancelled && !r.ended) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
  }
}

Deno.test("ollama: an endless error body is read to 64 KiB and the rest dropped", async () => {
  const hostile = await startHostileBackend({ mode: "error500", floodBytes: 1024 * MiB });
  try {
    const err = await rejection(new OllamaClient(hostile.url, 30_000).tags());
    assert.ok(err instanceof OllamaHttpError, String(err));
    assert.equal(err.status, 500);
    assert.match(err.detail, /\[error body over 64 KiB, not read\]$/);
    assert.ok(err.detail.length < 1000);
    await settled(hostile.requests);
    assert.equal(hostile.requests[0]!.cancelled, true);
    assert.ok(hostile.sentBytes() < 16 * MiB, `sent ${hostile.sentBytes()}`);
  } finally {
    await hostile.close();
  }
});

Deno.test("ollama: an endless 200 answer stops at the 8 MiB cap with an error saying so", async () => {
  const hostile = await startHostileBackend({ mode: "garbage", floodBytes: 1024 * MiB });
  try {
    const err = await rejection(new OllamaClient(hostile.url, 30_000).tags());
    assert.match(
      err.message,
      /^Cannot use the answer of http:\/\/127\.0\.0\.1:\d+ to \/api\/tags: it is over 8 MiB \(the cap\), so reading stopped/,
    );
    await settled(hostile.requests);
    assert.equal(hostile.requests[0]!.cancelled, true);
    assert.ok(hostile.sentBytes() < 32 * MiB, `sent ${hostile.sentBytes()}`);
  } finally {
    await hostile.close();
  }
});

Deno.test("ollama: an answer cut midway is reported as broken off, not as unreachable", async () => {
  const hostile = await startHostileBackend({ mode: "cut" });
  try {
    const err = await rejection(new OllamaClient(hostile.url, 30_000).version());
    assert.match(
      err.message,
      /^Ollama at http:\/\/127\.0\.0\.1:\d+ broke off its answer to \/api\/version/,
    );
    assert.doesNotMatch(err.message, /Cannot reach/);
  } finally {
    await hostile.close();
  }
});

Deno.test("parseShow: the architecture's context wins, num_ctx from PARAMETER lines", () => {
  assert.deepEqual(
    parseShow({
      capabilities: ["completion", "tools"],
      model_info: {
        "clip.context_length": 2048,
        "general.architecture": "qwen3",
        "qwen3.context_length": 40_960,
      },
      parameters: 'stop   "<|im_end|>"\nnum_ctx   65536',
      details: { parent_model: "qwen3:8b" },
      remote_host: "https://ollama.com:443",
    }),
    {
      capabilities: ["completion", "tools"],
      contextLength: 40_960,
      numCtx: 65_536,
      parentModel: "qwen3:8b",
      remote: true,
    },
  );
  assert.deepEqual(parseShow({ model_info: { "llama.context_length": 8192 } }), {
    contextLength: 8192,
  });
  assert.deepEqual(parseShow({ parameters: "num_ctx 0" }), {});
  assert.deepEqual(parseShow("not json"), {});
});

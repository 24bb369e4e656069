/**
 * The one lookup of the context `/api/ps` shows a model loaded with. It replaced two copies:
 * the claude engine's (a turn refused before it starts) and the native engine's (its history
 * sized to the loaded context), and the doctor's and `models list`'s finds. Each case below
 * is one of theirs, against the emulator's `/api/ps`.
 */
import assert from "node:assert/strict";
import { loadedContext, loadedContextIn, loadedModels } from "../../src/models/loaded_context.ts";
import { startOllamaEmulator } from "../support/emulator/emulator.ts";

/** Loads `model` in the emulator with a native request that sets `num_ctx`. */
async function load(url: string, model: string, numCtx: number): Promise<void> {
  const res = await fetch(`${url}/api/chat`, {
    method: "POST",
    body: JSON.stringify({
      model,
      messages: [{ role: "user", content: "@reply ok" }],
      stream: false,
      options: { num_ctx: numCtx },
    }),
  });
  assert.equal(res.status, 200, await res.text());
}

Deno.test("loaded context: what /api/ps shows, under either form of the model's name", async () => {
  const emulator = await startOllamaEmulator({
    models: [{ name: "llama3" }, { name: "qwen3:8b" }, { name: "host:5000/ns/m" }],
  });
  try {
    await load(emulator.url, "llama3", 2048);
    await load(emulator.url, "host:5000/ns/m:latest", 8192);
    // The claude engine asks with the name the user gave, tagged or not.
    assert.equal(await loadedContext(emulator.url, "llama3", 3000), 2048);
    assert.equal(await loadedContext(emulator.url, "llama3:latest", 3000), 2048);
    // The native engine's copy knew a registry host's port is no tag.
    assert.equal(await loadedContext(emulator.url, "host:5000/ns/m", 3000), 8192);
    // A model that is installed but not loaded has no loaded context.
    assert.equal(await loadedContext(emulator.url, "qwen3:8b", 3000), undefined);
    // `models list` looks each installed model up in one answer.
    const loaded = await loadedModels(emulator.url, 3000);
    assert.equal(loadedContextIn(loaded, "llama3"), 2048);
    assert.equal(loadedContextIn(loaded, "qwen3:4b"), undefined);
    assert.equal(loadedContextIn([], "llama3"), undefined);
  } finally {
    await emulator.close();
  }
});

Deno.test("loaded context: unknown, not an error, when nothing answers /api/ps", async () => {
  // A port nothing listens on: the turn still runs, and the doctor prints "unknown".
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const url = `http://127.0.0.1:${port}`;
  assert.equal(await loadedContext(url, "llama3", 3000), undefined);
  assert.deepEqual(await loadedModels(url, 3000), []);
});

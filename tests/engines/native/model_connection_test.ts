/**
 * What a native turn learns when it connects: the context the endpoint has the model loaded
 * with. The backend kind reports what the server has loaded; which entry is the model is the
 * one name rule of settings/model_names.ts (`llama3` is `llama3:latest`).
 */
import assert from "node:assert/strict";
import { connectModel } from "../../../src/engines/native/model_connection.ts";
import type { ResolvedBackend } from "../../../src/settings/backends.ts";
import { startOllamaEmulator } from "../../support/emulator/emulator.ts";

const sink = { activity: () => {} };

function backend(url: string, kind: ResolvedBackend["kind"]): ResolvedBackend {
  return { name: kind === "ollama" ? "ollama" : "other", url, endpoints: [{ url }], kind };
}

Deno.test("connectModel: the context /api/ps shows, under either form of the model's name", async () => {
  const emu = await startOllamaEmulator({
    models: [{ name: "llama3:latest", contextLength: 40960 }, { name: "qwen3:8b" }],
    defaultContextLength: 8192,
  });
  try {
    const ollama = backend(emu.url, "ollama");
    // Nothing loaded yet: the endpoint cannot say.
    assert.equal((await connectModel(ollama, "llama3", { sink })).loadedContext, undefined);
    const res = await fetch(`${emu.url}/api/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "llama3:latest",
        messages: [{ role: "user", content: "hi" }],
        stream: false,
      }),
    });
    assert.equal(res.status, 200);
    await res.body?.cancel();
    const bare = await connectModel(ollama, "llama3", { sink });
    assert.equal(bare.loadedContext, 8192);
    assert.equal(bare.model?.contextLength, 40960);
    assert.equal((await connectModel(ollama, "llama3:latest", { sink })).loadedContext, 8192);
    // Another tag of another model is not this one.
    assert.equal((await connectModel(ollama, "qwen3:8b", { sink })).loadedContext, undefined);
    // An OpenAI-compatible endpoint has no such list, whatever the server behind it.
    assert.equal(
      (await connectModel(backend(emu.url, "openai"), "llama3", { sink })).loadedContext,
      undefined,
    );
  } finally {
    await emu.close();
  }
});

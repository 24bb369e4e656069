/**
 * CONTRIBUTING.md's promise for backend kinds, kept: a kind is its folder's module plus one
 * entry in the table of kinds (backends/kinds.ts). A kind "relay", registered here only, carries a
 * native job to the Ollama emulator, named by the call and as the default backend, lists its models in `ollama_models`, and words a failure
 * with its own advice, with no line of the product's written for it.
 */
import { tempDir } from "../support/temp_dir.ts";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { BackendFactory } from "../../src/backends/backend_client.ts";
import { openaiBackend } from "../../src/backends/openai/kind.ts";
import { registerBackendKind } from "../../src/backends/kinds.ts";
import { runtimeLoader } from "../../src/jobs/runtime.ts";
import { registerTools } from "../../src/server/tools.ts";
import { loadSettings } from "../../src/settings/load.ts";
import type { BackendKind } from "../../src/settings/types.ts";
import { startOllamaEmulator } from "../support/emulator/emulator.ts";

/** Every endpoint the relay kind made a client for, by its label. */
const made: string[] = [];

/** The relay kind's module: OpenAI-compatible chat, under a name and words of its own. */
const relayBackend: BackendFactory = (target) => {
  made.push(target.label);
  return { ...openaiBackend(target), serverName: "the relay behind it" };
};

// The one table entry.
registerBackendKind("relay", {
  probePath: "/v1/models",
  facts: {
    sizesContext: false,
    chatStream: "a relay stream",
    chatPath: "/v1/chat/completions",
    startHint: "Start the relay (relay-test start)",
    missingModelHint: (model) => `Ask the relay for "${model}"`,
    messages: false,
  },
  load: () => Promise.resolve(relayBackend),
});

Deno.test("a backend kind registered only here carries a native job and lists its models", async () => {
  const emu = await startOllamaEmulator();
  const home = realpathSync(tempDir("third_kind_"));
  const work = join(home, "work");
  mkdirSync(work);
  const env = { HOME: home, PATH: Deno.env.get("PATH") ?? "", OLLAMA_HOST: emu.url };
  const resolved = loadSettings({ env, cwd: work, home });
  // Settings accept the product's kinds only; a test's kind is set as loading would set it.
  resolved.settings.backends = { gpus: { url: emu.url, kind: "relay" as BackendKind } };
  // And as the default backend (issue 33): a call that names none runs there.
  resolved.settings.defaultBackend = "gpus";
  const workdirs = { home, workspaceRoots: resolved.settings.workspaceRoots };
  const runtime = runtimeLoader({
    settings: resolved.settings,
    env,
    serverCwd: work,
    userConfigDir: join(home, ".ollama-mcp"),
    workdirs,
  }, () => {});
  const server = new McpServer({ name: "t", version: "0" });
  registerTools(server, { resolved, serverCwd: work, workdirs, runtime: runtime.get });
  const [a, b] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "c", version: "0" });
  await Promise.all([server.connect(a), client.connect(b)]);
  const { manager, store } = await runtime.get();
  const oneShot = (prompt: string) =>
    manager.start({
      prompt,
      engine: "native",
      backend: "gpus",
      model: "qwen3:8b",
      cwd: work,
      options: { permissionMode: "default", addDirs: [], allowedTools: [] },
    });
  try {
    const { record } = await oneShot("through the relay");
    const done = await manager.wait(record.id, 60);
    assert.equal(done.record.state, "completed", JSON.stringify(done.record));
    assert.equal(
      readFileSync(join(store.dirOf(record.id), "result.txt"), "utf8"),
      "echo: through the relay",
    );
    assert.ok(made.some((l) => l.includes(`"gpus"`)), made.join("; "));
    assert.equal(emu.chatRequests().length, 1, "the relay spoke OpenAI-compatible chat");
    assert.equal(emu.nativeChatRequests().length, 0);

    const r = await client.callTool({ name: "ollama_models", arguments: {} });
    const models = (r.content as Array<{ text: string }>).map((c) => c.text).join("\n");
    assert.match(models, new RegExp(`^ {2}gpus {2}${emu.url} {2}\\[relay\\]`, "m"), models);
    assert.match(models, /qwen3:8b/, models);

    // A call that names no backend goes to the default one, of this kind too.
    const call = await client.callTool({
      name: "delegate_start",
      arguments: {
        engine: "native",
        model: "qwen3:8b",
        prompt: "to the default",
        cwd: work,
        allowed_tools: [],
        wait_seconds: 60,
      },
    });
    const reply = (call.content as Array<{ text: string }>).map((c) => c.text).join("\n");
    assert.match(reply, /^engine: +native \(backend gpus\)$/m, reply);
    assert.match(reply, /echo: to the default/, reply);
    assert.equal(emu.chatRequests().length, 2, "the relay carried it");
    assert.equal(emu.nativeChatRequests().length, 0, "the Ollama at baseUrl did not");
    assert.match(models, /^Default backend: {2}gpus {2}\S+ {2}\[relay\]/m, models);

    // Its failure words are its own: the server behind it is gone.
    await emu.close();
    const gone = await oneShot("nobody there");
    const failed = await manager.wait(gone.record.id, 120);
    assert.equal(failed.record.state, "failed", JSON.stringify(failed.record));
    assert.match(failed.record.errorText ?? "", /Start the relay \(relay-test start\)/);
    await manager.shutdown();
  } finally {
    await client.close();
    await server.close();
    await emu.close();
    rmSync(home, { recursive: true, force: true });
  }
});

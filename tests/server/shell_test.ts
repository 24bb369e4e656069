/**
 * The server before its tools (src/server/shell.ts, issue 34 item 3): `initialize` is answered
 * at once, what needs the tools waits until they are registered and then goes on in the order
 * sent, and registering them sends no tools/list_changed. Raw JSON-RPC over the SDK's
 * in-memory pair, as a client sends it.
 */
import assert from "node:assert/strict";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { serverShell } from "../../src/server/shell.ts";
import { JobTaskStore, TASKS_CAPABILITY } from "../../src/server/task_store.ts";
import { until } from "../support/harness.ts";
import { INITIALIZE } from "../support/raw_mcp.ts";

type Json = Record<string, unknown>;

/** A raw client on one end of an in-memory pair; `received` fills as the server answers. */
async function rawClient(server: { connect(t: InMemoryTransport): Promise<void> }) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const received: Json[] = [];
  clientSide.onmessage = (m: JSONRPCMessage) => void received.push(m as Json);
  await server.connect(serverSide);
  await clientSide.start();
  const send = (m: Json) => clientSide.send(m as JSONRPCMessage);
  const answer = async (id: number) => {
    return await until(() => received.find((m) => m.id === id), 5000, `an answer to id ${id}`);
  };
  return { send, answer, received, close: () => clientSide.close() };
}

Deno.test("shell: initialize is answered before the tools exist; tools/list waits for them, in order, with no list_changed", async () => {
  const shell = serverShell(() => {});
  const client = await rawClient(shell);
  await client.send(INITIALIZE);
  const init = await client.answer(1);
  assert.equal((init.result as Json).protocolVersion, "2025-11-25");
  await client.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  await client.send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
  await client.send({ jsonrpc: "2.0", id: 3, method: "ping" });
  await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual(client.received.map((m) => m.id), [1], "answered before the tools exist");

  shell.server.registerTool(
    "echo",
    { description: "Echo", inputSchema: { text: z.string() } },
    ({ text }: { text: string }) => ({ content: [{ type: "text" as const, text }] }),
  );
  shell.server.registerTool("other", { description: "Other" }, () => ({ content: [] }));
  shell.open();
  const list = await client.answer(2);
  await client.answer(3);
  const tools = (list.result as { tools: { name: string }[] }).tools.map((t) => t.name);
  assert.deepEqual(tools, ["echo", "other"]);
  assert.deepEqual(client.received.map((m) => m.id ?? m.method), [1, 2, 3]);
  await client.close();
});

Deno.test("shell: initialize answers what a server with its tools registered before connecting answers", async () => {
  const before = new McpServer({ name: "ollama-delegate", version: "x" }, {
    capabilities: { tasks: TASKS_CAPABILITY },
    taskStore: new JobTaskStore(),
  });
  before.registerTool("echo", { description: "Echo" }, () => ({ content: [] }));
  const old = await rawClient(before);
  await old.send(INITIALIZE);
  const shell = serverShell(() => {});
  const now = await rawClient(shell);
  await now.send(INITIALIZE);
  const capabilities = async (c: typeof old) => ((await c.answer(1)).result as Json).capabilities;
  assert.deepEqual(await capabilities(now), await capabilities(old));
  await old.close();
  await now.close();
});

import assert from "node:assert/strict";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { z } from "zod";
import { leanToolList } from "../../../src/server/transport/lean_tools.ts";

Deno.test("leanToolList: input schemas lose only their $schema line", () => {
  const result = {
    tools: [
      {
        name: "a",
        inputSchema: {
          $schema: "http://json-schema.org/draft-07/schema#",
          type: "object",
          properties: { n: { type: "number", minimum: 0 } },
        },
      },
      { name: "b", inputSchema: { type: "object", properties: {} } },
    ],
    nextCursor: "x",
  };
  assert.deepEqual(leanToolList(result), {
    tools: [
      {
        name: "a",
        inputSchema: { type: "object", properties: { n: { type: "number", minimum: 0 } } },
      },
      { name: "b", inputSchema: { type: "object", properties: {} } },
    ],
    nextCursor: "x",
  });
  assert.equal(result.tools[0]!.inputSchema.$schema, "http://json-schema.org/draft-07/schema#");
});

Deno.test("leanToolList: the SDK still stamps $schema on registered tools (what it removes)", async () => {
  const server = new McpServer({ name: "t", version: "0" });
  server.registerTool("t", { inputSchema: { n: z.number() } }, () => ({ content: [] }));
  const [a, b] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "c", version: "0" });
  await Promise.all([server.connect(a), client.connect(b)]);
  try {
    const { tools } = await client.listTools();
    assert.ok("$schema" in tools[0]!.inputSchema, JSON.stringify(tools[0]));
    const lean = leanToolList({ tools }) as { tools: Array<{ inputSchema: object }> };
    assert.ok(!("$schema" in lean.tools[0]!.inputSchema));
  } finally {
    await client.close();
    await server.close();
  }
});

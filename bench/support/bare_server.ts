/** The baseline for the start-up benchmark: a bare MCP SDK server with one tool. */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "bare", version: "1.0.0" });
server.registerTool(
  "echo",
  { description: "Echo", inputSchema: { text: z.string() } },
  (args: { text: string }) => ({
    content: [{ type: "text", text: args.text }],
  }),
);
await server.connect(new StdioServerTransport());

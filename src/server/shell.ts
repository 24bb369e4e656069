/**
 * The MCP server before its tools: what answering `initialize` needs, and nothing else (issue
 * 34, item 3: start-up within 1.25 times a bare SDK server). The settings, the tools and their
 * input schemas load after (wire.ts); requests that need them wait until then
 * (transport/startup_hold.ts).
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { SERVER_NAME, VERSION } from "../version.ts";
import { JobTaskStore, TASKS_CAPABILITY } from "./task_store.ts";
import { Revision2026Transport } from "./transport/revision_2026.ts";
import { NO_SCHEMA_VALIDATION } from "./without_ajv.ts";

/** The MCP server, connectable before its tools are registered. */
export interface ServerShell {
  server: McpServer;
  /** delegate_run's tasks: given to the SDK here, served by run_tool.ts once registered. */
  taskStore: JobTaskStore;
  /**
   * Connects the server over `transport`, wrapped so that it also speaks MCP 2026-07-28
   * (server/discover, delegate_run as a task) around the SDK's 2025 server. `initialize` is
   * answered from then on; every request that needs the tools waits for open(). `onclose`
   * hears the transport close (the SDK chains it before its own handler).
   */
  connect(transport: Transport, onclose?: () => void): Promise<void>;
  /** Whether the connected client speaks 2026-07-28 and declared form elicitation. */
  clientElicits2026(): boolean;
  /** Whether requests the client sent wait for the tools. */
  waiting(): boolean;
  /** The tools are registered: the requests that waited are handled, in order. */
  open(): void;
}

export function serverShell(log: (line: string) => void): ServerShell {
  const taskStore = new JobTaskStore();
  const server = new McpServer({ name: SERVER_NAME, version: VERSION }, {
    // Declared here, since the tools are registered after `initialize` is answered. It is what
    // the SDK's first registerTool would declare ({ listChanged: true }), so `initialize`
    // answers the same; the SDK then accepts tools registered while connected.
    capabilities: { tasks: TASKS_CAPABILITY, tools: { listChanged: true } },
    taskStore,
    // The SDK's default validator is ajv's, which the serve command leaves unloaded.
    jsonSchemaValidator: NO_SCHEMA_VALIDATION,
  });
  let wrapped: Revision2026Transport | undefined;
  return {
    server,
    taskStore,
    async connect(transport, onclose) {
      wrapped = new Revision2026Transport(transport, {
        tasks: taskStore,
        log,
        holdUntilOpen: true,
      });
      if (onclose) wrapped.onclose = onclose;
      await server.connect(wrapped);
    },
    clientElicits2026: () => wrapped?.clientElicits() ?? false,
    waiting: () => wrapped?.waiting() ?? false,
    open: () => wrapped?.open(),
  };
}

/**
 * A client's first requests as raw JSON-RPC, for tests and benches that talk to a server
 * without the SDK's Client (its stdin directly, or an in-memory pair).
 */

/** `initialize`, id 1, at the SDK's protocol revision. */
export const INITIALIZE = {
  jsonrpc: "2.0" as const,
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "t", version: "1" },
  },
};

/** `initialize` as a line of stdin. */
export const INITIALIZE_LINE = JSON.stringify(INITIALIZE) + "\n";

/** What a client sends once initialized: the notification, then tools/list (id 2). */
export const TOOLS_LIST_LINES =
  JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n" +
  JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }) + "\n";

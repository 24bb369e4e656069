/**
 * The answer to MCP 2026-07-28's `server/discover`, and the result stamps the revision puts on
 * every result, with no import beyond the version: `serve` answers a discover that arrives while
 * the rest of the server is still loading (early_discover.ts), and revision_2026.ts answers
 * one that arrives later with the same words.
 *
 * Spec: modelcontextprotocol.io/specification/2026-07-28 (basic/versioning, basic/index
 * "Per-request protocol fields") and the tasks extension (modelcontextprotocol/ext-tasks).
 */
import { SERVER_NAME, VERSION } from "../../version.ts";

export const REVISION_2026 = "2026-07-28";
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
const META_SERVER_INFO = "io.modelcontextprotocol/serverInfo";
const SERVER_INFO = { name: SERVER_NAME, version: VERSION };

type Json = Record<string, unknown>;

/**
 * Results a client may cache (schema "CacheableResult", SEP-2549). Ours change with the user's
 * settings and the default model found at start, so they are stale at once and never shared.
 */
const CACHEABLE = new Set([
  "server/discover",
  "tools/list",
  "prompts/list",
  "resources/list",
  "resources/templates/list",
  "resources/read",
]);
const NOT_CACHED = { ttlMs: 0, cacheScope: "private" };

/** A 2026 result: `resultType`, the server's identity, and cache hints where required. */
export function complete(result: Json, method: string): Json {
  const meta = typeof result._meta === "object" && result._meta !== null &&
      !Array.isArray(result._meta)
    ? result._meta as Json
    : {};
  return {
    resultType: "complete",
    ...(CACHEABLE.has(method) ? NOT_CACHED : {}),
    ...result,
    _meta: { ...meta, [META_SERVER_INFO]: SERVER_INFO },
  };
}

/**
 * What server/discover reports: the SDK's tool capability (McpServer advertises listChanged for
 * registered tools; a test compares this with initialize's answer), with the 2025 `tasks`
 * capability replaced by the extension that took its place. Like `initialize`'s `tasks`, the
 * extension is declared whatever the delegation mode: the answer cannot wait for the settings
 * (Claude Code gives a stdio server's first answer a short bound, then speaks the 2025 revision
 * for the whole session), and in mode "off" no tool is offered that would use it.
 */
export function discoverResult(): Json {
  return complete({
    supportedVersions: [REVISION_2026],
    capabilities: { tools: { listChanged: true }, extensions: { [TASKS_EXTENSION]: {} } },
  }, "server/discover");
}

/**
 * A parsed JSON value's shape test: an object with named members, not null and not an array.
 * Every reader of outside JSON (backend replies, Claude Code's stream, job folders, MCP
 * messages, a model's tool calls) narrows with this one before reading a member.
 */

/** A JSON object whose members are not known yet. */
export type JsonObject = Record<string, unknown>;

/** True when `v` is a JSON object (not null, not an array). */
export const isObject = (v: unknown): v is JsonObject =>
  typeof v === "object" && v !== null && !Array.isArray(v);

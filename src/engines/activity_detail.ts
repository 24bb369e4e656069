/** The one-line detail an activity shows for a tool call, for status and `jobs tail`. */

import { isObject } from "../platform/json_object.ts";

type Json = Record<string, unknown>;

/** Longest detail kept; the server cuts further when rendering. */
const DETAIL_KEEP = 1000;

/** The detail shown for a tool call: the first of the inputs people recognise. */
export function toolDetail(input: unknown): string {
  if (!isObject(input)) return "";
  for (const key of ["command", "file_path", "pattern", "path", "url", "description", "prompt"]) {
    const value = typeof input[key] === "string" ? input[key] : undefined;
    if (value) return value.slice(0, DETAIL_KEEP);
  }
  return "";
}

/** The one-line detail shown in status, by tool name (native engine). */
export function describeCall(name: string, input: Record<string, unknown>): string {
  const pick = (k: string) => (typeof input[k] === "string" ? (input[k] as string) : "");
  switch (name) {
    case "Bash":
      return pick("command");
    case "Read":
    case "Write":
    case "Edit":
      return pick("file_path");
    case "Glob":
    case "Grep":
      return [pick("pattern"), pick("path")].filter(Boolean).join(" in ");
    default:
      return JSON.stringify(input).slice(0, 200);
  }
}

/**
 * What the model last saw of each file, so Edit and Write can refuse to work from a stale view.
 * A file it read and that then changed on disk (a command it ran, a formatter, the user) holds
 * other text than the model thinks: an edit would be made against text that is gone, and a
 * Write would throw away the change. Files it never read in this job are not tracked and are
 * edited as before.
 */
import { createHash } from "node:crypto";
import type { ToolContext } from "./types.ts";

/** A file as the model last saw it: by content, and by size and modification time. */
export interface ReadStamp {
  hash: string;
  size: number;
  mtimeMs: number;
}

/** The stamps of this job, by real path, created on first use. */
function stampsOf(ctx: ToolContext): Map<string, ReadStamp> {
  return ctx.reads ??= new Map();
}

export function hashText(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** Notes that the model has seen `text` as the content of `real` (it read or wrote it). */
export function rememberFile(
  ctx: ToolContext,
  real: string,
  text: string,
  stats: { size: number; mtimeMs: number },
): void {
  stampsOf(ctx).set(real, { hash: hashText(text), size: stats.size, mtimeMs: stats.mtimeMs });
}

/**
 * Why `tool` may not change `real` now, or undefined. With the current text (Edit) the content
 * decides, so a touched but unchanged file is fine; without it (Write opens for writing only),
 * size and modification time do.
 */
export function staleRefusal(
  ctx: ToolContext,
  real: string,
  shown: string,
  verb: "edit" | "write",
  now: { size: number; mtimeMs: number; text?: string },
): string | undefined {
  const seen = ctx.reads?.get(real);
  if (!seen) return undefined;
  const changed = now.text !== undefined
    ? hashText(now.text) !== seen.hash
    : now.size !== seen.size || now.mtimeMs !== seen.mtimeMs;
  if (!changed) return undefined;
  const sizes = now.size === seen.size
    ? `${now.size} bytes then and now`
    : `${seen.size} bytes then, ${now.size} now`;
  return `Refused to ${verb} "${shown}": it changed on disk since you last read it (${sizes}; ` +
    `modified ${new Date(now.mtimeMs).toISOString()}). Read it again, then ${verb} it`;
}

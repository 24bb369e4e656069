import { isAbsolute, join } from "node:path";
import type { BeneathDir } from "../../../platform/open_beneath/open_beneath.ts";
import { openSearchBase, PathRefused } from "./confine.ts";
import { pathPolicy } from "./path_policy.ts";
import { guard, optionalString, requireString, ToolFailure } from "./fields.ts";
import { globToRegExp, hasMagic } from "./glob_pattern.ts";
import type { NativeTool, ToolContext, ToolResult } from "./types.ts";
import { pacer, walkBeneath } from "./walk.ts";

/** Paths listed at most; the rest are counted. */
export const GLOB_MAX_RESULTS = 200;

/**
 * Where a search starts, opened beneath the roots: a directory (held open, for the walk) or a
 * file. A missing path is an error naming it.
 */
export async function searchBase(
  path: string | undefined,
  ctx: ToolContext,
  tool: string,
): Promise<Awaited<ReturnType<typeof openSearchBase>>> {
  try {
    return await openSearchBase(path ?? ".", ctx, tool);
  } catch (e) {
    if (e instanceof ToolFailure && / does not exist$/.test(e.message)) {
      throw new ToolFailure(`Cannot search "${path}": it does not exist`);
    }
    throw e;
  }
}

/** Sorts newest first, then by path. */
export function byNewest<T extends { mtime: number; path: string }>(items: T[]): T[] {
  return items.sort((a, b) =>
    b.mtime - a.mtime || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)
  );
}

async function run(input: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
  let pattern = requireString(input, "pattern");
  const path = optionalString(input, "path");
  if (pattern.split(/[\\/]/).includes("..")) {
    throw new PathRefused(
      `Refused to search "${pattern}": ".." segments are not allowed; ` +
        `set path to a directory inside the allowed directories (${ctx.roots.join(", ")})`,
    );
  }
  while (pattern.startsWith("./")) pattern = pattern.slice(2);
  const start = await searchBase(path, ctx, "Glob");
  if ("file" in start) {
    await start.file.handle.close();
    throw new ToolFailure(`Cannot search "${path}": it is a file, not a directory`);
  }

  // The literal head of the pattern (`src/lib` in `src/lib/**/*.ts`) is where the walk
  // starts; an absolute pattern is allowed when that head is inside the roots.
  const segments = pattern.split("/");
  let literal = segments.findIndex(hasMagic);
  if (literal === -1) literal = segments.length - 1;
  const head = segments.slice(0, literal).join("/");
  const absolute = isAbsolute(pattern);
  let base: BeneathDir = start.dir;
  if (head !== "" || absolute) {
    await start.dir.close();
    let opened;
    try {
      opened = await openSearchBase(
        absolute ? head || "/" : join(start.dir.real, head),
        ctx,
        "Glob",
      );
    } catch (e) {
      if (e instanceof ToolFailure && / does not exist$|is not a directory$/.test(e.message)) {
        return { text: `No files match "${pattern}" in "${path ?? "."}"` };
      }
      throw e;
    }
    if ("file" in opened) {
      await opened.file.handle.close();
      return { text: `No files match "${pattern}" in "${path ?? "."}"` };
    }
    base = opened.dir;
  }
  const regex = globToRegExp(pattern);
  const matches: Array<{ path: string; mtime: number }> = [];
  let walk;
  try {
    walk = await walkBeneath(base, {
      signal: ctx.signal,
      named: pattern,
      check: pathPolicy(ctx, "list", "Glob"),
      pause: pacer(),
      async visit(dir, name, _real, rel) {
        const candidate = head === "" ? rel : `${head}/${rel}`;
        if (!regex.test(candidate)) return;
        let mtime = 0;
        try {
          mtime = (await dir.stat(name)).mtimeMs;
        } catch {
          // vanished since the listing: still listed, last
        }
        matches.push({ path: candidate, mtime });
      },
    });
  } finally {
    await base.close();
  }
  const where = path ?? ".";
  const stopped = walk.truncated
    ? "\n[search stopped after too many entries; narrow the pattern or path]"
    : "";
  if (matches.length === 0) {
    return { text: `No files match "${pattern}" in "${where}"${stopped}` };
  }
  const sorted = byNewest(matches);
  const lines = sorted.slice(0, GLOB_MAX_RESULTS).map((m) => m.path);
  if (sorted.length > GLOB_MAX_RESULTS) {
    lines.push(`[${sorted.length - GLOB_MAX_RESULTS} more not shown; narrow the pattern]`);
  }
  return { text: lines.join("\n") + stopped };
}

export const globTool: NativeTool = {
  name: "Glob",
  readOnly: true,
  description: "Find files by glob pattern (e.g. **/*.ts), newest first.",
  parameters: {
    type: "object",
    properties: {
      pattern: { type: "string" },
      path: { type: "string", description: "directory to search (default: cwd)" },
    },
    required: ["pattern"],
  },
  run: (input, ctx) => guard("Glob", () => run(input, ctx)),
};

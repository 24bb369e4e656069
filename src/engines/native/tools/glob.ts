import { stat } from "node:fs/promises";
import { isAbsolute, relative, sep } from "node:path";
import { confinePath, PathRefused } from "./confine.ts";
import { guard, optionalString, requireString, ToolFailure } from "./fields.ts";
import { globToRegExp, hasMagic } from "./glob_pattern.ts";
import type { NativeTool, ToolContext, ToolResult } from "./types.ts";
import { walkFiles } from "./walk.ts";

/** Paths listed at most; the rest are counted. */
export const GLOB_MAX_RESULTS = 200;

/** A directory the search may walk: confined, and really a directory. */
export async function searchDir(
  path: string | undefined,
  ctx: ToolContext,
): Promise<{ real: string; isFile: boolean }> {
  if (path === undefined) return { real: ctx.cwd, isFile: false };
  const real = await confinePath(path, ctx, "read");
  try {
    const info = await stat(real);
    return { real, isFile: info.isFile() };
  } catch {
    throw new ToolFailure(`Cannot search "${path}": it does not exist`);
  }
}

/** `/`-separated path of `file` relative to `base`. */
export function relativeSlash(base: string, file: string): string {
  return relative(base, file).split(sep).join("/");
}

/** Files with their modification time, newest first, then by path. */
export async function newestFirst(files: readonly string[]): Promise<string[]> {
  const timed = await Promise.all(files.map(async (file) => {
    try {
      return { file, mtime: (await stat(file)).mtimeMs };
    } catch {
      return { file, mtime: 0 };
    }
  }));
  timed.sort((a, b) => b.mtime - a.mtime || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  return timed.map((t) => t.file);
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
  const dir = await searchDir(path, ctx);
  if (dir.isFile) throw new ToolFailure(`Cannot search "${path}": it is a file, not a directory`);

  // The literal head of the pattern (`src/lib` in `src/lib/**/*.ts`) is where the walk
  // starts; an absolute pattern is allowed when that head is inside the roots.
  const segments = pattern.split("/");
  let literal = segments.findIndex(hasMagic);
  if (literal === -1) literal = segments.length - 1;
  const head = segments.slice(0, literal).join("/");
  const absolute = isAbsolute(pattern);
  let base = dir.real;
  if (head !== "" || absolute) {
    base = await confinePath(absolute ? head || "/" : `${dir.real}${sep}${head}`, ctx, "read");
  }
  const regex = globToRegExp(pattern);
  const walk = await walkFiles(base, {
    roots: ctx.roots,
    signal: ctx.signal,
    ...(ctx.protect ? { protect: ctx.protect } : {}),
    named: pattern,
  });
  const matches: string[] = [];
  const shown = new Map<string, string>();
  for (const file of walk.files) {
    const rel = relativeSlash(base, file);
    const candidate = head === "" ? rel : `${head}/${rel}`;
    if (!regex.test(candidate)) continue;
    matches.push(file);
    shown.set(file, candidate);
  }
  const where = path ?? ".";
  const stopped = walk.truncated
    ? "\n[search stopped after too many entries; narrow the pattern or path]"
    : "";
  if (matches.length === 0) {
    return { text: `No files match "${pattern}" in "${where}"${stopped}` };
  }
  const sorted = await newestFirst(matches);
  const lines = sorted.slice(0, GLOB_MAX_RESULTS).map((file) => shown.get(file) ?? file);
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

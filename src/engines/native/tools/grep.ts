import { readFile, stat } from "node:fs/promises";
import { basename } from "node:path";
import { displayPath } from "./confine.ts";
import {
  FieldError,
  guard,
  optionalBool,
  optionalChoice,
  optionalInt,
  optionalString,
  requireString,
  ToolFailure,
} from "./fields.ts";
import { looksBinary, sizeLimitText } from "./file_io.ts";
import { newestFirst, relativeSlash, searchDir } from "./glob.ts";
import { globToRegExp } from "./glob_pattern.ts";
import { MAX_FILE_BYTES, type NativeTool, type ToolContext, type ToolResult } from "./types.ts";
import { walkFiles } from "./walk.ts";

/** Grep output is cut here, with a note. */
export const GREP_MAX_CHARS = 20_000;
/** Matching lines longer than this are cut in content mode. */
const GREP_MAX_LINE_CHARS = 500;

const MODES = ["files_with_matches", "content", "count"] as const;
type Mode = typeof MODES[number];

interface FileMatches {
  file: string;
  /** 1-based line numbers and text of matching lines (content mode only). */
  lines: Array<[number, string]>;
  count: number;
}

/** The regex the model gave, or an error naming it. */
function compile(pattern: string, ignoreCase: boolean): RegExp {
  try {
    return new RegExp(pattern, ignoreCase ? "i" : "");
  } catch (e) {
    throw new FieldError(`"pattern" is not a valid regex: /${pattern}/: ${(e as Error).message}`);
  }
}

/** A filter from Grep's glob: without a `/` it matches file names at any depth, as rg's. */
function globFilter(glob: string | undefined): (rel: string) => boolean {
  if (glob === undefined) return () => true;
  const regex = globToRegExp(glob);
  if (glob.includes("/")) return (rel) => regex.test(rel);
  return (rel) => regex.test(basename(rel));
}

async function searchFile(
  file: string,
  regex: RegExp,
  keepLines: boolean,
): Promise<FileMatches | "big" | "skip"> {
  let bytes: Uint8Array;
  try {
    if ((await stat(file)).size > MAX_FILE_BYTES) return "big";
    bytes = await readFile(file);
  } catch {
    return "skip";
  }
  if (looksBinary(bytes)) return "skip";
  const text = new TextDecoder().decode(bytes);
  const found: FileMatches = { file, lines: [], count: 0 };
  let n = 0;
  for (const raw of text.split("\n")) {
    n++;
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (!regex.test(line)) continue;
    found.count++;
    if (keepLines) found.lines.push([n, line]);
  }
  return found;
}

function cutLine(line: string): string {
  if (line.length <= GREP_MAX_LINE_CHARS) return line;
  return `${line.slice(0, GREP_MAX_LINE_CHARS)} [line cut at ${GREP_MAX_LINE_CHARS} chars]`;
}

/** Joins rows under GREP_MAX_CHARS and head_limit, saying what was left out. */
function render(rows: string[], headLimit: number | undefined): string {
  const limit = Math.min(headLimit ?? rows.length, rows.length);
  let out = "";
  for (let i = 0; i < limit; i++) {
    const row = `${rows[i]}\n`;
    if (out.length + row.length > GREP_MAX_CHARS) {
      return `${out}[cut at ${GREP_MAX_CHARS} chars: ${rows.length - i} more lines not shown; ` +
        "narrow with path, glob or head_limit]";
    }
    out += row;
  }
  if (limit < rows.length) out += `[head_limit ${limit}: ${rows.length - limit} more not shown]`;
  return out.trimEnd();
}

async function run(input: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
  const pattern = requireString(input, "pattern");
  const path = optionalString(input, "path");
  const glob = optionalString(input, "glob");
  const mode: Mode = optionalChoice(input, "output_mode", MODES) ?? "files_with_matches";
  const ignoreCase = optionalBool(input, "-i") ?? false;
  const lineNumbers = optionalBool(input, "-n") ?? true;
  const headLimit = optionalInt(input, "head_limit", 1);
  const regex = compile(pattern, ignoreCase);
  const filter = globFilter(glob);

  const dir = await searchDir(path, ctx);
  let files = [dir.real];
  let stopped = "";
  if (!dir.isFile) {
    const named = `${path ?? ""} ${glob ?? ""}`;
    const walk = await walkFiles(dir.real, {
      roots: ctx.roots,
      signal: ctx.signal,
      ...(ctx.protect ? { protect: ctx.protect } : {}),
      named,
    });
    files = walk.files.filter((file) => filter(relativeSlash(dir.real, file)));
    if (walk.truncated) stopped = "\n[search stopped after too many entries; narrow the path]";
  }

  const found: FileMatches[] = [];
  let big = 0;
  let contentChars = 0;
  for (const file of files) {
    if (ctx.signal.aborted) throw new ToolFailure("Cancelled while searching");
    const result = await searchFile(file, regex, mode === "content");
    if (result === "big") big++;
    if (typeof result === "string" || result.count === 0) continue;
    found.push(result);
    // Content beyond what can be shown is not kept: `.` over a large tree would be huge.
    contentChars += result.lines.reduce((sum, [, line]) => sum + line.length, 0);
    if (mode === "content" && contentChars > 4 * GREP_MAX_CHARS) {
      stopped += "\n[search stopped early: more matches not shown; narrow the pattern]";
      break;
    }
  }
  const skippedBig = big > 0
    ? `\n[${big} file${big === 1 ? "" : "s"} over ${sizeLimitText()} not searched]`
    : "";
  if (found.length === 0) {
    return { text: `No matches for /${pattern}/ in "${path ?? "."}"${skippedBig}${stopped}` };
  }

  const name = (file: string) => displayPath(file, ctx.cwd);
  let rows: string[];
  if (mode === "files_with_matches") {
    rows = (await newestFirst(found.map((f) => f.file))).map(name);
  } else if (mode === "count") {
    rows = found.map((f) => `${name(f.file)}:${f.count}`);
  } else {
    rows = found.flatMap((f) =>
      f.lines.map(([n, line]) =>
        lineNumbers ? `${name(f.file)}:${n}:${cutLine(line)}` : `${name(f.file)}:${cutLine(line)}`
      )
    );
  }
  return { text: render(rows, headLimit) + skippedBig + stopped };
}

export const grepTool: NativeTool = {
  name: "Grep",
  readOnly: true,
  description: "Search file contents with a JavaScript regex.",
  parameters: {
    type: "object",
    properties: {
      pattern: { type: "string" },
      path: { type: "string", description: "file or directory (default: cwd)" },
      glob: { type: "string", description: "file filter, e.g. *.ts" },
      output_mode: { type: "string", enum: [...MODES] },
      "-i": { type: "boolean" },
      "-n": { type: "boolean" },
      head_limit: { type: "integer" },
    },
    required: ["pattern"],
  },
  run: (input, ctx) => guard("Grep", () => run(input, ctx)),
};

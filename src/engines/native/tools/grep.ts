import { basename } from "node:path";
import type { OpenedFile } from "../../../platform/open_beneath/open_beneath.ts";
import { openedSecretRefusal, pathPolicy, secretRefusal } from "./path_policy.ts";
import { displayPath } from "../../../guard/real_paths.ts";
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
import { looksBinary, readCapped, sizeLimitText } from "./file_io.ts";
import { byNewest, searchBase } from "./glob.ts";
import { globToRegExp } from "./glob_pattern.ts";
import { compileSearch, decodeText, searchText, type TextSearch } from "./grep_search.ts";
import { MAX_FILE_BYTES, type NativeTool, type ToolContext, type ToolResult } from "./types.ts";
import { pacer, walkBeneath } from "./walk.ts";

/** Grep output is cut here, with a note. */
export const GREP_MAX_CHARS = 20_000;
/** Matching lines longer than this are cut in content mode. */
const GREP_MAX_LINE_CHARS = 500;
/**
 * Time one search may take. A model's pattern over a large tree could otherwise keep a job
 * busy for minutes; what was found so far is returned with a note saying the search stopped.
 */
export const GREP_BUDGET_MS = 20_000;

const MODES = ["files_with_matches", "content", "count"] as const;
type Mode = typeof MODES[number];

interface FileMatches {
  file: string;
  mtime: number;
  /** 1-based line numbers and text of matching lines (content mode only). */
  lines: Array<[number, string]>;
  count: number;
}

/** The regex the model gave, or an error naming it. */
function compile(pattern: string, ignoreCase: boolean): TextSearch {
  try {
    return compileSearch(pattern, ignoreCase);
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

interface Tally {
  big: number;
  secret: number;
  timedOut: boolean;
  searched: number;
}

/** Searches one opened file (closing it); undefined when it is skipped or has no match. */
async function searchOpened(
  file: OpenedFile,
  search: TextSearch,
  mode: Mode,
  tally: Tally,
  deadline: number,
  pause: () => Promise<void>,
): Promise<FileMatches | undefined> {
  let bytes: Uint8Array;
  try {
    if (file.stats.size > MAX_FILE_BYTES) {
      tally.big++;
      return undefined;
    }
    bytes = await readCapped(file.handle, MAX_FILE_BYTES);
  } catch {
    return undefined;
  } finally {
    await file.handle.close();
  }
  if (bytes.length > MAX_FILE_BYTES) {
    tally.big++;
    return undefined;
  }
  if (looksBinary(bytes)) return undefined;
  tally.searched++;
  const result = await searchText(await decodeText(bytes, pause), search, {
    keepLines: mode === "content",
    firstOnly: mode === "files_with_matches",
    deadline,
    pause,
  });
  if (result.timedOut) tally.timedOut = true;
  if (result.count === 0) return undefined;
  return { file: file.real, mtime: file.stats.mtimeMs, lines: result.lines, count: result.count };
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
  const search = compile(pattern, ignoreCase);
  const filter = globFilter(glob);
  const budgetMs = ctx.searchBudgetMs ?? GREP_BUDGET_MS;
  const deadline = performance.now() + budgetMs;
  const pause = pacer();

  const base = await searchBase(path, ctx, "Grep");
  const found: FileMatches[] = [];
  const tally: Tally = { big: 0, secret: 0, timedOut: false, searched: 0 };
  let stopped = "";
  let contentChars = 0;
  // Content beyond what can be shown is not kept: `.` over a large tree would be huge.
  const keep = (result: FileMatches | undefined): boolean => {
    if (!result) return false;
    found.push(result);
    contentChars += result.lines.reduce((sum, [, line]) => sum + line.length, 0);
    if (mode === "content" && contentChars > 4 * GREP_MAX_CHARS) {
      stopped += "\n[search stopped early: more matches not shown; narrow the pattern]";
      return true;
    }
    return tally.timedOut;
  };
  if ("file" in base) {
    const secret = secretRefusal(ctx, base.file.real) ??
      openedSecretRefusal(ctx, base.file.stats);
    if (secret !== undefined) {
      await base.file.handle.close();
      throw new ToolFailure(`Refused to search "${path}": ${secret}`);
    }
    keep(await searchOpened(base.file, search, mode, tally, deadline, pause));
  } else {
    try {
      const walk = await walkBeneath(base.dir, {
        signal: ctx.signal,
        named: `${path ?? ""} ${glob ?? ""}`,
        check: pathPolicy(ctx, "list", "Grep"),
        deadline,
        pause,
        async visit(dir, name, real, rel) {
          if (ctx.signal.aborted) throw new ToolFailure("Cancelled while searching");
          if (!filter(rel)) return;
          if (secretRefusal(ctx, real) !== undefined) {
            tally.secret++;
            return;
          }
          let file: OpenedFile;
          try {
            file = await dir.openFile(name);
          } catch {
            return; // replaced by a symlink, a FIFO, or removed since the listing
          }
          // A secret under another name (a hard link to `.env`) is skipped as `.env` is.
          if (openedSecretRefusal(ctx, file.stats) !== undefined) {
            await file.handle.close();
            tally.secret++;
            return;
          }
          return keep(await searchOpened(file, search, mode, tally, deadline, pause));
        },
      });
      if (walk.timedOut) tally.timedOut = true;
      if (walk.truncated) stopped += "\n[search stopped after too many entries; narrow the path]";
    } finally {
      await base.dir.close();
    }
  }
  if (tally.timedOut) {
    stopped += `\n[search stopped after ${budgetMs / 1000} s: the time limit of one search; ` +
      `results cover the ${tally.searched} files searched so far; narrow the path, glob or ` +
      "pattern]";
  }
  const skippedBig = tally.big > 0
    ? `\n[${tally.big} file${tally.big === 1 ? "" : "s"} over ${sizeLimitText()} not searched]`
    : "";
  const skippedSecret = tally.secret > 0
    ? `\n[${tally.secret} secret-looking file${tally.secret === 1 ? "" : "s"} (.env, keys...) ` +
      "not searched: what a delegate reads goes to its model's provider; the user can allow " +
      "names with `ollama-delegate config --allow-secret-file`]"
    : "";
  const notes = skippedBig + skippedSecret + stopped;
  if (found.length === 0) {
    return { text: `No matches for /${pattern}/ in "${path ?? "."}"${notes}` };
  }

  const name = (file: string) => displayPath(file, ctx.cwd);
  let rows: string[];
  if (mode === "files_with_matches") {
    rows = byNewest(found.map((f) => ({ path: f.file, mtime: f.mtime }))).map((f) => name(f.path));
  } else if (mode === "count") {
    rows = found.map((f) => `${name(f.file)}:${f.count}`);
  } else {
    rows = found.flatMap((f) =>
      f.lines.map(([n, line]) =>
        lineNumbers ? `${name(f.file)}:${n}:${cutLine(line)}` : `${name(f.file)}:${cutLine(line)}`
      )
    );
  }
  return { text: render(rows, headLimit) + notes };
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

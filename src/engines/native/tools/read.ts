import { openConfined } from "./confine.ts";
import { guard, optionalInt, requireString } from "./fields.ts";
import { loadFile } from "./file_io.ts";
import { rememberFile } from "./read_state.ts";
import { type NativeTool, READ_MAX_CHARS, type ToolContext, type ToolResult } from "./types.ts";

/** Lines shown when the model gives no limit, as Claude Code's Read. */
export const READ_DEFAULT_LIMIT = 2000;
/** Longer lines are cut, so one minified line cannot fill the whole reply. */
export const READ_MAX_LINE_CHARS = 2000;
/** Room kept under READ_MAX_CHARS for the closing note. */
const NOTE_ROOM = 200;

/** Splits text into lines as `cat -n` counts them: a final newline ends a line, not starts one. */
export function splitLines(text: string): string[] {
  const lines = text.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  return lines.map((line) => line.endsWith("\r") ? line.slice(0, -1) : line);
}

function numbered(n: number, line: string): string {
  if (line.length > READ_MAX_LINE_CHARS) {
    const cut = line.slice(0, READ_MAX_LINE_CHARS);
    line = `${cut} [line cut at ${READ_MAX_LINE_CHARS} of ${line.length} chars]`;
  }
  return `${String(n).padStart(6)}\t${line}\n`;
}

/** The numbered lines from `offset` (1-based), at most `limit`, within READ_MAX_CHARS. */
export function renderLines(lines: readonly string[], offset: number, limit: number): string {
  const total = lines.length;
  const last = Math.min(total, offset - 1 + limit);
  const budget = READ_MAX_CHARS - NOTE_ROOM;
  let out = "";
  for (let n = offset; n <= last; n++) {
    const row = numbered(n, lines[n - 1] ?? "");
    if (out.length + row.length > budget) {
      return `${out}[cut at ${READ_MAX_CHARS} chars: file has ${total} lines; ` +
        `continue with offset=${n}]`;
    }
    out += row;
  }
  if (last < total) {
    out += `[showed lines ${offset}-${last} of ${total}; continue with offset=${last + 1}]`;
  }
  return out;
}

async function run(input: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
  const filePath = requireString(input, "file_path");
  const offset = optionalInt(input, "offset", 0) || 1;
  const limit = optionalInt(input, "limit", 1) ?? READ_DEFAULT_LIMIT;
  const opened = await openConfined(filePath, ctx, { mode: "read", tool: "Read", verb: "read" });
  let file;
  try {
    file = await loadFile(opened, filePath, "read");
  } finally {
    await opened.handle.close();
  }
  if (file.kind === "binary") {
    return { text: `"${filePath}": binary file, ${file.bytes} bytes, not shown` };
  }
  // Also a part read with offset/limit: the model chose what to look at.
  rememberFile(ctx, opened.real, file.text, opened.stats);
  if (file.bytes === 0) return { text: `"${filePath}" exists but is empty (0 bytes)` };
  const lines = splitLines(file.text.startsWith("\uFEFF") ? file.text.slice(1) : file.text);
  if (offset > lines.length) {
    return {
      text: `"${filePath}" has ${lines.length} lines; offset=${offset} is past the end`,
      isError: true,
    };
  }
  return { text: renderLines(lines, offset, limit) };
}

export const readTool: NativeTool = {
  name: "Read",
  readOnly: true,
  description: "Read a text file; returns lines numbered like cat -n.",
  parameters: {
    type: "object",
    properties: {
      file_path: { type: "string" },
      offset: { type: "integer", description: "first line (1-based)" },
      limit: { type: "integer", description: "max lines (default 2000)" },
    },
    required: ["file_path"],
  },
  run: (input, ctx) => guard("Read", () => run(input, ctx)),
};

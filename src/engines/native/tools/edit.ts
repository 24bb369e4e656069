import type { OpenedFile } from "../../../platform/open_beneath/open_beneath.ts";
import { openConfined } from "./confine.ts";
import { fsErrorText, guard, optionalBool, requireString, ToolFailure } from "./fields.ts";
import { loadFile, replaceContent, sizeLimitText } from "./file_io.ts";
import { rememberFile, staleRefusal } from "./read_state.ts";
import { MAX_FILE_BYTES, type NativeTool, type ToolContext, type ToolResult } from "./types.ts";

/** Non-overlapping occurrences of `needle` (not empty) in `text`. */
export function countOccurrences(text: string, needle: string): number {
  let count = 0;
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) {
    count++;
  }
  return count;
}

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < index; i = text.indexOf("\n", i + 1)) line++;
  return line;
}

/** Writes through the descriptor and closes it; the file's stats after the write. */
async function writeAndClose(
  file: OpenedFile,
  shown: string,
  content: string,
): Promise<{ size: number; mtimeMs: number }> {
  try {
    await replaceContent(file.handle, content);
    return await file.handle.stat();
  } catch (e) {
    throw new ToolFailure(`Cannot write: ${fsErrorText(e, shown)}`);
  } finally {
    await file.handle.close();
  }
}

async function run(input: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
  const filePath = requireString(input, "file_path");
  let oldString = requireString(input, "old_string", true);
  let newString = requireString(input, "new_string", true);
  const replaceAll = optionalBool(input, "replace_all") ?? false;
  if (oldString === newString) {
    throw new ToolFailure("Refused: old_string and new_string are the same; nothing to change");
  }

  // As Claude Code's Edit: an empty old_string creates a file that does not exist yet.
  if (oldString === "") {
    let created: OpenedFile;
    try {
      created = await openConfined(filePath, ctx, { mode: "create", tool: "Edit", verb: "edit" });
    } catch (e) {
      if (e instanceof ToolFailure && e.message.endsWith("it already exists")) {
        throw new ToolFailure(
          `Cannot edit "${filePath}": old_string is empty but the file exists; ` +
            "give the text to replace, or use Write",
        );
      }
      throw e;
    }
    rememberFile(ctx, created.real, newString, await writeAndClose(created, filePath, newString));
    ctx.fileChanged(created.real);
    return { text: `Created "${filePath}"` };
  }

  // One descriptor for reading and writing: the file edited is the file read.
  const file = await openConfined(filePath, ctx, { mode: "update", tool: "Edit", verb: "edit" });
  let text: string;
  try {
    const loaded = await loadFile(file, filePath, "edit");
    if (loaded.kind === "binary") {
      throw new ToolFailure(`Cannot edit "${filePath}": binary file, ${loaded.bytes} bytes`);
    }
    text = loaded.text;
    const stale = staleRefusal(ctx, file.real, filePath, "edit", { ...file.stats, text });
    if (stale) throw new ToolFailure(stale);
  } catch (e) {
    await file.handle.close();
    throw e;
  }
  let done = false;
  try {
    let count = countOccurrences(text, oldString);
    // A model writes "\n"; a file from Windows has "\r\n". Match it the file's way.
    if (count === 0 && text.includes("\r\n") && oldString.includes("\n")) {
      const crlf = (s: string) => s.replace(/\r?\n/g, "\r\n");
      const n = countOccurrences(text, crlf(oldString));
      if (n > 0) {
        [oldString, newString, count] = [crlf(oldString), crlf(newString), n];
      }
    }
    if (count === 0) {
      throw new ToolFailure(
        `old_string not found in "${filePath}"; check whitespace and indentation, ` +
          "or Read the file again",
      );
    }
    if (count > 1 && !replaceAll) {
      throw new ToolFailure(
        `old_string found ${count} times in "${filePath}"; add context or use replace_all`,
      );
    }
    const first = text.indexOf(oldString);
    const updated = replaceAll
      ? text.split(oldString).join(newString)
      : text.slice(0, first) + newString + text.slice(first + oldString.length);
    const bytes = new TextEncoder().encode(updated).length;
    if (bytes > MAX_FILE_BYTES) {
      throw new ToolFailure(
        `Refused to edit "${filePath}": the result would be ${bytes} bytes, over ${sizeLimitText()}`,
      );
    }
    done = true;
    // What the model now knows of the file: its own edit, so a second Edit needs no new Read.
    rememberFile(ctx, file.real, updated, await writeAndClose(file, filePath, updated));
    ctx.fileChanged(file.real);
    const what = count === 1
      ? `1 occurrence at line ${lineOf(text, first)}`
      : `${count} occurrences`;
    return { text: `Edited "${filePath}": replaced ${what}` };
  } finally {
    if (!done) await file.handle.close();
  }
}

export const editTool: NativeTool = {
  name: "Edit",
  readOnly: false,
  description: "Replace old_string with new_string in a file; old_string must be unique " +
    "unless replace_all.",
  parameters: {
    type: "object",
    properties: {
      file_path: { type: "string" },
      old_string: { type: "string" },
      new_string: { type: "string" },
      replace_all: { type: "boolean" },
    },
    required: ["file_path", "old_string", "new_string"],
  },
  run: (input, ctx) => guard("Edit", () => run(input, ctx)),
};

import { constants } from "node:fs";
import { mkdir, open, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { confinePath } from "./confine.ts";
import { fsErrorText, guard, requireString, ToolFailure } from "./fields.ts";
import { sizeLimitText } from "./file_io.ts";
import { MAX_FILE_BYTES, type NativeTool, type ToolContext, type ToolResult } from "./types.ts";

/**
 * Writes `content` to a confined real path, creating missing parents. The parents lie
 * between the real path and its root (confinePath checked the real path), so none is
 * created outside the roots. Written in place, not renamed over, to keep the file's mode.
 * O_NOFOLLOW (POSIX) refuses a symlink put in place of the file since the check.
 */
export async function writeConfined(real: string, shown: string, content: string): Promise<void> {
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC |
    (constants.O_NOFOLLOW ?? 0);
  try {
    await mkdir(dirname(real), { recursive: true });
    const handle = await open(real, flags, 0o666);
    try {
      await handle.writeFile(content);
    } finally {
      await handle.close();
    }
  } catch (e) {
    throw new ToolFailure(`Cannot write: ${fsErrorText(e, shown)}`);
  }
}

async function run(input: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
  const filePath = requireString(input, "file_path");
  const content = requireString(input, "content", true);
  const bytes = new TextEncoder().encode(content).length;
  if (bytes > MAX_FILE_BYTES) {
    throw new ToolFailure(
      `Refused to write "${filePath}": content is ${bytes} bytes, over ${sizeLimitText()}`,
    );
  }
  const real = await confinePath(filePath, ctx, "write");
  let existed = false;
  try {
    const info = await stat(real);
    if (info.isDirectory()) {
      throw new ToolFailure(`Cannot write "${filePath}": it is a directory`);
    }
    if (!info.isFile()) throw new ToolFailure(`Cannot write "${filePath}": not a regular file`);
    existed = true;
  } catch (e) {
    if (e instanceof ToolFailure) throw e;
  }
  await writeConfined(real, filePath, content);
  ctx.fileChanged(real);
  return { text: `${existed ? "Overwrote" : "Created"} "${filePath}" (${bytes} bytes)` };
}

export const writeTool: NativeTool = {
  name: "Write",
  readOnly: false,
  description: "Create or overwrite a file with the given content.",
  parameters: {
    type: "object",
    properties: {
      file_path: { type: "string" },
      content: { type: "string" },
    },
    required: ["file_path", "content"],
  },
  run: (input, ctx) => guard("Write", () => run(input, ctx)),
};

import { openConfined } from "./confine.ts";
import { fsErrorText, guard, requireString, ToolFailure } from "./fields.ts";
import { replaceContent, sizeLimitText } from "./file_io.ts";
import { rememberFile, staleRefusal } from "./read_state.ts";
import { MAX_FILE_BYTES, type NativeTool, type ToolContext, type ToolResult } from "./types.ts";

async function run(input: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
  const filePath = requireString(input, "file_path");
  const content = requireString(input, "content", true);
  const bytes = new TextEncoder().encode(content).length;
  if (bytes > MAX_FILE_BYTES) {
    throw new ToolFailure(
      `Refused to write "${filePath}": content is ${bytes} bytes, over ${sizeLimitText()}`,
    );
  }
  // Opened beneath the roots (missing parents created there), checked, then written through
  // the descriptor: in place, not renamed over, to keep the file's mode and links.
  const file = await openConfined(filePath, ctx, { mode: "write", tool: "Write", verb: "write" });
  const stale = file.created
    ? undefined
    : staleRefusal(ctx, file.real, filePath, "write", file.stats);
  if (stale) {
    await file.handle.close();
    throw new ToolFailure(stale);
  }
  try {
    await replaceContent(file.handle, content);
    rememberFile(ctx, file.real, content, await file.handle.stat());
  } catch (e) {
    throw new ToolFailure(`Cannot write: ${fsErrorText(e, filePath)}`);
  } finally {
    await file.handle.close();
  }
  ctx.fileChanged(file.real);
  return { text: `${file.created ? "Created" : "Overwrote"} "${filePath}" (${bytes} bytes)` };
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

import { editTool } from "./edit.ts";
import { globTool } from "./glob.ts";
import { grepTool } from "./grep.ts";
import { readTool } from "./read.ts";
import type { NativeTool } from "./types.ts";
import { writeTool } from "./write.ts";

/** The confined file tools, in the order the model sees them (Bash is added apart). */
export const FILE_TOOLS: NativeTool[] = [readTool, writeTool, editTool, globTool, grepTool];

export { editTool, globTool, grepTool, readTool, writeTool };

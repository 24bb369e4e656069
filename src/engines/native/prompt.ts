import type { ChatTool } from "../../backends/chat_types.ts";
import type { NativeTool } from "./tools/types.ts";

/**
 * The system prompt: short on purpose. A 7B-30B model with a 4k-32k context reads it on
 * every turn, so every sentence has to earn its place.
 */
export function systemPrompt(options: {
  cwd: string;
  tools: readonly NativeTool[];
  append?: string;
}): string {
  const names = options.tools.map((t) => t.name);
  const lines = [
    `You are a careful coding agent. Working directory: ${options.cwd}`,
  ];
  if (names.length === 0) {
    lines.push("Answer from the material given. Say so when it is not enough.");
  } else {
    lines.push(
      `Tools: ${names.join(", ")}. Paths are relative to the working directory.`,
      "Look before you answer: read files and run commands rather than guess.",
    );
    if (!names.includes("Write") && !names.includes("Edit") && !names.includes("Bash")) {
      lines.push("This run is read-only: do not try to change files.");
    }
    lines.push(
      "Call tools one step at a time. When done, reply without tool calls: say what you did " +
        "and what you verified.",
    );
  }
  if (options.append?.trim()) lines.push(options.append.trim());
  return lines.join("\n");
}

/** The tools in the OpenAI `tools` shape. */
export function chatTools(tools: readonly NativeTool[]): ChatTool[] {
  return tools.map((t) => ({
    type: "function",
    function: { name: t.name, description: t.description, parameters: t.parameters },
  }));
}

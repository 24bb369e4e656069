/**
 * Whether an engine's final answer is a tool call written as text that nothing ran. Claude
 * Code runs only the structured `tool_use` blocks the endpoint returns; when a local model
 * writes its call as text instead (ollama/ollama#15529), Claude Code takes it for the answer
 * and the turn ends "successfully" with nothing done. The claude engine asks this of the
 * turn's result.
 */
import { findTextCalls } from "./find_calls.ts";

/** What an unrun call in `text` is, in words ("a Hermes-format call to Bash"); else undefined. */
export function unrunCall(text: string, toolNames: readonly string[]): string | undefined {
  if (text.trim() === "") return undefined;
  const scan = findTextCalls(text, toolNames);
  const first = scan.blocks[0]?.calls[0];
  if (first) {
    const count = scan.blocks.reduce((n, b) => n + b.calls.length, 0);
    const format = scan.blocks[0]!.format;
    return `${count === 1 ? "a call" : `${count} calls`} to ${JSON.stringify(first.name)}` +
      `${count > 1 ? " and others" : ""} in the ${format} text format`;
  }
  return scan.sign;
}

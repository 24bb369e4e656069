/**
 * Turns a reply whose tool calls were written as text (recover_calls.ts) into the reply the model
 * meant: structured `tool_calls` with ids and the prose around them as content. The loop then
 * runs them like any other call, and the history it keeps stays well-formed for both chat APIs
 * (every call answered by a role "tool" message with its id). A reply that looks like a call
 * but holds none that can be read is `unrun`: the loop answers it with what was wrong
 * (correctionText) instead of taking it for the final answer.
 */
import type { ChatToolCall } from "../../../backends/chat_types.ts";
import type { OfferedTool } from "./arguments.ts";
import { recoverTextCalls, type TextCallFormat } from "./recover_calls.ts";
import type { NativeTool } from "../tools/types.ts";

/** How one recovered call came in, for the loop and the transcript. */
export interface RecoveredCall {
  format: TextCallFormat;
  input: Record<string, unknown>;
  /** Why the call cannot run; it is answered with this as a tool error. */
  error?: string;
  /** Names read as the tool's own (`cmd -> command`). */
  mapped?: string[];
}

export type RecoveredReply =
  | {
    kind: "calls";
    /** The reply's text without the calls. */
    content: string;
    toolCalls: ChatToolCall[];
    /** By call id. */
    recovered: Map<string, RecoveredCall>;
  }
  /** The reply looks like an attempted call, and no call could be read from it. */
  | { kind: "unrun"; reason: string };

/** The tools a request offers, as recover_calls.ts checks them. */
export function offeredTools(tools: readonly NativeTool[]): OfferedTool[] {
  return tools.map((t) => ({ name: t.name, parameters: t.parameters }));
}

/**
 * The calls written as text in `content`, as structured calls, or the reply's attempt at a
 * call that cannot be read; undefined when it is an answer.
 */
export function recoverReply(
  content: string,
  offered: readonly OfferedTool[],
): RecoveredReply | undefined {
  const found = recoverTextCalls(content, offered);
  if (!found) return undefined;
  if (found.calls.length === 0) return { kind: "unrun", reason: found.unrun ?? "no call" };
  const toolCalls: ChatToolCall[] = [];
  const recovered = new Map<string, RecoveredCall>();
  for (const call of found.calls) {
    // Unique across turns, as the stream assembler makes them: a history with two equal ids
    // cannot tell which call an answer belongs to.
    const id = `call_${crypto.randomUUID()}`;
    toolCalls.push({
      id,
      type: "function",
      function: { name: call.name, arguments: JSON.stringify(call.arguments) },
    });
    recovered.set(id, {
      format: call.format,
      input: call.arguments,
      ...(call.error ? { error: call.error } : {}),
      ...(call.mapped ? { mapped: call.mapped } : {}),
    });
  }
  return { kind: "calls", content: found.text, toolCalls, recovered };
}

/** `Edit {"file_path": string, "replace_all"?: boolean}`: the shape a call must have. */
export function shapeHint(tool: OfferedTool): string {
  const required = new Set(tool.parameters.required ?? []);
  const keys = Object.entries(tool.parameters.properties).sort(([a], [b]) =>
    Number(required.has(b)) - Number(required.has(a))
  );
  const fields = keys.map(([key, spec]) =>
    `${JSON.stringify(key)}${required.has(key) ? "" : "?"}: ${String(spec.type ?? "value")}`
  );
  return `${tool.name} {${fields.join(", ")}}`;
}

/** Every offered tool's shape, for a model that called one that does not exist. */
function toolList(offered: readonly OfferedTool[]): string {
  return offered.map(shapeHint).join("; ");
}

/**
 * The tool error for a recovered call that cannot run: what was wrong and, for a tool that
 * exists, the shape its arguments must have; for one that does not, the tools there are.
 */
export function recoveredCallError(
  error: string,
  tool: OfferedTool | undefined,
  offered: readonly OfferedTool[],
): string {
  const hint = tool
    ? ` Call it again with arguments shaped like ${shapeHint(tool)}`
    : ` The tools are: ${toolList(offered)}`;
  return `Error: not run: ${error}.${hint}`;
}

/**
 * What the model is told when its reply looked like a tool call that cannot be read: as a
 * tool error would, with the tools and their parameters, and how to finish instead.
 */
export function correctionText(reason: string, offered: readonly OfferedTool[]): string {
  return `[ollama-delegate] Your last reply was not run: it looks like a tool call written as ` +
    `text (${reason}), and no tool ran. The tools are: ${toolList(offered)}. Call one of ` +
    `them with exactly those parameters, as a tool call; or, if the task is done, reply with ` +
    `your final answer as plain text, without tool-call markup.`;
}

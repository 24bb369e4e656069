/**
 * Turns a reply whose tool calls were written as text (recover_calls.ts) into the reply the model
 * meant: structured `tool_calls` with ids and the prose around them as content. The loop then
 * runs them like any other call, and the history it keeps stays well-formed for both chat APIs
 * (every call answered by a role "tool" message with its id).
 */
import type { ChatToolCall } from "../../../backends/chat_types.ts";
import type { OfferedTool } from "./arguments.ts";
import type { TextCallFormat } from "./formats.ts";
import { recoverTextCalls } from "./recover_calls.ts";
import type { NativeTool } from "../tools/types.ts";

/** How one recovered call came in, for the loop and the transcript. */
export interface RecoveredCall {
  format: TextCallFormat;
  input: Record<string, unknown>;
  /** Why the arguments cannot be used; the call is answered with this as a tool error. */
  error?: string;
}

export interface RecoveredReply {
  /** The reply's text without the calls. */
  content: string;
  toolCalls: ChatToolCall[];
  /** By call id. */
  recovered: Map<string, RecoveredCall>;
}

/** The tools a request offers, as recover_calls.ts checks them. */
export function offeredTools(tools: readonly NativeTool[]): OfferedTool[] {
  return tools.map((t) => ({ name: t.name, parameters: t.parameters }));
}

/**
 * The calls written as text in `content`, as structured calls; undefined when the reply holds
 * none for the tools in `offered` (then it is an answer).
 */
export function recoverReply(
  content: string,
  offered: readonly OfferedTool[],
): RecoveredReply | undefined {
  const found = recoverTextCalls(content, offered);
  if (!found) return undefined;
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
    });
  }
  return { content: found.text, toolCalls, recovered };
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

/** The tool error for a recovered call whose arguments do not fit the tool. */
export function recoveredCallError(
  error: string,
  tool: OfferedTool | undefined,
): string {
  const hint = tool ? ` Call it again with arguments shaped like ${shapeHint(tool)}` : "";
  return `Error: not run: ${error}.${hint}`;
}

/**
 * Running the tool calls of one model reply in the native loop: one call from its arguments
 * (structured or recovered from text) through the permission policy to the tool and back as a
 * `role: "tool"` message, with activity and transcript entries on the way; and the answers for
 * calls left unrun when the loop stops, since every call needs an answer for the history to
 * stay valid.
 */
import type { ChatMessage, ChatToolCall } from "../../backends/chat_types.ts";
import { describeCall } from "../activity_detail.ts";
import type {
  Activity,
  PermissionDecision,
  PermissionDenial,
  PermissionQuestion,
  TranscriptEntry,
} from "../types.ts";
import { fixedRefusal, type PathPurpose } from "../../guard/path_refusal.ts";
import type { ToolPolicy } from "./permissions.ts";
import {
  offeredTools,
  type RecoveredCall,
  recoveredCallError,
} from "./text_calls/recover_reply.ts";
import { ignoredNote, ignoredParameters } from "./tools/claude_params.ts";
import type { ToolContext } from "./tools/types.ts";

/** What running a tool call needs from the loop's caller. */
export interface ToolCallDeps {
  policy: ToolPolicy;
  ctx: ToolContext;
  activity(a: Activity): void;
  /** A tool call; `recovered` when the model wrote it as text. */
  toolCall(info?: { recovered?: boolean }): void;
  transcript(entry: TranscriptEntry): void;
  /** A running command's output as it comes, by the id of the call that runs it. */
  output?(callId: string, text: string): void;
  /** Appends messages to the durable history as they are made. */
  remember(messages: ChatMessage[]): void;
  /** Puts a call its permissions withhold to the person (the job's sink); absent: denied. */
  ask?(question: PermissionQuestion, signal?: AbortSignal): Promise<PermissionDecision>;
  /** Aborted when the job stops: a question still open is then withdrawn. */
  signal?: AbortSignal;
}

/** What a file tool does with the path it names, for the refusals no answer lifts. */
const PURPOSE: Readonly<Record<string, PathPurpose>> = {
  Write: "write",
  Edit: "write",
  Read: "read",
  Glob: "list",
  Grep: "list",
};

/**
 * Whether the person may be asked about a call the policy refuses, and about what: the exact
 * command, or the path. Never for a path that stays refused whatever the answer (a host-run
 * path, a secret file, a credential store, outside the roots): the delegate is told why instead.
 */
function questionFor(
  name: string,
  input: Record<string, unknown>,
  deps: ToolCallDeps,
): { question: PermissionQuestion } | { fixed: string } | undefined {
  const reason = deps.ask ? deps.policy.askFor(name, input) : undefined;
  if (reason === undefined) return undefined;
  if (name === "Bash") {
    const command = typeof input.command === "string" ? input.command : "";
    return { question: { tool: name, detail: command, reason } };
  }
  const path = typeof input.file_path === "string"
    ? input.file_path
    : typeof input.path === "string"
    ? input.path
    : deps.ctx.cwd;
  const purpose = PURPOSE[name];
  const fixed = purpose && fixedRefusal(deps.ctx, path, purpose);
  if (fixed) {
    return { fixed: `Refused without asking: ${fixed}. No permission mode or answer allows it` };
  }
  return { question: { tool: name, detail: path, reason } };
}

type ToolMessage = Extract<ChatMessage, { role: "tool" }>;

/** Runs one call and returns its answer for the conversation; refusals go into `result`. */
export async function runCall(
  call: ChatToolCall,
  deps: ToolCallDeps,
  result: { denials: PermissionDenial[] },
  recovered: RecoveredCall | undefined,
): Promise<ToolMessage> {
  const name = call.function.name;
  deps.toolCall(recovered ? { recovered: true } : undefined);
  let input: Record<string, unknown>;
  let answer: { text: string; isError: boolean };
  const marks = recovered
    ? { recovered: recovered.format, ...(recovered.mapped ? { mapped: recovered.mapped } : {}) }
    : {};
  if (recovered) {
    input = recovered.input;
    if (recovered.error) {
      // A call that cannot run (arguments that do not fit, a tool not offered, a call cut
      // off) goes back to the model, which can correct it.
      const offered = offeredTools(deps.policy.tools);
      const tool = offered.find((t) => t.name === name);
      answer = { text: recoveredCallError(recovered.error, tool, offered), isError: true };
      deps.activity({ kind: "tool", name, detail: tool ? "(bad arguments)" : "(no such tool)" });
      deps.transcript({ kind: "tool_call", id: call.id, name, input, ...marks });
      return finish();
    }
  } else {
    try {
      const args = call.function.arguments;
      const parsed = args.trim() === "" ? {} : JSON.parse(args);
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
        throw new Error("arguments must be a JSON object");
      }
      input = parsed as Record<string, unknown>;
    } catch (e) {
      input = {};
      answer = {
        text: `Error: the arguments of ${name} are not valid JSON (${(e as Error).message}). ` +
          `Call it again with a JSON object`,
        isError: true,
      };
      deps.activity({ kind: "tool", name, detail: "(bad arguments)" });
      deps.transcript({ kind: "tool_call", id: call.id, name, input: call.function.arguments });
      return finish();
    }
  }
  const offered = deps.policy.tools.find((t) => t.name === name);
  const ignored = offered ? ignoredParameters(name, offered.parameters.properties, input) : [];
  deps.activity({ kind: "tool", name, detail: describeCall(name, input) });
  deps.transcript({
    kind: "tool_call",
    id: call.id,
    name,
    input,
    ...marks,
    ...(ignored.length > 0 ? { ignored } : {}),
  });
  const refusal = deps.policy.refusal(name, input);
  if (refusal) {
    // A permission the mode or an allow rule withholds: the person may give it (issue 31).
    const asking = questionFor(name, input, deps);
    const decision = asking && "question" in asking
      ? await deps.ask!(asking.question, deps.signal)
      : undefined;
    if (!decision?.allow) {
      result.denials.push({ tool: name, detail: describeCall(name, input) });
      const fixed = asking && "fixed" in asking ? asking.fixed : undefined;
      answer = { text: decision?.message ?? fixed ?? refusal, isError: true };
      return finish();
    }
  }
  const tool = offered!;
  try {
    const out = await tool.run(input, callContext(deps, call.id));
    const notes = [ignoredNote(name, ignored), mappedNote(recovered?.mapped)].filter(Boolean);
    answer = {
      text: [out.text, ...notes].join("\n"),
      isError: out.isError ?? false,
    };
  } catch (e) {
    answer = { text: `Error: ${name} failed: ${(e as Error).message}`, isError: true };
  }
  return finish();

  function finish(): ToolMessage {
    if (answer.isError) deps.activity({ kind: "error", text: `${name}: ${answer.text}` });
    deps.transcript({
      kind: "tool_result",
      id: call.id,
      name,
      text: answer.text,
      isError: answer.isError,
    });
    return { role: "tool", tool_call_id: call.id, name, content: answer.text };
  }
}

/** The tools' context for one call: its output, when it has any, goes out under its id. */
function callContext(deps: ToolCallDeps, id: string): ToolContext {
  const output = deps.output;
  if (!output) return deps.ctx;
  // The copy shares what the tools keep across calls (what the model read), made here first.
  deps.ctx.reads ??= new Map();
  return { ...deps.ctx, output: (text) => output(id, text) };
}

/**
 * What the model is told of the names it wrote that were read as others (`cmd` as `command`),
 * so that its next call uses the tool's own.
 */
function mappedNote(mapped: readonly string[] | undefined): string | undefined {
  if (!mapped || mapped.length === 0) return undefined;
  const pairs = mapped.map((m) => m.split(" -> ").map((s) => `"${s}"`).join(" as "));
  return `Note: read ${pairs.join(", ")}; use the tool's own names next time.`;
}

/** Answers `from` and the calls after it with `text`, without running them. */
export function answerRest(
  messages: ChatMessage[],
  deps: Pick<ToolCallDeps, "remember">,
  calls: readonly ChatToolCall[],
  from: ChatToolCall,
  text: string,
): void {
  const rest = calls.slice(calls.indexOf(from));
  const answers: ChatMessage[] = rest.map((c) => ({
    role: "tool",
    tool_call_id: c.id,
    name: c.function.name,
    content: text,
  }));
  messages.push(...answers);
  deps.remember(answers);
}

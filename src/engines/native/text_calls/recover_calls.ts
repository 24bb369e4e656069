/**
 * Tool calls a model wrote as text, matched to the tools this engine offered. Local models
 * often emit a call in their own chat format when the server's parser misses it, and the
 * reply then arrives as plain content with no structured call (ollama/ollama#13931); the
 * formats are read in ../../text_calls/ (find_calls.ts lists them), the same reading the
 * claude engine uses to say a turn ended on an unrun call.
 *
 * Each call is matched to an offered tool by name, letter case aside (`bash` is Bash), its
 * parameters read under the names small models use (aliases.ts: `cmd` is `command`), its
 * values typed by the schema and checked against it. A call that cannot run (a tool not
 * offered, arguments that do not fit, a call cut off) comes back with the error the model is
 * answered with, so that it can try again. A reply that looks like a call but holds none that
 * can be read comes back as `unrun`, with what was seen.
 */
import { isObject } from "../../../platform/json_object.ts";
import { findTextCalls } from "../../text_calls/find_calls.ts";
import { parseLoose } from "../../text_calls/scan.ts";
import type { RawCall, TextCallFormat } from "../../text_calls/types.ts";
import { checkArguments, type OfferedTool } from "./arguments.ts";
import { typedValues, withAliases } from "./aliases.ts";

export type { TextCallFormat };

/** A call recovered from a reply's text. */
export interface TextCall {
  /** The offered tool's name when the call names one (in any letter case), else as written. */
  name: string;
  /** The arguments, as read, typed and renamed; meaningful only when `error` is absent. */
  arguments: Record<string, unknown>;
  format: TextCallFormat;
  /** Why the call cannot run: goes back to the model as the tool's error. */
  error?: string;
  /** Names read as the tool's own (`cmd -> command`, `bash -> Bash`). */
  mapped?: string[];
}

export interface Recovered {
  calls: TextCall[];
  /** The reply without the calls: what the model said around them. */
  text: string;
  /** When `calls` is empty: what in the reply looked like an attempted call. */
  unrun?: string;
}

/**
 * The calls written as text in `content`, for the tools in `offered`; undefined when the
 * reply holds none and does not look like an attempt at one (then it is an answer).
 */
export function recoverTextCalls(
  content: string,
  offered: readonly OfferedTool[],
): Recovered | undefined {
  if (offered.length === 0) return undefined;
  const scan = findTextCalls(content, offered.map((t) => t.name));
  if (scan.blocks.length === 0) {
    return scan.sign ? { calls: [], text: content.trim(), unrun: scan.sign } : undefined;
  }
  const calls = scan.blocks.flatMap((b) => b.calls.map((c) => matchCall(c, b.format, offered)));
  let rest = "";
  let at = 0;
  for (const b of scan.blocks) {
    rest += content.slice(at, b.start);
    at = b.end;
  }
  rest += content.slice(at);
  return { calls, text: rest.trim() };
}

/** The offered tool named `name`: by its exact name, else letter case aside. */
export function offeredNamed(
  offered: readonly OfferedTool[],
  name: string,
): OfferedTool | undefined {
  const bare = name.replace(/^functions\./, "");
  return offered.find((t) => t.name === bare) ??
    offered.find((t) => t.name.toLowerCase() === bare.toLowerCase());
}

function matchCall(
  raw: RawCall,
  format: TextCallFormat,
  offered: readonly OfferedTool[],
): TextCall {
  const tool = offeredNamed(offered, raw.name);
  if (!tool) {
    return {
      name: raw.name,
      arguments: isObject(raw.args) ? raw.args : {},
      format,
      error: `there is no tool "${raw.name}" here`,
    };
  }
  const mapped = tool.name === raw.name ? [] : [`${raw.name} -> ${tool.name}`];
  if (raw.problem) {
    return { name: tool.name, arguments: {}, format, error: raw.problem, ...note(mapped) };
  }
  if (!isObject(raw.args)) {
    return {
      name: tool.name,
      arguments: {},
      format,
      error: `its arguments are not a JSON object (${JSON.stringify(raw.args).slice(0, 80)})`,
      ...note(mapped),
    };
  }
  const renamed = withAliases(raw.args, tool.parameters);
  const args = raw.textValues
    ? typedValues(renamed.input, tool.parameters, parseLoose)
    : renamed.input;
  mapped.push(...renamed.mapped);
  const error = checkArguments(tool, args);
  return { name: tool.name, arguments: args, format, ...(error ? { error } : {}), ...note(mapped) };
}

const note = (mapped: string[]) => mapped.length > 0 ? { mapped } : {};

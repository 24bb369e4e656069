/** What the reading of tool calls written as text finds (find_calls.ts). */

/**
 * The status word of a job that ended on tool calls written as text that nothing could run
 * (native engine: past its corrections; claude engine: a turn whose answer is one). Its error
 * starts `tool_call_unparsed: `; the quality ledger counts such jobs.
 */
export const TOOL_CALL_UNPARSED = "tool_call_unparsed";

/** The text format a call was written in, as the transcript and `doctor --probe` name it. */
export type TextCallFormat =
  /** `<tool_call>{json}</tool_call>` (Hermes, Qwen 2.5/3), also `<tools>`, `<function_call>` */
  | "hermes"
  /** `<function=Name><parameter=k>v</parameter></function>` (Qwen3-Coder), tags or not */
  | "qwen3-coder"
  /** `<tool_call>Name<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>` (GLM 4.5+) */
  | "glm"
  /** A reply that is `Name` on a line and its JSON arguments below (GLM-4-0414) */
  | "glm-markerless"
  /** A reply that is only `{"name": ..., "parameters": ...}` objects (Llama 3.x) */
  | "llama-json"
  /** `<|python_tag|>` then a call (Llama 3.1) */
  | "python-tag"
  /** `<|python_start|>[Name(k=v)]<|python_end|>` (Llama 4) */
  | "llama4-python"
  /** A reply that is only `[Name(k="v"), ...]` (Llama 3.2, pythonic) */
  | "pythonic"
  /** `[TOOL_CALLS][{...}]` (Mistral v3) or `[TOOL_CALLS]Name[ARGS]{...}` (v11, Devstral) */
  | "mistral"
  /** A fenced ```json block holding a call, closing the reply */
  | "fenced-json"
  /** `<minimax:tool_call><invoke name=...><parameter name=...>` (MiniMax; also Claude-style) */
  | "minimax"
  /** `<｜DSML｜invoke name=...>` (DeepSeek V3.2 and later) */
  | "dsml"
  /** `<｜tool▁calls▁begin｜>...<｜tool▁sep｜>Name ...` (DeepSeek V3, R1, V3.1) */
  | "deepseek"
  /** `<|tool_calls_section_begin|> ... functions.Name:0 ...` (Kimi K2) */
  | "kimi-k2"
  /** `<|tool_call>call:Name{k:<|"|>v<|"|>}<tool_call|>` (Gemma 4) */
  | "gemma4"
  /** `<|channel|>commentary to=functions.Name ...<|message|>{...}<|call|>` (gpt-oss) */
  | "harmony"
  /** `[TOOL_REQUEST]{...}[END_TOOL_REQUEST]` (LM Studio's own format) */
  | "lmstudio"
  /** A reply that is a line `bash` and the command under it */
  | "bash-line";

/** One call as written: its name and arguments as read, before any tool is matched. */
export interface RawCall {
  name: string;
  /** The arguments: an object when they could be read, else what was there. */
  args: unknown;
  /**
   * The values came as text (XML-like formats: `<parameter=timeout>5</parameter>`), to be
   * converted by the tool's schema (integer, boolean...).
   */
  textValues?: true;
  /** Why the call cannot be run as written (cut off, arguments unreadable), for the model. */
  problem?: string;
}

/** Where in the reply calls were found, in which format. */
export interface FoundBlock {
  start: number;
  end: number;
  format: TextCallFormat;
  calls: RawCall[];
}

/** What a reply holds: the calls found and, when none could be read, why it looks like one. */
export interface TextCallScan {
  blocks: FoundBlock[];
  /**
   * Set when the reply looks like an attempted call but no call could be read from it
   * (a leaked special token, a truncated payload, an imitation of a client's call text): what
   * was seen, worded for the model.
   */
  sign?: string;
}

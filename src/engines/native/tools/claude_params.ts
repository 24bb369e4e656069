/**
 * Parameters of Claude Code's tools that ours, of the same names, do not take. Models trained
 * on Claude Code's transcripts send them (`description` on nearly every Bash call); a call is
 * still the call the model meant, so they are ignored and noted rather than refused, whether
 * the call came structured or was recovered from text.
 */
import type { ToolName } from "./types.ts";

/**
 * The parameters of Claude Code's tool of each name that ours lacks: its tool input types
 * (`sdk-tools.d.ts` in its package: BashInput, FileReadInput, GrepInput; Claude Code 2.1)
 * less our tools' parameters. Write, Edit and Glob take all of Claude Code's.
 * tests/engines/native/tools/claude_params_test.ts keeps the list and our schemas apart.
 */
export const CLAUDE_CODE_ONLY: Readonly<Record<ToolName, readonly string[]>> = {
  Bash: ["description", "run_in_background", "dangerouslyDisableSandbox"],
  Read: ["pages", "allow_large"],
  Write: [],
  Edit: [],
  Glob: [],
  Grep: ["-B", "-A", "-C", "context", "-o", "type", "offset", "multiline"],
};

/** Parameters that only label a call: without them the call does exactly what it says. */
const LABELS: ReadonlySet<string> = new Set(["description"]);

const isToolName = (name: string): name is ToolName => Object.hasOwn(CLAUDE_CODE_ONLY, name);

/** Whether `key` is a parameter of Claude Code's tool `tool` that ours does not take. */
export function claudeCodeOnly(tool: string, key: string): boolean {
  return isToolName(tool) && CLAUDE_CODE_ONLY[tool].includes(key);
}

/**
 * The keys of `input` that our tool `tool` does not take (not in `properties`) and Claude
 * Code's tool of that name does: ignored, and noted.
 */
export function ignoredParameters(
  tool: string,
  properties: Readonly<Record<string, unknown>>,
  input: Readonly<Record<string, unknown>>,
): string[] {
  return Object.keys(input).filter((k) => !Object.hasOwn(properties, k) && claudeCodeOnly(tool, k));
}

/**
 * What the model is told about ignored parameters, or undefined when all only label the
 * call: a model that asked for `run_in_background` or `-C` must know it did not get it.
 */
export function ignoredNote(tool: string, ignored: readonly string[]): string | undefined {
  const meaningful = ignored.filter((k) => !LABELS.has(k));
  if (meaningful.length === 0) return undefined;
  const names = meaningful.map((k) => `"${k}"`).join(", ");
  return `Note: this ${tool} does not take ${names}; the call ran without ${
    meaningful.length === 1 ? "it" : "them"
  }.`;
}

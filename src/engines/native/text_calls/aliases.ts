/**
 * The names small models give the parameters of the Claude-Code-named tools. A model trained
 * on other agents' tools writes `cmd` for Bash's `command` and `path` or `filePath` for
 * Read's `file_path` (TokenRhythm/opensquilla#985, ml-explore/mlx-openai-server#124's
 * `filePath`); the call still says what it means. A name is read as the tool's own only when
 * the tool has that parameter, the call does not also give it, and the tool has no parameter
 * of the written name. Each reading is noted in the transcript and told to the model.
 */
import type { JsonSchema } from "../tools/types.ts";

/** For each parameter of our tools, the other names it is written under. */
const ALIASES: Readonly<Record<string, readonly string[]>> = {
  command: ["cmd", "command_line", "commandLine", "shell_command", "bash_command", "script"],
  file_path: [
    "path",
    "filepath",
    "filePath",
    "file",
    "filename",
    "fileName",
    "file_name",
    "target_file",
    "absolute_path",
  ],
  content: ["contents", "file_content", "fileContent", "text"],
  old_string: ["old_str", "oldString", "old_text", "oldText", "search"],
  new_string: ["new_str", "newString", "new_text", "newText", "replace", "replacement"],
  pattern: ["regex", "query", "search_pattern", "glob_pattern", "file_pattern"],
  path: ["directory", "dir", "folder", "search_path"],
  replace_all: ["replaceAll"],
  timeout: ["timeout_ms", "timeoutMs"],
};

/** `input` with aliases read as the tool's own parameters, and what was read so. */
export function withAliases(
  input: Record<string, unknown>,
  schema: JsonSchema,
): { input: Record<string, unknown>; mapped: string[] } {
  const props = schema.properties;
  const out = { ...input };
  const mapped: string[] = [];
  for (const [target, aliases] of Object.entries(ALIASES)) {
    if (!Object.hasOwn(props, target) || Object.hasOwn(out, target)) continue;
    const alias = aliases.find((a) => Object.hasOwn(out, a) && !Object.hasOwn(props, a));
    if (alias === undefined) continue;
    out[target] = out[alias];
    delete out[alias];
    mapped.push(`${alias} -> ${target}`);
  }
  return { input: out, mapped };
}

/**
 * Values written as text (`<parameter=timeout>5</parameter>`) as the schema types them:
 * numbers, booleans, JSON for objects and lists; a value that does not convert stays text
 * (and the schema check then says what is wrong).
 */
export function typedValues(
  input: Record<string, unknown>,
  schema: JsonSchema,
  parse: (text: string) => unknown,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    const type = schema.properties[key]?.type;
    out[key] = typeof value === "string" ? typed(value, type, parse) : value;
  }
  return out;
}

function typed(text: string, type: unknown, parse: (text: string) => unknown): unknown {
  const t = text.trim();
  switch (type) {
    case "integer":
    case "number": {
      const n = Number(t);
      return t !== "" && Number.isFinite(n) ? n : text;
    }
    case "boolean":
      return t === "true" ? true : t === "false" ? false : text;
    case "object":
    case "array":
      return parse(t) ?? text;
    default:
      return text;
  }
}

/**
 * The arguments of a tool call a model wrote as text, checked against the offered tool's
 * schema, with an error worded for the model to correct.
 */
import { isObject } from "../../../platform/json_object.ts";
import { claudeCodeOnly } from "../tools/claude_params.ts";
import type { JsonSchema } from "../tools/types.ts";

export interface OfferedTool {
  name: string;
  parameters: JsonSchema;
}

/**
 * Checks arguments against a tool's compact schema; the error text is for the model. A
 * parameter only Claude Code's tool of that name takes is no error (tools/claude_params.ts).
 */
export function checkArguments(tool: OfferedTool, args: unknown): string | undefined {
  if (!isObject(args)) return `arguments for ${tool.name} must be a JSON object`;
  const props = tool.parameters.properties;
  const missing = (tool.parameters.required ?? []).filter((k) => !(k in args));
  if (missing.length > 0) {
    return `${tool.name} needs ${missing.map((k) => `"${k}"`).join(", ")}`;
  }
  for (const [key, value] of Object.entries(args)) {
    const spec = props[key];
    // As for a structured call: a parameter of Claude Code's tool of that name is ignored.
    if (!spec && claudeCodeOnly(tool.name, key)) continue;
    if (!spec) {
      return `${tool.name} has no parameter "${key}" (it takes ${Object.keys(props).join(", ")})`;
    }
    const type = spec.type;
    const ok = type === "string"
      ? typeof value === "string"
      : type === "integer"
      ? Number.isInteger(value)
      : type === "number"
      ? typeof value === "number"
      : type === "boolean"
      ? typeof value === "boolean"
      : true;
    if (!ok) {
      const kind = String(type);
      return `${tool.name}: "${key}" must be ${/^[aeiou]/.test(kind) ? "an" : "a"} ${kind}`;
    }
    if (Array.isArray(spec.enum) && !spec.enum.includes(value)) {
      return `${tool.name}: "${key}" must be one of ${spec.enum.join(", ")}`;
    }
  }
  return undefined;
}

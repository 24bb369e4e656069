import type { ToolResult } from "./types.ts";

/** A path the file tools will not touch. The message is meant for the model. */
export class PathRefused extends Error {
  override name = "PathRefused";
}

/** A tool input field that is missing or of the wrong type. */
export class FieldError extends Error {
  override name = "FieldError";
}

/** A failure a tool reports to the model as an error result (not a crash). */
export class ToolFailure extends Error {
  override name = "ToolFailure";
}

type Input = Record<string, unknown>;

/** A required string field; `allowEmpty` for contents such as Write's `content`. */
export function requireString(input: Input, key: string, allowEmpty = false): string {
  const value = input[key];
  if (value === undefined || value === null) throw new FieldError(`"${key}" is required (string)`);
  if (typeof value !== "string") {
    throw new FieldError(`"${key}" must be a string, got ${typeof value}`);
  }
  if (!allowEmpty && value === "") throw new FieldError(`"${key}" must not be empty`);
  return value;
}

/** An optional string field; null counts as absent, since small models often send it. */
export function optionalString(input: Input, key: string): string | undefined {
  const value = input[key];
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value !== "string") {
    throw new FieldError(`"${key}" must be a string, got ${typeof value}`);
  }
  return value;
}

/** An optional integer >= min; a numeric string such as "10" is accepted. */
export function optionalInt(input: Input, key: string, min: number): number | undefined {
  const value = input[key];
  if (value === undefined || value === null || value === "") return undefined;
  const n = typeof value === "string" && /^\s*-?\d+\s*$/.test(value) ? Number(value) : value;
  if (typeof n !== "number" || !Number.isInteger(n)) {
    throw new FieldError(`"${key}" must be an integer, got ${JSON.stringify(value)}`);
  }
  if (n < min) throw new FieldError(`"${key}" must be at least ${min}, got ${n}`);
  return n;
}

/** An optional boolean; "true" and "false" strings are accepted. */
export function optionalBool(input: Input, key: string): boolean | undefined {
  const value = input[key];
  if (value === undefined || value === null) return undefined;
  if (value === "true") return true;
  if (value === "false") return false;
  if (typeof value !== "boolean") {
    throw new FieldError(`"${key}" must be true or false, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** An optional field restricted to a few string values. */
export function optionalChoice<T extends string>(
  input: Input,
  key: string,
  choices: readonly T[],
): T | undefined {
  const value = optionalString(input, key);
  if (value === undefined) return undefined;
  if (!(choices as readonly string[]).includes(value)) {
    throw new FieldError(`"${key}" must be one of ${choices.join(", ")}, got "${value}"`);
  }
  return value as T;
}

/** The text of a node:fs error, without the stack-ish prefix Node puts on it. */
export function fsErrorText(e: unknown, shown: string): string {
  const code = (e as { code?: unknown }).code;
  switch (code) {
    case "ENOENT":
      return `"${shown}" does not exist`;
    case "ENOTDIR":
      return `a parent of "${shown}" is not a directory`;
    case "EACCES":
    case "EPERM":
      return `permission denied for "${shown}"`;
    case "ELOOP":
      return `"${shown}" is a symbolic link, which is not written through`;
    case "EISDIR":
      return `"${shown}" is a directory`;
    default:
      return `"${shown}": ${(e as Error).message ?? String(e)}`;
  }
}

/**
 * Runs a tool body and turns every failure into an error result: tools never throw out
 * of run() (see NativeTool). Unexpected errors are reported too, named as such.
 */
export async function guard(name: string, body: () => Promise<ToolResult>): Promise<ToolResult> {
  try {
    return await body();
  } catch (e) {
    if (e instanceof FieldError) {
      return { text: `${name}: invalid input: ${e.message}`, isError: true };
    }
    if (e instanceof PathRefused || e instanceof ToolFailure) {
      return { text: e.message, isError: true };
    }
    return { text: `${name} failed: ${e instanceof Error ? e.message : String(e)}`, isError: true };
  }
}

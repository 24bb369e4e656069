import { readFile, stat } from "node:fs/promises";
import { resolve } from "node:path";
import { z } from "zod";
import { DelegateError } from "../errors.ts";
import { ENGINES, PERMISSION_MODES } from "../settings/fields.ts";

/** The longest prompt we accept, inline or from a file. */
export const MAX_PROMPT_BYTES = 10 * 1024 * 1024;

// Limits are checked in refinements rather than as JSON Schema keywords: every keyword is
// sent to the orchestrator with the tool list on each turn (issue 5: descriptions < 2,500
// tokens), and the limits are only there to refuse abuse, not to guide the model.

/** A list of strings, each non-empty and at most `maxChars`, at most `maxItems` of them. */
function stringList(
  what: string,
  maxItems: number,
  maxChars: number,
  check?: (s: string) => string | undefined,
) {
  return z.array(z.string()).superRefine((list, ctx) => {
    if (list.length > maxItems) {
      ctx.addIssue({ code: "custom", message: `${what}: at most ${maxItems} entries` });
    }
    for (const item of list) {
      const problem = item === ""
        ? "entries cannot be empty"
        : item.length > maxChars
        ? `entries are at most ${maxChars} characters`
        : check?.(item);
      if (problem) {
        ctx.addIssue({ code: "custom", message: `${what}: ${problem}` });
        return;
      }
    }
  });
}

const toolRules = () =>
  stringList(
    "tool rules",
    100,
    500,
    (s) =>
      /[\r\n]/.test(s) || s.startsWith("-")
        ? "a tool rule is a name like Read or Bash(git *), without line breaks or a leading '-'"
        : undefined,
  );

const maxChars = (what: string, max: number) =>
  z.string().refine((s) => s.length <= max, `${what} is at most ${max} characters`);

const waitSeconds = z.number().min(0, "wait_seconds must be 0 or more")
  .max(600, "wait_seconds must be at most 600; poll with delegate_status for longer waits")
  .optional().describe("Block up to N seconds for the job to finish (0-600)");

/** zod shapes of the tool inputs: the single source of truth for names and ranges. */
export const shapes = {
  start: {
    prompt: z.string().optional().describe("The task. Use this or prompt_file"),
    prompt_file: z.string().optional().describe("Path of a file holding the prompt"),
    model: z.string().optional().describe("Ollama model; defaults to the configured default"),
    cwd: z.string().optional().describe("Working directory of the delegate (must exist)"),
    permission_mode: z.enum(PERMISSION_MODES).optional(),
    allowed_tools: toolRules().optional().describe(
      'e.g. ["Read","Grep","Bash(git *)"]',
    ),
    disallowed_tools: toolRules().optional().describe('e.g. ["Write","Edit"]'),
    append_system_prompt: maxChars("append_system_prompt", 100_000).optional(),
    max_turns: z.number().int("max_turns must be a whole number").min(
      1,
      "max_turns must be at least 1",
    )
      .max(1000, "max_turns must be at most 1000").optional(),
    add_dirs: stringList("add_dirs", 50, 4096).optional().describe(
      "Extra directories the delegate may use",
    ),
    engine: z.enum(ENGINES).optional().describe(
      "claude (Claude Code) or native (lean loop for small local models)",
    ),
    backend: maxChars("backend", 64).optional().describe("native: a configured backend"),
    files: stringList("files", 200, 4096).optional().describe(
      "native: files read server-side into the prompt; with allowed_tools [] a one-shot",
    ),
    wait_seconds: waitSeconds,
  },
  followup: {
    job_id: z.string().optional().describe("A job of the session to continue"),
    session_id: z.string().optional().describe("Or the session itself"),
    prompt: z.string().optional(),
    prompt_file: z.string().optional(),
    permission_mode: z.enum(PERMISSION_MODES).optional(),
    allowed_tools: toolRules().optional(),
    disallowed_tools: toolRules().optional(),
    append_system_prompt: maxChars("append_system_prompt", 100_000).optional(),
    max_turns: z.number().int().min(1).max(1000).optional(),
    add_dirs: stringList("add_dirs", 50, 4096).optional(),
    wait_seconds: waitSeconds,
  },
  status: {
    job_id: z.string(),
    wait_seconds: waitSeconds,
    progress_limit: z.number().int().min(1, "progress_limit must be at least 1")
      .max(100, "progress_limit must be at most 100").optional()
      .describe("Activity lines to show (1-100, default 15)"),
  },
  result: { job_id: z.string(), wait_seconds: waitSeconds },
  cancel: { job_id: z.string() },
  usage: {
    days: z.number().int().min(0).max(3650).optional().describe(
      "Last N days (default 30; 0 = all)",
    ),
  },
  list: {
    state: z.enum(["queued", "running", "completed", "failed", "cancelled", "interrupted"])
      .optional(),
    limit: z.number().int().min(1, "limit must be at least 1").max(100, "limit must be at most 100")
      .optional(),
  },
};

/** Reads the prompt from exactly one of `prompt` and `prompt_file`. */
export async function readPrompt(
  args: { prompt?: string | undefined; prompt_file?: string | undefined },
  serverCwd: string,
): Promise<string> {
  if (args.prompt !== undefined && args.prompt_file !== undefined) {
    throw new DelegateError("Cannot use both prompt and prompt_file: pass exactly one of them");
  }
  if (args.prompt_file !== undefined) {
    const path = resolve(serverCwd, args.prompt_file);
    let bytes: Uint8Array;
    try {
      const info = await stat(path);
      if (!info.isFile()) {
        throw new DelegateError(`Cannot read prompt_file "${path}": it is not a file`);
      }
      if (info.size > MAX_PROMPT_BYTES) {
        throw new DelegateError(
          `Cannot read prompt_file "${path}": it is over ${MAX_PROMPT_BYTES} bytes`,
        );
      }
      bytes = await readFile(path);
    } catch (e) {
      if (e instanceof DelegateError) throw e;
      throw new DelegateError(`Cannot read prompt_file "${path}": ${(e as Error).message}`, {
        cause: e,
      });
    }
    const text = new TextDecoder().decode(bytes);
    if (text.trim() === "") {
      throw new DelegateError(`Cannot use prompt_file "${path}": it is empty`);
    }
    return text;
  }
  if (args.prompt === undefined) {
    throw new DelegateError("Cannot start without a task: pass prompt or prompt_file");
  }
  if (args.prompt.trim() === "") {
    throw new DelegateError("Cannot use an empty prompt: say what to do");
  }
  if (new TextEncoder().encode(args.prompt).length > MAX_PROMPT_BYTES) {
    throw new DelegateError(`Cannot use a prompt over ${MAX_PROMPT_BYTES} bytes: use prompt_file`);
  }
  return args.prompt;
}

/** Resolves a directory from a tool call and checks that it exists. */
export async function existingDir(path: string, base: string, what: string): Promise<string> {
  const full = resolve(base, path);
  let isDir = false;
  try {
    isDir = (await stat(full)).isDirectory();
  } catch (e) {
    throw new DelegateError(
      `Cannot use ${what} "${full}": ${
        (e as NodeJS.ErrnoException).code === "ENOENT" ? "it does not exist" : (e as Error).message
      }`,
    );
  }
  if (!isDir) throw new DelegateError(`Cannot use ${what} "${full}": it is not a directory`);
  return full;
}

/** Resolves and checks every `add_dirs` entry against `base`. */
export async function existingDirs(paths: readonly string[], base: string): Promise<string[]> {
  const out: string[] = [];
  for (const path of paths) out.push(await existingDir(path, base, "add_dirs entry"));
  return out;
}

/** Resolves `files` entries against `base` and checks each is a readable file. */
export async function existingFiles(paths: readonly string[], base: string): Promise<string[]> {
  const out: string[] = [];
  for (const path of paths) {
    const full = resolve(base, path);
    let isFile = false;
    try {
      isFile = (await stat(full)).isFile();
    } catch (e) {
      throw new DelegateError(
        `Cannot use file "${full}": ${
          (e as NodeJS.ErrnoException).code === "ENOENT"
            ? "it does not exist"
            : (e as Error).message
        }`,
      );
    }
    if (!isFile) throw new DelegateError(`Cannot use file "${full}": it is not a regular file`);
    out.push(full);
  }
  return out;
}

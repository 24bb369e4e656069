/**
 * One-shot with files (like mcp-delegate's `delegate_task`): the server reads the files and
 * puts them in the prompt, so their bytes never pass through the orchestrator's context.
 * Nothing is cut silently: a file that does not fit or is binary is left out and named.
 */
import type { OpenedFile } from "../../platform/open_beneath/open_beneath.ts";
import { DelegateError } from "../../errors.ts";
import type { GuardIdentities } from "../../guard/identities.ts";
import { openConfined } from "./tools/confine.ts";
import { displayPath } from "../../guard/real_paths.ts";
import { readCapped } from "./tools/file_io.ts";
import { MAX_FILE_BYTES } from "./tools/types.ts";
import { estimateTokens } from "../../models/tokens.ts";
import { DEFAULT_FILES_BUDGET } from "../../models/prompt_sizes.ts";

/** Tokens kept free for the system prompt and the answer. */
const RESERVE_TOKENS = 4096;

export interface Inlined {
  /** The user message: the prompt followed by the files. */
  message: string;
  included: Array<{ path: string; tokens: number }>;
  skipped: Array<{ path: string; reason: string }>;
  fileTokens: number;
}

export async function inlineFiles(options: {
  prompt: string;
  files: readonly string[];
  cwd: string;
  roots: readonly string[];
  protect?: readonly string[];
  /** Secret-looking file names the user lets delegates read (`allowSecretFiles`). */
  allowSecretFiles?: readonly string[];
  /** The turn's protected files by identity: a secret under another name is left out. */
  guard?: GuardIdentities;
  /** The user's Read path rules, applied to each file as it resolves (see ToolContext). */
  pathRefusal?(tool: string, real: string, final: boolean): string | undefined;
  /** The model's context length, when the backend told us. */
  contextTokens?: number;
  model: string;
}): Promise<Inlined> {
  const budget = options.contextTokens !== undefined
    ? Math.max(0, options.contextTokens - RESERVE_TOKENS - estimateTokens(options.prompt.length))
    : DEFAULT_FILES_BUDGET;
  const included: Inlined["included"] = [];
  const skipped: Inlined["skipped"] = [];
  const parts: string[] = [];
  let used = 0;
  for (const file of options.files) {
    // Opened as the Read tool opens a file: beneath the roots, under the same policy.
    let opened: OpenedFile;
    try {
      opened = await openConfined(
        file,
        {
          cwd: options.cwd,
          roots: options.roots,
          ...(options.protect ? { protect: options.protect } : {}),
          ...(options.allowSecretFiles ? { allowSecretFiles: options.allowSecretFiles } : {}),
          ...(options.guard ? { guard: options.guard } : {}),
          ...(options.pathRefusal ? { pathRefusal: options.pathRefusal } : {}),
        },
        { mode: "read", tool: "Read", verb: "read" },
      );
    } catch (e) {
      const reason = (e as Error).message;
      skipped.push({
        path: file,
        reason: / is a directory|not a regular file/.test(reason) ? "not a regular file" : reason,
      });
      continue;
    }
    const shown = displayPath(opened.real, options.cwd);
    let text: string;
    try {
      const size = opened.stats.size;
      if (size > MAX_FILE_BYTES) {
        skipped.push({ path: shown, reason: `${size} bytes, over the 8 MiB limit` });
        continue;
      }
      const bytes = await readCapped(opened.handle, MAX_FILE_BYTES);
      if (bytes.length > MAX_FILE_BYTES) {
        skipped.push({ path: shown, reason: `over the 8 MiB limit` });
        continue;
      }
      if (isBinary(bytes)) {
        skipped.push({ path: shown, reason: `binary (${bytes.length} bytes)` });
        continue;
      }
      text = new TextDecoder().decode(bytes);
    } catch (e) {
      skipped.push({ path: shown, reason: (e as Error).message });
      continue;
    } finally {
      await opened.handle.close();
    }
    const tokens = estimateTokens(text.length + shown.length + 32);
    if (tokens > budget) {
      skipped.push({ path: shown, reason: `about ${tokens} tokens, over the budget of ${budget}` });
      continue;
    }
    if (used + tokens > budget) {
      if (options.contextTokens !== undefined) {
        throw new DelegateError(
          `Cannot run the one-shot: the files need about ${used + tokens}+ tokens and the prompt ` +
            `about ${estimateTokens(options.prompt.length)}, but "${options.model}" has a ` +
            `context of ${options.contextTokens} tokens (${RESERVE_TOKENS} kept for the answer). ` +
            `Pass fewer files, or use a model with a longer context`,
        );
      }
      skipped.push({
        path: shown,
        reason: `about ${tokens} tokens, over the remaining budget of ${budget - used}`,
      });
      continue;
    }
    used += tokens;
    included.push({ path: shown, tokens });
    // The path is quoted as JSON and a file that itself contains "</file>" gets a closing tag
    // it cannot contain, so no file can blur where another begins.
    const close = text.includes("</file>")
      ? `</file-${crypto.randomUUID().slice(0, 8)}>`
      : "</file>";
    parts.push(
      `<file path=${JSON.stringify(shown)}${close === "</file>" ? "" : ` end="${close}"`}>\n` +
        `${text}${text.endsWith("\n") ? "" : "\n"}${close}`,
    );
  }
  if (options.files.length > 0 && included.length === 0) {
    throw new DelegateError(
      `Cannot run the one-shot: none of the files could be inlined (${
        skipped.map((s) => `${s.path}: ${s.reason}`).join("; ")
      })`,
    );
  }
  const note = skipped.length > 0
    ? `\n\nNot included (${skipped.length}): ${
      skipped.map((s) => `${s.path} (${s.reason})`).join("; ")
    }`
    : "";
  return {
    message: `${options.prompt}\n\nFiles (${included.length}):\n${parts.join("\n")}${note}`,
    included,
    skipped,
    fileTokens: used,
  };
}

/** A NUL byte in the first 8 KiB, or text that is not UTF-8, means binary. */
function isBinary(bytes: Uint8Array): boolean {
  if (bytes.subarray(0, 8192).includes(0)) return true;
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    return false;
  } catch {
    return true;
  }
}

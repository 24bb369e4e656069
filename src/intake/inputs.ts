/**
 * What a request names on disk, checked before a job exists, the same for every front end:
 * the prompt (inline or from a file), the directories a delegate may work in (the workdir
 * policy, guard/workdirs.ts) and the files it is handed.
 */
import { constants as fsConstants } from "node:fs";
import { open, realpath, stat } from "node:fs/promises";
import { resolve } from "node:path";
import { DelegateError, isDelegateError } from "../errors.ts";
import {
  judgeWorkdir,
  ruleName,
  type WorkdirPolicy,
  type WorkdirRefusal,
} from "../guard/workdirs.ts";
import { readCapped } from "../platform/bytes.ts";
import { isWindows } from "../platform/runtime.ts";
import { MAX_PROMPT_BYTES } from "./prompt_limit.ts";

export { MAX_PROMPT_BYTES };

/**
 * Pseudo-file trees: their files report size 0 or stream forever (/proc/self/environ holds
 * the server's own secrets, /dev/zero never ends), so nothing in them is read as a prompt or
 * a file for a delegate.
 */
const PSEUDO_FILE_TREES = ["/proc", "/sys", "/dev"];

/** Flags that keep `open` from blocking on a FIFO or adopting a terminal; 0 where unknown. */
const OPEN_FLAGS = fsConstants.O_RDONLY | (fsConstants.O_NONBLOCK ?? 0) |
  (fsConstants.O_NOCTTY ?? 0) | (fsConstants.O_NOFOLLOW ?? 0);

const notFound = (e: unknown) =>
  (e as NodeJS.ErrnoException).code === "ENOENT" ? "it does not exist" : (e as Error).message;

/**
 * The real path of a file a tool call names, refused when it is in a pseudo-file tree or is
 * not a regular file. `what` names the argument in messages ("prompt_file", "file").
 */
async function regularFile(full: string, what: string): Promise<string> {
  const pseudo = (p: string) =>
    isWindows ? undefined : PSEUDO_FILE_TREES.find((t) => p === t || p.startsWith(`${t}/`));
  // The path as given first: /dev/stdin resolves to a pipe that has no path at all.
  let real = full;
  if (pseudo(full) === undefined) {
    try {
      real = await realpath(full);
    } catch (e) {
      throw new DelegateError(`Cannot read ${what} "${full}": ${notFound(e)}`, { cause: e });
    }
  }
  const tree = pseudo(real);
  if (tree !== undefined) {
    throw new DelegateError(
      `Cannot read ${what} "${full}"${real === full ? "" : ` (it resolves to "${real}")`}: ` +
        `files under ${tree} are the kernel's or devices' pseudo-files, not documents, and may ` +
        `hold the server's secrets. Pass a regular file`,
    );
  }
  return real;
}

/**
 * Reads a regular file, at most `cap` bytes, without trusting the size it reports: the open
 * handle is checked (a FIFO or device swapped in after the path check is refused) and the
 * read stops one byte past the cap.
 */
async function readFileCapped(full: string, what: string, cap: number): Promise<Uint8Array> {
  const real = await regularFile(full, what);
  let handle;
  try {
    handle = await open(real, OPEN_FLAGS);
  } catch (e) {
    throw new DelegateError(`Cannot read ${what} "${full}": ${notFound(e)}`, { cause: e });
  }
  try {
    if (!(await handle.stat()).isFile()) {
      throw new DelegateError(
        `Cannot read ${what} "${full}": it is not a regular file. Pass a regular file`,
      );
    }
    const bytes = await readCapped(handle, cap);
    if (bytes.length > cap) {
      throw new DelegateError(
        `Cannot read ${what} "${full}": it is over ${cap} bytes. Pass a shorter file`,
      );
    }
    return bytes;
  } catch (e) {
    if (isDelegateError(e)) throw e;
    throw new DelegateError(`Cannot read ${what} "${full}": ${(e as Error).message}`, {
      cause: e,
    });
  } finally {
    await handle.close().catch(() => {});
  }
}

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
    const bytes = await readFileCapped(path, "prompt_file", MAX_PROMPT_BYTES);
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
  if (utf8Length(args.prompt) > MAX_PROMPT_BYTES) {
    throw new DelegateError(
      `Cannot use a prompt over ${MAX_PROMPT_BYTES} bytes (UTF-8): shorten it, or split the ` +
        `work into several tasks`,
    );
  }
  return args.prompt;
}

/** UTF-8 length without building a copy of a string of up to tens of megabytes. */
function utf8Length(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        n += 4;
        i++;
      } else n += 3;
    } else n += 3;
  }
  return n;
}

/** Resolves a directory from a tool call and checks that it exists. */
export async function existingDir(path: string, base: string, what: string): Promise<string> {
  const full = resolve(base, path);
  let isDir = false;
  try {
    isDir = (await stat(full)).isDirectory();
  } catch (e) {
    throw new DelegateError(`Cannot use ${what} "${full}": ${notFound(e)}`);
  }
  if (!isDir) throw new DelegateError(`Cannot use ${what} "${full}": it is not a directory`);
  return full;
}

/**
 * Resolves a directory from a tool call, checks that it exists and that the working
 * directory policy allows it (see guard/workdirs.ts). Returns its real path, so what runs is
 * what was judged.
 */
export async function allowedDir(
  path: string,
  base: string,
  what: string,
  policy: WorkdirPolicy,
): Promise<string> {
  const full = await existingDir(path, base, what);
  let verdict;
  try {
    verdict = await judgeWorkdir(full, policy);
  } catch (e) {
    throw new DelegateError(`Cannot use ${what} "${full}": ${notFound(e)}`, { cause: e });
  }
  if (verdict.refusal) throw new DelegateError(workdirRefusalText(what, verdict.refusal));
  return verdict.real;
}

/** A refusal in words: the path, the rule and its reason, then what the user can do. */
export function workdirRefusalText(what: string, r: WorkdirRefusal): string {
  const resolved = r.real === r.path ? "" : ` (it resolves to "${r.real}")`;
  const advice = r.rule === "workspace-roots"
    ? "Use a directory inside one of them; the user can change the roots with " +
      "`ollama-delegate config --workspace-root <dir>`"
    : "Use a project directory (a repository or a folder made for the task); the user can " +
      "also confine delegates to chosen directories with workspaceRoots " +
      "(`ollama-delegate config --workspace-root <dir>`)";
  return `Cannot use ${what} "${r.path}"${resolved}: ${r.reason} (${ruleName(r.rule)}). ` +
    advice;
}

/** Resolves and checks every `add_dirs` entry against `base`; returns their real paths. */
export async function allowedDirs(
  paths: readonly string[],
  base: string,
  policy: WorkdirPolicy,
): Promise<string[]> {
  const out: string[] = [];
  for (const path of paths) out.push(await allowedDir(path, base, "add_dirs entry", policy));
  return out;
}

/**
 * Resolves `files` entries against `base` and checks each is a regular file outside the
 * pseudo-file trees. The native engine reads them later, with its own cap and confinement.
 */
export async function existingFiles(paths: readonly string[], base: string): Promise<string[]> {
  const out: string[] = [];
  for (const path of paths) {
    const full = resolve(base, path);
    const real = await regularFile(full, "file");
    let isFile = false;
    try {
      isFile = (await stat(real)).isFile();
    } catch (e) {
      throw new DelegateError(`Cannot use file "${full}": ${notFound(e)}`);
    }
    if (!isFile) throw new DelegateError(`Cannot use file "${full}": it is not a regular file`);
    out.push(full);
  }
  return out;
}

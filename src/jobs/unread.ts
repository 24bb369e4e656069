/**
 * Results nobody read (issue 31, item 2). A job started through a tool call belongs to the
 * project of the Claude Code session that started it (the server's own directory, kept as the
 * record's `project`). When it ends, a marker names it in `<stateDir>/.unread/<project key>/`;
 * when its result reaches the orchestrator (a reply that carries it, a task's result collected,
 * a cancel it asked for), the marker goes. So the markers left are the delegations that ended
 * while nobody was looking: a background task Claude Code never collected, a delegate_start
 * whose job was never fetched, a job interrupted when its session's server stopped.
 *
 * The plugin's UserPromptSubmit hook (plugins/ollama-delegate/hooks/unread_results.cjs) lists
 * the project's folder on every prompt, which costs one directory read when it is empty; only
 * when it names a job does the hook start `ollama-delegate unread --hook`, which claims each
 * marker once (a rename to `<id>.told`: told, still not read) and tells the orchestrator.
 * `delegate_list` marks both kinds `unread`. The key of a project is the same in both programs:
 * the first 32 hex digits of the SHA-256 of its real path.
 */
import { mkdir, readdir, realpath, rename, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { isValidId } from "./ids.ts";
import { sha256Hex } from "../platform/digest.ts";

/** The state dir's folder of markers, one folder per project. */
export const UNREAD_DIR = ".unread";
/** A marker the hook has already told the orchestrator about (`<id>.told`). */
const TOLD = ".told";
/** The most markers one project's folder is read for: more are left for the next prompt. */
const MAX_LISTED = 1000;

/** The folder name of a project: the first 32 hex digits of the SHA-256 of its real path. */
export async function projectKey(project: string): Promise<string> {
  const real = await realpath(project).catch(() => project);
  return (await sha256Hex(real)).slice(0, 32);
}

const folderOf = async (stateDir: string, project: string) =>
  join(stateDir, UNREAD_DIR, await projectKey(project));

/** Marks an ended job of `project` unread. */
export async function markUnread(stateDir: string, project: string, id: string): Promise<void> {
  if (!isValidId(id)) return;
  const dir = await folderOf(stateDir, project);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeFile(join(dir, id.toLowerCase()), "", { mode: 0o600 });
}

/** Its result reached the orchestrator: the job is no longer unread, told or not. */
export async function markRead(stateDir: string, project: string, id: string): Promise<void> {
  if (!isValidId(id)) return;
  const dir = await folderOf(stateDir, project);
  await rm(join(dir, id.toLowerCase()), { force: true });
  await rm(join(dir, `${id.toLowerCase()}${TOLD}`), { force: true });
}

/** The ids of a project's unread jobs: those not yet told, and those told. */
export async function unreadOf(
  stateDir: string,
  project: string,
): Promise<{ untold: string[]; told: string[] }> {
  const names = await namesIn(await folderOf(stateDir, project));
  return {
    untold: names.filter((n) => isValidId(n)),
    told: names.filter((n) => n.endsWith(TOLD)).map((n) => n.slice(0, -TOLD.length))
      .filter((n) => isValidId(n)),
  };
}

/** Every unread job of every project, for delegate_list's mark. */
export async function allUnread(stateDir: string): Promise<Set<string>> {
  const out = new Set<string>();
  for (const key of await namesIn(join(stateDir, UNREAD_DIR))) {
    if (!/^[0-9a-f]{32}$/.test(key)) continue;
    for (const name of await namesIn(join(stateDir, UNREAD_DIR, key))) {
      const id = name.endsWith(TOLD) ? name.slice(0, -TOLD.length) : name;
      if (isValidId(id)) out.add(id);
    }
  }
  return out;
}

/**
 * Claims one untold marker for telling: true for the one caller whose rename moved it (two
 * prompts at once tell it once).
 */
export async function claimUntold(stateDir: string, project: string, id: string) {
  const dir = await folderOf(stateDir, project);
  try {
    await rename(join(dir, id), join(dir, `${id}${TOLD}`));
    return true;
  } catch {
    return false;
  }
}

/** Removes the markers of jobs whose folders are gone (pruned). */
export async function forgetMissing(
  stateDir: string,
  project: string,
  ids: readonly string[],
): Promise<void> {
  const dir = await folderOf(stateDir, project);
  for (const id of ids) {
    const there = await stat(join(stateDir, id)).then(() => true, () => false);
    if (!there) {
      await rm(join(dir, id), { force: true });
      await rm(join(dir, `${id}${TOLD}`), { force: true });
    }
  }
}

async function namesIn(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).slice(0, MAX_LISTED);
  } catch {
    return [];
  }
}

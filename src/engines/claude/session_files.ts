/**
 * What Claude Code keeps of a delegate's session outside the job folders, in the delegates'
 * config dir (claudeConfigDir, the CLAUDE_CONFIG_DIR of every claude child), and its removal
 * when the job layer prunes the conversation. A session's files are named by its id:
 * - `projects/<the cwd as a name>/<id>.jsonl`: the whole conversation (prompts, tool calls,
 *   file contents read, answers), which `--resume` reads back;
 * - `projects/<the cwd as a name>/<id>/`: its tool results and subagents' transcripts;
 * - `session-env/<id>/`, `file-history/<id>/`: its environment and the backups of files it
 *   edited;
 * - `todos/<id>-*.json` and `debug/<id>.txt`: its todo lists and debug log.
 * A claude job and a follow-up of it (Claude Code 2.1, `--bare` and full harness) left the
 * first and `session-env/<id>/`; the others are where Claude Code writes them when a session
 * has them. Shared files (`.claude.json`, `projects/<cwd>/memory/`) are left alone.
 *
 * A delegate can write the config dir (the jail mounts it), so the walk never follows a
 * symlink: each directory is entered by its descriptor with O_NOFOLLOW (platform/
 * platform/open_beneath/anchor.ts), and what is removed is the entry found there, never a link's target.
 */
import { readdir, realpath, rm } from "node:fs/promises";
import { join } from "node:path";
import { type Anchor, type HeldDir, systemAnchor } from "../../platform/open_beneath/anchor.ts";

/** Folders of the config dir whose entries named by a session id are that session's. */
const BY_ID = ["session-env", "file-history", "todos", "debug"];

/** Session ids are ours (UUIDs); anything else never reaches a path. */
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/** Whether `name`, an entry of `folder`, belongs to session `id`. */
function ofSession(folder: string, name: string, id: string): boolean {
  switch (folder) {
    case "projects":
      return name === `${id}.jsonl` || name === id;
    case "todos":
      return name.startsWith(`${id}-`) && name.endsWith(".json");
    case "debug":
      return name === `${id}.txt`;
    default:
      return name === id;
  }
}

/** Enters `name` of `dir`; undefined when it is missing, a symlink or not a directory. */
async function enter(anchor: Anchor, dir: HeldDir, name: string): Promise<HeldDir | undefined> {
  try {
    return await anchor.enter(dir, name);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ELOOP" || code === "ENOTDIR") return undefined;
    throw e;
  }
}

/**
 * Removes (or with `dryRun` only finds) the entries of `dir`, named `shown` for the reader,
 * that are session `id`'s; gives what it found. They are named beneath the held directory:
 * a folder swapped for a link meanwhile changes nothing, the descriptor still names the
 * folder that was entered.
 */
async function sweep(
  anchor: Anchor,
  dir: HeldDir,
  folder: string,
  shown: string,
  id: string,
  dryRun: boolean,
): Promise<string[]> {
  const out: string[] = [];
  for (const name of await readdir(anchor.self(dir))) {
    if (!ofSession(folder, name, id)) continue;
    if (!dryRun) await rm(anchor.child(dir, name), { recursive: true, force: true });
    out.push(join(shown, name));
  }
  return out;
}

/** Runs `fn` in the folder `name` of `dir`, when it is one; [] otherwise. */
async function inFolder(
  anchor: Anchor,
  dir: HeldDir,
  name: string,
  fn: (held: HeldDir) => Promise<string[]>,
): Promise<string[]> {
  const held = await enter(anchor, dir, name);
  if (!held) return [];
  try {
    return await fn(held);
  } finally {
    await anchor.release(held);
  }
}

/**
 * Removes session `sessionId`'s files from `configDir` (with `dryRun`, only finds them) and
 * gives their paths. A config dir that does not exist holds none.
 */
export async function forgetSession(
  configDir: string,
  sessionId: string,
  dryRun: boolean,
): Promise<string[]> {
  if (!SESSION_ID.test(sessionId)) return [];
  const anchor = systemAnchor();
  let root: HeldDir;
  try {
    root = await anchor.root(await realpath(configDir));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw e;
  }
  try {
    const found = await inFolder(anchor, root, "projects", async (projects) => {
      const out: string[] = [];
      for (const entry of await readdir(anchor.self(projects), { withFileTypes: true })) {
        if (!entry.isDirectory()) continue;
        const shown = join(configDir, "projects", entry.name);
        out.push(
          ...await inFolder(
            anchor,
            projects,
            entry.name,
            (project) => sweep(anchor, project, "projects", shown, sessionId, dryRun),
          ),
        );
      }
      return out;
    });
    for (const folder of BY_ID) {
      found.push(
        ...await inFolder(
          anchor,
          root,
          folder,
          (dir) => sweep(anchor, dir, folder, join(configDir, folder), sessionId, dryRun),
        ),
      );
    }
    return found;
  } finally {
    await anchor.release(root);
  }
}

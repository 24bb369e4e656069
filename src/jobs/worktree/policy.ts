/**
 * What the server never carries into a worktree nor commits from one, at any depth, and how
 * it says so. Host-run paths (protected_paths.ts): a merge would put them where the user's git,
 * Claude Code, editors or direnv run or trust them, outside any sandbox. Secret and credential
 * files (the file tools' read policy, with the user's `allowSecretFiles`): a carried one would
 * be read by the delegate, whose reads go to its model's provider, and a branch is what the
 * user merges, pushes and shares.
 */
import { hostRunPart, readRefusal } from "../../guard/protected_paths.ts";

export type LeftOutKind = "host-run" | "secret";

/** A path (relative to the worktree's or checkout's top, `/`-separated) left out, and why. */
export interface LeftOut {
  path: string;
  kind: LeftOutKind;
}

/** Why the server must neither carry nor commit `rel`, or undefined when it may. */
export function leftOutKind(
  rel: string,
  allowSecretFiles: readonly string[],
): LeftOutKind | undefined {
  if (hostRunPart(rel) !== undefined) return "host-run";
  if (readRefusal(rel, allowSecretFiles) !== undefined) return "secret";
  return undefined;
}

/** Paths named in one note; the rest are counted. */
const SHOWN = 10;

function listed(paths: readonly string[]): string {
  const more = paths.length > SHOWN ? ` (+${paths.length - SHOWN} more)` : "";
  return paths.slice(0, SHOWN).join(", ") + more;
}

/** The kinds of `items`, each with its paths and the reason in words. */
function grouped(items: readonly LeftOut[]): string[] {
  const out: string[] = [];
  const hostRun = items.filter((i) => i.kind === "host-run").map((i) => i.path);
  const secret = items.filter((i) => i.kind === "secret").map((i) => i.path);
  if (hostRun.length > 0) {
    out.push(
      `${listed(hostRun)} (run or trusted by your own tools: git, Claude Code, editors, direnv)`,
    );
  }
  if (secret.length > 0) {
    out.push(
      `${listed(secret)} (secret or credential files; a secret file name can be allowed with ` +
        "`ollama-delegate config --allow-secret-file '<name>'`)",
    );
  }
  return out;
}

/** The note for files of the user's checkout that include_uncommitted did not copy. */
export function notCarriedNote(items: readonly LeftOut[]): string | undefined {
  if (items.length === 0) return undefined;
  return `not carried over: ${grouped(items).join("; ")}. The server never copies these into ` +
    "a worktree nor commits them (the delegate would read them, a merge would bring them in); " +
    "they stay only in your checkout";
}

/** The note for what a turn's commit left in the worktree. */
export function notCommittedFilesNote(items: readonly LeftOut[], worktree: string): string {
  return `not committed: ${grouped(items).join("; ")}. The server never commits these, so ` +
    `neither the branch nor the patch holds them and taking the branch does not bring them ` +
    `in. They stay in the worktree ${worktree}; look at them before you take it ` +
    `(git -C ${JSON.stringify(worktree)} status --short --untracked-files=all)`;
}

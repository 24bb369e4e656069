/**
 * The sandboxed shell around one native turn: what its commands get read-only or hidden
 * beyond the top-level protections (nested repositories, credential stores found below the
 * roots, the repository a worktree's git reads), and which files they changed, found by
 * comparing the job's directories before and after the turn rather than trusting the model,
 * with a warning for any planted where the host would run it.
 */
import type { TurnSink } from "../types.ts";
import { commonGitDir, type TurnWorktree } from "../worktree_scope.ts";
import { changedBetween, plantedWarnings, type Snapshot, snapshot } from "./changes.ts";
import type { ToolPolicy } from "./permissions.ts";
import type { GuardIdentities } from "../guard_identities.ts";
import type { BwrapRunner, ShellRunner } from "./sandbox.ts";

/**
 * Prepares `runner` for the turn and, when the turn may run commands, takes the snapshot the
 * changes are found against (undefined when nothing can run).
 */
export async function watchShell(
  policy: ToolPolicy,
  runner: ShellRunner,
  roots: readonly string[],
  worktree: TurnWorktree | undefined,
  guard?: GuardIdentities,
): Promise<Snapshot | undefined> {
  const watchesShell = policy.tools.some((t) => t.name === "Bash") && runner.kind !== "refused";
  const before: Snapshot | undefined = watchesShell ? await snapshot(roots) : undefined;
  // Nested repositories and credential stores get the protection the top-level ones get.
  if (before && runner.kind === "bwrap") {
    runner.nested = { readOnly: before.nestedGit, hidden: before.credentials };
  }
  // git in the worktree reads the repository's `.git` (its `.git` file points there):
  // mounted read-only, so the delegate's commands see it but cannot change it.
  if (worktree && runner.kind === "bwrap") {
    const readOnly = [...(runner.nested?.readOnly ?? []), commonGitDir(worktree)];
    runner.nested = { ...runner.nested, readOnly };
  }
  if (guard && runner.kind === "bwrap") guardShell(runner, roots, guard);
  return before;
}

/**
 * What the turn-start identities (guard_identities.ts) add to the sandbox: host-run files
 * under other names read-only (link targets, other hard links; placeholders where a link
 * leads to nothing yet), secret files shown empty. Their walk is the one the sandbox would
 * make at the first command, so it is handed over rather than made again; when it stopped
 * early, or could not find every hard link, the turn's commands are refused (fail closed).
 */
function guardShell(runner: BwrapRunner, roots: readonly string[], guard: GuardIdentities) {
  const incomplete = guard.incomplete ?? guard.pathsIncomplete;
  runner.hostRun = {
    key: roots.join("\0"),
    scan: incomplete ? { ...guard.scan, incomplete } : guard.scan,
  };
  runner.nested = {
    ...runner.nested,
    readOnly: [...(runner.nested?.readOnly ?? []), ...guard.hostRunPaths],
    secrets: guard.secretPaths,
    missing: guard.hostRunMissing,
  };
}

/**
 * Reports the files that changed since `before`, warns of files planted where the host would
 * run them, and says when the comparison was partial.
 */
export async function reportShellChanges(
  before: Snapshot,
  roots: readonly string[],
  sink: TurnSink,
): Promise<void> {
  const after = await snapshot(roots);
  for (const path of changedBetween(before, after)) sink.fileChanged?.(path);
  for (const text of plantedWarnings(changedBetween(before, after), roots)) {
    sink.warning?.(text);
  }
  const capped = before.capped || after.capped;
  if (capped) {
    sink.activity({
      kind: "error",
      text: (capped === "project"
        ? "The job's directories hold over 20,000 entries"
        : "The job's version control and dependency folders hold over 200,000 entries") +
        ": the list of changed files covers Write and Edit calls and only part of what " +
        "commands changed",
    });
  }
}

/**
 * The sandboxed shell around one native turn: what its commands get read-only or hidden
 * beyond the top-level protections (nested repositories, credential stores found below the
 * roots, the repository a worktree's git reads), and which files they changed, found from
 * the turn's view of its directories (turn_changes.ts: a change journal, or a walk before and
 * after) rather than from the model, with a warning for any planted where the host would run
 * it.
 */
import { commonGitDir, type TurnWorktree } from "../../../guard/worktree_scope.ts";
import { storesUnknown, type TurnChanges } from "../../tree/turn_changes.ts";
import type { GuardIdentities } from "../../../guard/identities.ts";
import type { BwrapRunner, ShellRunner } from "./shell_runner.ts";
import { displayPath } from "../../../guard/real_paths.ts";
import { MAX_SECRET_MASKS } from "../../bwrap_base.ts";
import { knownStores, linkedStores, rememberStores } from "../../../guard/known_stores.ts";

/**
 * True when the turn may run commands, whose changes the server then looks for itself. Takes
 * the offered tools' names, not the tool policy: sandbox/ stays below permissions.ts, which
 * imports the tools' types (tools/ itself runs its commands here).
 */
export function watchesShell(offered: readonly { name: string }[], runner: ShellRunner): boolean {
  return offered.some((t) => t.name === "Bash") && runner.kind !== "refused";
}

/** Prepares `runner` for the turn, with what `changes` found below the roots. */
export function watchShell(
  runner: ShellRunner,
  changes: TurnChanges,
  worktree: TurnWorktree | undefined,
  roots: readonly string[],
  guard?: GuardIdentities,
): void {
  // Nested repositories and credential stores get the protection the top-level ones get.
  let storesGap = storesUnknown(changes.nested);
  if (changes.nested && runner.kind === "bwrap") {
    runner.nested = { readOnly: changes.nested.nestedGit, hidden: changes.nested.credentials };
  }
  // Stores a link leads to (`.config -> cfg`: `cfg/gh`), hidden by what they are for the whole
  // turn, and in later turns and jobs, whatever becomes of the link (guard/known_stores.ts):
  // each command's sandbox finds the top-level stores by name again, and after `rm .config`
  // would have shown `cfg/gh` to the next command.
  if (runner.kind === "bwrap" && runner.storesDir) {
    const linked = linkedStores(roots);
    rememberStores(runner.storesDir, [...linked, ...changes.nested?.linked ?? []]);
    const known = knownStores(runner.storesDir, roots);
    const hidden = [...runner.nested?.hidden ?? [], ...linked, ...known.paths];
    runner.nested = { ...runner.nested, hidden: [...new Set(hidden)] };
    storesGap ??= known.incomplete;
  }
  // git in the worktree reads the repository's `.git` (its `.git` file points there):
  // mounted read-only, so the delegate's commands see it but cannot change it.
  if (worktree && runner.kind === "bwrap") {
    const readOnly = [...(runner.nested?.readOnly ?? []), commonGitDir(worktree)];
    runner.nested = { ...runner.nested, readOnly };
  }
  if (guard && runner.kind === "bwrap") {
    guardShell(runner, roots, guard, storesGap);
  }
  if (runner.kind === "bwrap" && runner.hostRun && changes.sentinel) {
    runner.hostRun.sentinel = changes.sentinel;
  }
}

/**
 * What the turn-start identities (src/guard/identities.ts) add to the sandbox: host-run files
 * under other names read-only (link targets, other hard links; placeholders where a link
 * leads to nothing yet), secret files hidden. Their walk is the one the sandbox would make
 * at the first command, so it is handed over rather than made again. The turn's commands are
 * refused (fail closed) when that walk stopped early, when it could not find every other
 * name of a hard-linked file, or when there are more secret files than a sandbox can hide.
 */
function guardShell(
  runner: BwrapRunner,
  roots: readonly string[],
  guard: GuardIdentities,
  storesGap: string | undefined,
) {
  runner.hostRun = {
    key: roots.join("\0"),
    scan: guard.incomplete ? { ...guard.scan, incomplete: guard.incomplete } : guard.scan,
  };
  const refused = shellRefusal(guard, runner.nested?.hidden ?? [], roots[0] ?? "", storesGap);
  if (refused) runner.hostRun.moved = refused;
  runner.nested = {
    ...runner.nested,
    readOnly: [...(runner.nested?.readOnly ?? []), ...guard.hostRunPaths],
    secrets: guard.secretPaths,
    missing: guard.hostRunMissing,
    git: guard.git,
  };
}

/** Why the identities do not let the sandbox protect everything they name, or undefined. */
function shellRefusal(
  guard: GuardIdentities,
  stores: readonly string[],
  cwd: string,
  storesGap: string | undefined,
): string | undefined {
  const alternatives = "Read, Write and Edit still work";
  if (storesGap !== undefined) {
    // The sandbox hides the credential stores that search found, and only those.
    return `Bash is refused for this turn: the job's directories could not all be searched ` +
      `for credential stores (${storesGap}), so the sandbox cannot hide every one from ` +
      `commands. Start the job with a narrower cwd; ${alternatives}`;
  }
  if (guard.incomplete === undefined && guard.pathsIncomplete !== undefined) {
    return `Bash is refused for this turn: ${guard.pathsIncomplete}, so the sandbox cannot ` +
      "find every other name of a hard-linked secret or host-run file to hide or protect " +
      `it. Start the job with a narrower cwd; ${alternatives}`;
  }
  const hidden = [...guard.secretPaths, ...stores, ...guard.git.hidden];
  const count = hidden.length;
  if (count <= MAX_SECRET_MASKS) return undefined;
  const shown = hidden.slice(0, 3).map((p) => displayPath(p, cwd)).join(", ");
  return `Bash is refused for this turn: the job's directories hold ${count} secret-looking ` +
    `files, credential stores and git objects (${shown}...), more than the ` +
    `${MAX_SECRET_MASKS} the sandbox hides ` +
    "from commands. The user can allow names that are no secrets (test certificates, say) " +
    "with `ollama-delegate config --allow-secret-file '<pattern>'`, drop unreachable git " +
    "objects (git gc --prune=now), move credential stores out of the project, or start the " +
    `job with a narrower cwd; ${alternatives}`;
}

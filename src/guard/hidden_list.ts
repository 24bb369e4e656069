/**
 * What a turn's sandbox keeps from the delegate inside the job's directories, for the reply's
 * `hidden:` line (so that a read that fails is not taken for a missing file): the credential
 * stores at the top of each root by name, those found below it or led to by a link (the turn's
 * journal or walk, guard/known_stores.ts), and the secret files (guard/identities.ts). Both
 * engines give it what their sandbox hides as the turn starts; the native engine, whose sandbox
 * looks for the stores at the top again before each command, also what its commands were kept
 * from as they ran (hiddenThroughTurn). Claude Code runs a whole turn in one jail: what it hides
 * is fixed as the turn starts.
 */
import { realpathSync } from "node:fs";
import { join } from "node:path";
import { CREDENTIAL_PATHS } from "./protected_paths.ts";

/**
 * The paths hidden in `roots`, sorted, each once by what it resolves to: `.config/gh` through
 * `.config -> cfg` and `cfg/gh` are one store, named as first found (the top-level name).
 */
export function hiddenInRoots(
  roots: readonly string[],
  stores: readonly string[],
  secretFiles: readonly string[],
): string[] {
  return hiddenNames(hiddenByReal(roots, stores, secretFiles));
}

/**
 * What a turn hid from its commands: what was hidden as it started (`atStart`, hiddenByReal)
 * and what its commands were kept from as they ran (`later`), each once by what it resolved to,
 * under the name it had first. For an engine whose sandbox looks for stores again before each
 * command: one that a command made was hidden from the commands after it.
 */
export function hiddenThroughTurn(
  atStart: ReadonlyMap<string, string>,
  later: ReadonlyMap<string, string>,
): Map<string, string> {
  const all = new Map(atStart);
  for (const [real, path] of later) if (!all.has(real)) all.set(real, path);
  return all;
}

/**
 * The names of hiddenByReal's paths, sorted, each once: what the `hidden:` line lists. (Two
 * stores can have had one name in a turn: `.config -> cfg`, then `.config -> other`.)
 */
export function hiddenNames(byReal: ReadonlyMap<string, string>): string[] {
  return [...new Set(byReal.values())].sort();
}

/** hiddenInRoots's paths by what each resolves to now: real path -> the name it was found by. */
export function hiddenByReal(
  roots: readonly string[],
  stores: readonly string[],
  secretFiles: readonly string[],
): Map<string, string> {
  const byReal = new Map<string, string>();
  const add = (path: string) => {
    let real: string;
    try {
      real = realpathSync(path);
    } catch {
      return; // Not there (or a link to nothing): nothing to hide.
    }
    if (!byReal.has(real)) byReal.set(real, path);
  };
  for (const root of roots) for (const entry of CREDENTIAL_PATHS) add(join(root, entry));
  for (const path of [...stores, ...secretFiles]) add(path);
  return byReal;
}

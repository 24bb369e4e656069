/**
 * What a turn's sandbox keeps from the delegate inside the job's directories, for the reply's
 * `hidden:` line (so that a read that fails is not taken for a missing file): the credential
 * stores at the top of each root by name, those found below it or led to by a link (the turn's
 * journal or walk, guard/known_stores.ts), and the secret files (guard/identities.ts). Both
 * engines give it what their sandbox hides, as the turn starts.
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
  return [...byReal.values()].sort();
}

/**
 * Which changed files a review leaves out as secrets: by name (protected_paths.ts's patterns,
 * less the user's `allowSecretFiles`), and by what they are, for a file that holds a secret
 * file's content under another name (`notes.txt` hard-linked to `.env`). What a reviewer gets
 * is sent to its model's provider, as what a delegate reads is.
 */
import { lstat } from "node:fs/promises";
import { join, relative } from "node:path";
import { collectGuardIdentities, identityKey } from "../guard/identities.ts";
import { readIdentityRefusal } from "../guard/refusals.ts";
import { readRefusal } from "../guard/protected_paths.ts";

/**
 * Why the file at `path` (relative to the repository) is left out by its name, or undefined;
 * names are also compared folded to lower case, as the file tools compare them.
 */
export function secretReason(
  path: string,
  allowSecretFiles: readonly string[],
): string | undefined {
  const why = readRefusal(path, allowSecretFiles) ??
    readRefusal(path.toLowerCase(), allowSecretFiles.map((a) => a.toLowerCase()));
  return why?.split(",")[0];
}

/**
 * The changed files (relative to `root`) that are secret files under another name, with
 * why. Only a file with other hard links can be one, so the repository is searched for its
 * secret files only when such a file changed. Fails closed: when that search could not cover
 * the repository, every changed file with other hard links is left out.
 */
export async function linkedSecrets(
  root: string,
  paths: readonly string[],
  allowSecretFiles: readonly string[],
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const linked = [];
  for (const path of paths) {
    const info = await lstat(join(root, path)).catch(() => undefined);
    if (info?.isFile() && info.nlink > 1) linked.push({ path, info });
  }
  if (linked.length === 0) return out;
  const guard = await collectGuardIdentities([root], { allowSecretFiles });
  for (const { path, info } of linked) {
    if (readIdentityRefusal(guard, info) === undefined) continue;
    const secret = guard.secret.get(identityKey(info));
    out.set(
      path,
      secret !== undefined
        ? `the same file as the secret "${relative(root, secret)}" (a hard link)`
        : "a file with other hard links, which could not be checked against secret files",
    );
  }
  return out;
}

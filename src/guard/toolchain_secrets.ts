/**
 * The user's credential files by identity (device and inode), for the toolchain view
 * (toolchains.ts): a file in an opened toolchain folder that is one of them under another name
 * (a hard link of `~/.ssh/id_rsa` in `~/.local/bin`) is hidden, and a link to one is not
 * followed. Bounded: credential stores hold a few files (`~/.ssh`) to a few thousand
 * (`~/.password-store`); past the bound the rest are judged by path alone, which keeps them
 * out of every sandbox anyway (the home folder is never opened).
 */
import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import { identityKey } from "./identity_walk.ts";
import { CREDENTIAL_PATHS, HOME_CREDENTIAL_FILES } from "./protected_paths.ts";

/** Files looked at inside the home folder's credential stores. */
export const MAX_CREDENTIAL_FILES = 2_000;

/** `dev:ino` -> the credential file (absolute) of every credential file under `home`. */
export async function credentialIdentities(
  home: string,
  max = MAX_CREDENTIAL_FILES,
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const pending = [...CREDENTIAL_PATHS, ...HOME_CREDENTIAL_FILES].map((e) => join(home, e));
  let seen = 0;
  while (pending.length > 0 && seen < max) {
    const path = pending.pop()!;
    let info;
    try {
      info = await lstat(path);
    } catch {
      continue;
    }
    seen++;
    if (info.isFile()) out.set(identityKey(info), path);
    else if (info.isDirectory()) {
      try {
        for (const name of await readdir(path)) pending.push(join(path, name));
      } catch {
        // Unreadable to the server: unreadable to what it starts.
      }
    }
  }
  return out;
}

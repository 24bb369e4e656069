/**
 * The id the ledger knows a repository by, never its path: `git:` and the first 16 hex digits
 * of its root commit (the same in every clone, so a project is one project wherever it is
 * checked out), else `dir:` and a digest of the directory's real path.
 */
import { realpath } from "node:fs/promises";
import { git } from "../platform/git.ts";
import { sha256Hex } from "../platform/digest.ts";

const cache = new Map<string, string>();
const CACHE_MAX = 256;

/** The repository id of `dir` (a job's cwd). Never throws. */
export async function repoIdOf(dir: string): Promise<string> {
  const real = await realpath(dir).catch(() => dir);
  const known = cache.get(real);
  if (known !== undefined) return known;
  let id: string | undefined;
  try {
    const out = await git(["rev-list", "--max-parents=0", "HEAD"], {
      cwd: real,
      anyCode: true,
      maxBytes: 64 * 1024,
      timeoutMs: 5000,
    });
    // A history with several roots (merged projects): the same one whichever clone asks.
    const roots = out.code === 0
      ? out.stdout.split("\n").filter((l) => /^[0-9a-f]{40,64}$/.test(l))
      : [];
    if (roots.length > 0) id = `git:${roots.sort()[0]!.slice(0, 16)}`;
  } catch {
    // No git, or not a repository: the directory's digest below.
  }
  id ??= `dir:${(await sha256Hex(real)).slice(0, 16)}`;
  if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value!);
  cache.set(real, id);
  return id;
}

import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import process from "node:process";

/** Apart from the pid: a process may hold several instances of this module (Deno's tests). */
const instance = crypto.getRandomValues(new Uint32Array(1))[0]!;
let counter = 0;

function tempName(path: string): string {
  counter = (counter + 1) % 1_000_000;
  return `${path}.${process.pid}.${instance}.${counter}.tmp`;
}

/**
 * Writes a file so readers see the old content or the new, never a half-written one:
 * the data goes to a temporary file beside it, which is then renamed over the target
 * (rename replaces atomically on POSIX and, via MoveFileEx, on Windows).
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temp = tempName(path);
  try {
    await writeFile(temp, data, { mode: 0o600 });
    await rename(temp, path);
  } catch (e) {
    await rm(temp, { force: true });
    throw e;
  }
}

/**
 * The synchronous twin of {@link writeFileAtomic}, for the config CLI and shutdown. `mode`
 * is the new file's (0o755 for a script), so that it is never seen with another.
 */
export function writeFileAtomicSync(
  path: string,
  data: string | Uint8Array,
  mode = 0o600,
): void {
  mkdirSync(dirname(path), { recursive: true });
  const temp = tempName(path);
  try {
    writeFileSync(temp, data, { mode });
    renameSync(temp, path);
  } catch (e) {
    rmSync(temp, { force: true });
    throw e;
  }
}

/**
 * What the queues' files have in common. Each is written whole to a temp file first and then
 * moved or linked into place, mode 0600, so that no reader ever meets half a file; each names
 * its owner, whose identity a reader checks before believing anything else the file says.
 */
import { readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ProcessIdentity } from "../../platform/process_identity.ts";

/** Temp files start so; no ticket or slot name does. */
export const TEMP_PREFIX = ".tmp-";

/** Writes `text` to a new temp file in `dir`; the caller moves it into place. Its path. */
export async function writeTemp(dir: string, text: string): Promise<string> {
  const temp = join(dir, `${TEMP_PREFIX}${crypto.randomUUID()}`);
  await writeFile(temp, text, { flag: "wx", mode: 0o600 });
  return temp;
}

/** The owner a parsed file names, or undefined when it names none in the right shape. */
export function ownerOf(value: unknown): ProcessIdentity | undefined {
  const owner = value as Partial<ProcessIdentity> | undefined;
  if (typeof owner?.pid !== "number" || typeof owner.startTime !== "string") return undefined;
  return { pid: owner.pid, startTime: owner.startTime };
}

/** The names in `dir`; none when it does not exist (a queue nobody has used yet). */
export async function namesIn(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw e;
  }
}

/**
 * What the review gate remembers of a Claude Code session, in the state dir
 * (`<stateDir>/.gate/<session id>.json`): how many times it blocked a stop, and a fingerprint of
 * the changes it last looked at, so that it never reviews the same changes twice and stops
 * blocking after its round cap whatever Claude does.
 */
import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../platform/atomic_write.ts";
import type { ReviewDiff } from "../review/diff.ts";

export interface GateState {
  /** Stops the gate blocked in this session. */
  blocks: number;
  /** The changes it last looked at (`fingerprint`), reviewed or not. */
  fingerprint?: string;
}

const GATE_DIR = ".gate";
/** Session files untouched this long are removed: Claude Code sessions do not last weeks. */
const KEEP_MS = 14 * 24 * 3600_000;

/** Claude Code's session ids are UUIDs; anything else is not used in a path. */
export function validSessionId(id: unknown): id is string {
  return typeof id === "string" && /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/.test(id);
}

const fileOf = (stateDir: string, sessionId: string) =>
  join(stateDir, GATE_DIR, `${sessionId}.json`);

/** The session's state; a missing or unreadable file is a fresh session. */
export async function readGateState(stateDir: string, sessionId: string): Promise<GateState> {
  try {
    const raw = JSON.parse(await readFile(fileOf(stateDir, sessionId), "utf8")) as Record<
      string,
      unknown
    >;
    const blocks = typeof raw.blocks === "number" && raw.blocks >= 0 ? Math.floor(raw.blocks) : 0;
    return {
      blocks,
      ...(typeof raw.fingerprint === "string" ? { fingerprint: raw.fingerprint } : {}),
    };
  } catch {
    return { blocks: 0 };
  }
}

export async function writeGateState(
  stateDir: string,
  sessionId: string,
  state: GateState,
): Promise<void> {
  const dir = join(stateDir, GATE_DIR);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeFileAtomic(fileOf(stateDir, sessionId), JSON.stringify({ format: 1, ...state }));
  await pruneOld(dir).catch(() => {});
}

async function pruneOld(dir: string): Promise<void> {
  const now = Date.now();
  for (const name of await readdir(dir)) {
    if (!name.endsWith(".json")) continue;
    const info = await stat(join(dir, name)).catch(() => undefined);
    if (info && now - info.mtimeMs > KEEP_MS) await rm(join(dir, name), { force: true });
  }
}

/** A digest of everything the review would be shown: the same changes give the same value. */
export function fingerprint(diff: ReviewDiff): string {
  const hash = createHash("sha256");
  hash.update(`${diff.root}\0${diff.label}\0${diff.untrackedLeftOut}\0`);
  for (const f of diff.files) {
    hash.update(`${f.path}\0${f.secret ?? ""}\0${f.tooLarge ?? ""}\0${f.binary}\0${f.text}\0`);
  }
  return hash.digest("hex");
}

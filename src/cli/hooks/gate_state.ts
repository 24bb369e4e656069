/**
 * What the review gate remembers of a Claude Code session, in the state dir
 * (`<stateDir>/.gate/<session id>.json`): how many times it blocked a stop, a fingerprint of
 * the changes it last looked at, the hunks its last review covered (review/diff_since.ts) and
 * the findings it blocked on, so that it never reviews the same changes twice, reviews only
 * what changed since, never blocks twice on one finding, and stops blocking after its round cap
 * whatever Claude does.
 */
import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../../platform/atomic_write.ts";
import type { ReviewDiff } from "../../review/diff.ts";
import { MAX_KEYS } from "../../review/diff_since.ts";

export interface GateState {
  /** Stops the gate blocked in this session. */
  blocks: number;
  /** The changes it last looked at (`fingerprint`), reviewed or not. */
  fingerprint?: string;
  /** The hunks of the diff its last review that reviewers answered covered (diffKeys). */
  reviewed?: string[];
  /** The findings it blocked on in this session, oldest first. */
  raised?: RaisedFinding[];
}

/** A finding the gate blocked on: its file, and each reviewer's words for it. */
export interface RaisedFinding {
  file: string;
  claims: string[];
}

/** Findings remembered at most (the oldest go first), and the words kept of each. */
export const MAX_RAISED = 100;
const MAX_CLAIMS = 5;
const CLAIM_CHARS = 500;

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
    const reviewed = Array.isArray(raw.reviewed)
      ? raw.reviewed.filter((k): k is string => typeof k === "string").slice(0, MAX_KEYS)
      : undefined;
    return {
      blocks,
      ...(typeof raw.fingerprint === "string" ? { fingerprint: raw.fingerprint } : {}),
      ...(reviewed ? { reviewed } : {}),
      raised: raisedOf(raw.raised),
    };
  } catch {
    return { blocks: 0 };
  }
}

/** The raised findings a state file holds, read defensively: it is a file on disk. */
function raisedOf(raw: unknown): RaisedFinding[] {
  if (!Array.isArray(raw)) return [];
  return (raw as unknown[]).flatMap((entry) => {
    if (typeof entry !== "object" || entry === null) return [];
    const { file, claims } = entry as Record<string, unknown>;
    if (typeof file !== "string" || !Array.isArray(claims)) return [];
    const words = (claims as unknown[]).filter((c): c is string => typeof c === "string");
    return words.length > 0 ? [{ file, claims: words.slice(0, MAX_CLAIMS) }] : [];
  }).slice(-MAX_RAISED);
}

/** `raised` with `more` added (each reviewer's words, cut), the oldest dropped past the cap. */
export function withRaised(
  raised: readonly RaisedFinding[],
  more: ReadonlyArray<{ file: string; opinions: ReadonlyArray<{ claim: string }> }>,
): RaisedFinding[] {
  const added = more.map((f) => ({
    file: f.file,
    claims: f.opinions.slice(0, MAX_CLAIMS).map((o) => o.claim.slice(0, CLAIM_CHARS)),
  }));
  return [...raised, ...added].slice(-MAX_RAISED);
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

/**
 * A job named the way people name it: its whole id, or a unique prefix of one (the terminal's
 * ID column and many replies show 8 characters), as git does for commits. One resolver for
 * both front ends, so `jobs cancel 1a2b3c4d` and `delegate_cancel({ job_id: "1a2b3c4d" })`
 * mean the same job. A reference becomes a path only as a whole id found among the folders
 * of the state dir, never as the text that was given.
 */
import { stat } from "node:fs/promises";
import { type JobCandidate, JobError } from "./errors.ts";
import { escapeLine } from "../platform/plain_text.ts";
import { isValidId } from "./ids.ts";
import type { JobStore } from "./store.ts";

/** Shorter prefixes match too much to mean one job. */
export const MIN_PREFIX = 4;
/** Candidates an error names: enough to pick from, short enough to read. */
const SHOWN = 5;

/**
 * The whole id (lower case) that `ref` names. A whole id is returned as it is, whether or not
 * a job has it (the caller reads the record and says when there is none). A prefix must match
 * exactly one job folder; `extraIds` are jobs this process holds whose folders may not be
 * written yet. Throws a JobError that names the candidates when it matches none or several.
 */
export async function resolveJobRef(
  store: JobStore,
  ref: string,
  extraIds: Iterable<string> = [],
): Promise<string> {
  const wanted = ref.trim().toLowerCase();
  if (isValidId(wanted)) return wanted;
  if (wanted === "") throw new JobError({ kind: "bad-job-ref", ref, why: "empty" });
  if (/^[0-9a-f-]{1,3}$/.test(wanted)) {
    throw new JobError({ kind: "bad-job-ref", ref, why: "too-short" });
  }
  if (!/^[0-9a-f-]{4,36}$/.test(wanted)) {
    throw new JobError({ kind: "bad-job-ref", ref, why: "not-an-id" });
  }
  const all = new Set((await store.ids()).map((id) => id.toLowerCase()));
  for (const id of extraIds) if (isValidId(id)) all.add(id.toLowerCase());
  const matches = [...all].filter((id) => id.startsWith(wanted));
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) {
    throw new JobError({
      kind: "unmatched-job-prefix",
      prefix: ref.trim(),
      stateDir: store.stateDir,
      jobs: all.size,
      newest: await newest(store, [...all]),
    });
  }
  throw new JobError({
    kind: "ambiguous-job-prefix",
    prefix: ref.trim(),
    count: matches.length,
    matches: await newest(store, matches),
  });
}

/**
 * The SHOWN newest of `ids`, with what their records say. Folders are ordered by their
 * modification time first (one stat each, no record read), so a state dir of thousands of
 * jobs costs no more than a directory listing; only the shown few records are read.
 */
async function newest(store: JobStore, ids: readonly string[]): Promise<JobCandidate[]> {
  const timed = await Promise.all(ids.map(async (id) => {
    try {
      return { id, at: (await stat(store.dirOf(id))).mtimeMs };
    } catch {
      return { id, at: 0 };
    }
  }));
  // More than shown, so that ordering by creation below can correct the folder times.
  const picked = timed.sort((a, b) => b.at - a.at || a.id.localeCompare(b.id)).slice(0, SHOWN * 4);
  const described = await Promise.all(picked.map(async ({ id }): Promise<JobCandidate> => {
    const read = await store.read(id).catch(() => undefined);
    if (read?.kind !== "ok") return { id };
    const { state, createdAt, model } = read.record;
    return { id, state, createdAt, model };
  }));
  return described.sort((a, b) => (b.createdAt ?? 0) - (a.createdAt ?? 0)).slice(0, SHOWN);
}

/**
 * A candidate for an error's list, the same in the terminal and in a tool reply:
 * `<id> (completed, qwen3:8b, created 2025-01-02 10:20 UTC)`.
 */
export function candidateText(c: JobCandidate): string {
  const about = [
    c.state,
    c.model !== undefined ? escapeLine(c.model.slice(0, 80)) : undefined,
    c.createdAt !== undefined
      ? `created ${new Date(c.createdAt).toISOString().slice(0, 16).replace("T", " ")} UTC`
      : undefined,
  ].filter((x) => x !== undefined);
  return about.length > 0 ? `${c.id} (${about.join(", ")})` : c.id;
}

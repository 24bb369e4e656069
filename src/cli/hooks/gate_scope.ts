/**
 * What the review gate left out of a stop's review, in words, and which of its findings it
 * blocked on before: at a later stop of a session the gate reviews only what changed since its
 * last review (review/diff_since.ts), and a finding it already handed Claude does not block the
 * stop again (issue 29: a gate that blocks twice on one finding holds Claude in a loop over a
 * claim it already answered).
 */
import { cutTo } from "../../platform/text_cut.ts";
import type { LeftOut } from "../../review/diff_since.ts";
import { CLAIM_OVERLAP, claimOverlap, type MergedFinding } from "../../review/panel.ts";
import { quoteLine, quotePath } from "../../platform/plain_text.ts";
import type { RaisedFinding } from "./gate_state.ts";

/** Files named in the left-out text, at most. */
const FILES_NAMED = 3;
/** Repeated findings named in a notice, at most, and the words shown of each. */
const REPEATS_NAMED = 3;
const CLAIM_SHOWN = 100;

/**
 * Whether the gate blocked on `f` before: a finding in the same file whose words, any
 * reviewer's, share as much with one of `f`'s reviewers' as a panel's merge asks of one
 * finding (review/panel.ts). Not its line: the code moves as Claude edits it.
 */
export function raisedBefore(f: MergedFinding, raised: readonly RaisedFinding[]): boolean {
  return raised.some((r) =>
    r.file === f.file &&
    r.claims.some((c) => f.opinions.some((o) => claimOverlap(o.claim, c) >= CLAIM_OVERLAP))
  );
}

/** `2 hunks of app.ts, lib/b.ts`: what an earlier review of the session covered, left out. */
export function leftOutText(left: LeftOut): string | undefined {
  if (left.hunks === 0) return undefined;
  const names = left.files.slice(0, FILES_NAMED).map(quotePath).join(", ") +
    (left.files.length > FILES_NAMED ? `, +${left.files.length - FILES_NAMED} more files` : "");
  return `${left.hunks} hunk${left.hunks === 1 ? "" : "s"} of ${names}, reviewed at an earlier ` +
    "stop of this session and unchanged since";
}

/** `app.ts:2 "eval of input..."`: findings blocked on before, the reviewers' words quoted. */
export function repeatsText(repeated: readonly MergedFinding[]): string {
  const named = repeated.slice(0, REPEATS_NAMED).map((f) =>
    `${quotePath(f.file)}:${f.line} ${quoteLine(cut(f.claim))}`
  );
  if (repeated.length > REPEATS_NAMED) named.push(`+${repeated.length - REPEATS_NAMED} more`);
  return named.join(", ");
}

const cut = (text: string) => cutTo(text, CLAIM_SHOWN);

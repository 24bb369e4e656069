/**
 * Tool calls written as text, in every common shape, read the same way for both engines: the
 * native engine runs what it finds (its text_calls/recover_calls.ts matches the calls to the
 * tools it offered); the claude engine, whose Claude Code runs only structured calls, says
 * when a turn ended on one (unrun_call.ts).
 *
 * Marked formats (tags, special tokens: tagged_formats.ts, token_formats.ts) are read
 * wherever they stand outside code and thinking; unmarked ones (bare JSON, pythonic, a name
 * line, a closing fence: whole_reply.ts) only when they are the whole reply. When nothing can
 * be read but the reply looks like an attempt at a call (attempt.ts), that is said instead.
 */
import { attemptSign } from "./attempt.ts";
import { anyOf, codeRanges, normalizeMarkers, Ranges, type ScanContext } from "./scan.ts";
import { functionTagBlocks, invokeBlocks, taggedBlocks } from "./tagged_formats.ts";
import { thinkingRanges } from "./thinking.ts";
import {
  deepseekBlocks,
  gemmaBlocks,
  harmonyBlocks,
  mistralBlocks,
  pythonTagBlocks,
} from "./token_formats.ts";
import type { FoundBlock, TextCallScan } from "./types.ts";
import { wholeReplyBlocks } from "./whole_reply.ts";

/**
 * Replies longer than this are not read for calls, only looked at for the markers of one
 * (code and thinking not told apart): no model writes a call into 4 MB of text, and the
 * reading, though linear, is not free.
 */
export const MAX_READ_CHARS = 1_000_000;

/** The calls written as text in `text`, in reply order, for tools named `toolNames`. */
export function findTextCalls(text: string, toolNames: readonly string[]): TextCallScan {
  const norm = normalizeMarkers(text);
  if (text.length > MAX_READ_CHARS) {
    // Only the markers, wherever they are: a reply this long is no answer to keep as it is.
    const ctx: ScanContext = { text, norm, skip: new Ranges(), toolNames, signs: [] };
    const sign = attemptSign(ctx, []);
    return sign
      ? { blocks: [], sign: `${sign}, in a reply of ${text.length} characters (too long to read)` }
      : { blocks: [] };
  }
  const thinking = thinkingRanges(norm);
  const ctx: ScanContext = {
    text,
    norm,
    skip: anyOf(codeRanges(norm), Ranges.of(thinking)),
    toolNames,
    signs: [],
  };
  let blocks = markedBlocks(ctx);
  if (blocks.length === 0) blocks = wholeReplyBlocks(ctx, thinking, readMarked);
  if (blocks.length > 0) return { blocks };
  const sign = ctx.signs[0] ?? attemptSign(ctx, thinking);
  return sign ? { blocks, sign } : { blocks };
}

/** The calls of formats with markers, in reply order, none overlapping another. */
function markedBlocks(ctx: ScanContext): FoundBlock[] {
  const all = [
    ...functionTagBlocks(ctx),
    ...taggedBlocks(ctx),
    ...invokeBlocks(ctx),
    ...harmonyBlocks(ctx),
    ...deepseekBlocks(ctx),
    ...gemmaBlocks(ctx),
    ...pythonTagBlocks(ctx),
    ...mistralBlocks(ctx),
  ].sort((a, b) => a.start - b.start || b.end - a.end);
  const out: FoundBlock[] = [];
  for (const b of all) {
    const last = out.at(-1);
    if (!last || b.start >= last.end) out.push(b);
  }
  return out;
}

/** Marked calls in a piece of text on its own (what a closing fence holds). */
function readMarked(text: string, toolNames: readonly string[]): FoundBlock[] {
  const norm = normalizeMarkers(text);
  return markedBlocks({
    text,
    norm,
    skip: Ranges.of(thinkingRanges(norm)),
    toolNames,
    signs: [],
  });
}

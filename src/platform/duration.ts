/**
 * Durations as people write them on a command line (`90s`, `30m`, `2h`, `7d`, `2w`), and an
 * elapsed time as the product prints it (`12.3s`).
 */

const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  min: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/** The forms to name in a message that refuses a duration. */
export const DURATION_EXAMPLES = "90s, 30m, 2h, 7d or 2w";

/**
 * Milliseconds from a number and a unit (ms, s, m or min, h, d, w; any case; a fraction is
 * fine: `1.5h`), or undefined when the text is none. A bare number is milliseconds only
 * where the caller says so (`bare: "ms"`): elsewhere `--older-than 5` could mean anything.
 */
export function parseDuration(text: string, options: { bare?: "ms" } = {}): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]+)?\s*$/i.exec(text);
  if (!m) return undefined;
  const unit = m[2]?.toLowerCase() ?? options.bare;
  const factor = unit === undefined ? undefined : UNIT_MS[unit];
  return factor === undefined ? undefined : Math.round(Number(m[1]) * factor);
}

/**
 * Seconds with one decimal and no space (`12.3s`): a turn or a command takes seconds, and
 * tenths say enough of it. The one spelling of an elapsed time in what users read: the job's
 * elapsed time in every reply and `jobs` listing, a check's or a command's duration.
 */
export function formatElapsed(ms: number): string {
  return `${(Math.max(0, ms) / 1000).toFixed(1)}s`;
}

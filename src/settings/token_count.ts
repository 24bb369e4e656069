/**
 * A token count as people write it: "65536", "64k" (x1024, as context sizes are counted) or
 * "1m" (x1024x1024). Undefined when the text is not one.
 */
export function parseTokenCount(text: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*$/.exec(text);
  if (!m) return undefined;
  const factor = m[2] === "" ? 1 : /k/i.test(m[2]!) ? 1024 : 1024 * 1024;
  const value = Number(m[1]) * factor;
  return Number.isSafeInteger(value) ? value : undefined;
}

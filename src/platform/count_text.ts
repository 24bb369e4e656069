/**
 * A number with thousands separators as messages show it ("4,096", "1,234,567.5"): the text
 * `toLocaleString("en-US")` gives, without asking ICU. A process's first locale-aware call
 * loads ICU's data, which cost 27-33 ms of CPU on Deno and on Node here, and the first claude
 * turn of every server paid it for the context check's sentence, whether or not it was shown.
 */

/** `n` grouped by thousands, with at most three decimals (trailing zeros dropped), as en-US. */
export function formatCount(n: number): string {
  if (!Number.isFinite(n)) return Number.isNaN(n) ? "NaN" : n > 0 ? "∞" : "-∞";
  // toFixed writes exponents from 1e21 on; such figures are not counts, and keep their digits.
  if (Math.abs(n) >= 1e21) return String(n);
  // At most three decimals, rounded half away from zero on the number's shortest decimal
  // digits, as ICU does (toFixed would round the binary value: 0.4285 to 0.428).
  const abs = Math.abs(n);
  let [whole, decimals = ""] = abs < 1e-6 ? ["0"] : String(abs).split(".") as [string, string?];
  if (decimals.length > 3) {
    const kept = BigInt(whole + decimals.slice(0, 3)) + (decimals[3]! >= "5" ? 1n : 0n);
    const digits = kept.toString().padStart(4, "0");
    [whole, decimals] = [digits.slice(0, -3), digits.slice(-3)];
  }
  decimals = decimals.replace(/0+$/, "");
  const text = whole.replace(/\B(?=(\d{3})+$)/g, ",") + (decimals ? `.${decimals}` : "");
  // en-US keeps the sign of a negative figure that rounds to zero, and of -0.
  return n < 0 || Object.is(n, -0) ? `-${text}` : text;
}

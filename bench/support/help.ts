/**
 * `--help` (or `-h`) for every bench: prints the bench's own header comment, which says what it
 * measures, its goal and how to run it, and exits before the bench starts anything. Each bench
 * imports this module first, so that it runs before the others load (tests/e2e/bench_quick_test.ts
 * checks that every bench does).
 */
import { readFileSync } from "node:fs";
import process from "node:process";
import { fileURLToPath } from "node:url";

/** The leading doc comment of `source`, without its comment marks. */
export function headerOf(source: string): string {
  const m = /^\s*\/\*\*([\s\S]*?)\*\//.exec(source);
  if (!m) return "";
  return m[1]!.split("\n").map((line) => line.replace(/^\s*\* ?/, "")).join("\n").trim();
}

if (process.argv.slice(2).some((a) => a === "--help" || a === "-h")) {
  const main = Deno.mainModule.startsWith("file:") ? fileURLToPath(Deno.mainModule) : "";
  const header = main ? headerOf(readFileSync(main, "utf8")) : "";
  console.log(header || "This bench has no description; read its source.");
  process.exit(0);
}

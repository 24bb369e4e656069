/**
 * The entry of the Node bundle (`deno task build:node`). It runs `main` unconditionally
 * because Node before 24.2 has no `import.meta.main`; `deno bundle` rewrites that flag to
 * `false` in every module but the entry, so src/main.ts's own guard stays quiet here.
 */
import process from "node:process";
import { main, needsRegexFallback } from "./main.ts";

const argv = process.argv.slice(2);
// Before the command's own modules load; not for the commands that never run an engine.
if (needsRegexFallback(argv)) (await import("./platform/regex_guard.ts")).enableRegexFallback();
process.exitCode = await main(argv);

/**
 * A model's regex that backtracks badly, over a large file, must not freeze the server: the
 * MCP server answers delegate_status and cancels on the same event loop while a job greps.
 * Run in a child started as the server is (with V8's linear-time fallback flag, see
 * src/platform/regex_guard.ts), which reports how long its event loop went without a turn.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { REGEX_FALLBACK_FLAG } from "../../../../src/platform/regex_guard.ts";

const PROBE = fileURLToPath(new URL("./grep_pacing_probe.ts", import.meta.url));
const CONFIG = fileURLToPath(new URL("../../../../deno.json", import.meta.url));

interface Probe {
  maxGap: number;
  ms: number;
  text: string;
}

async function probe(kib: number, budgetMs: number, pattern = "^(a+)+$"): Promise<Probe> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "grep_pacing_" }));
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        `--v8-flags=${REGEX_FALLBACK_FLAG}`,
        "--config",
        CONFIG,
        PROBE,
        dir,
        String(kib),
        String(budgetMs),
        pattern,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    assert.equal(out.code, 0, `${text}\n${new TextDecoder().decode(out.stderr)}`);
    return JSON.parse(text) as Probe;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("Grep: a backtracking pattern over a 1 MiB file leaves the event loop turns", async () => {
  // Matched line by line in one go, this file held the event loop for 17 s here.
  const r = await probe(1024, 60_000);
  assert.equal(r.text, "fast.txt:1", "the search itself still finds what matches");
  assert.ok(r.maxGap < 500, `the event loop went ${Math.round(r.maxGap)} ms without a turn`);
});

Deno.test("Grep: a search stops at its time limit and says so", async () => {
  const r = await probe(4096, 300);
  assert.match(
    r.text,
    /\[search stopped after 0\.3 s: the time limit of one search; results cover the \d+ files searched so far; narrow the path, glob or pattern\]$/,
  );
  assert.ok(r.ms < 5_000, `the search ran ${Math.round(r.ms)} ms`);
  assert.ok(r.maxGap < 500, `the event loop went ${Math.round(r.maxGap)} ms without a turn`);
});

/**
 * What the tests of `ollama-delegate review` and `review --gate` share: a repository, reviewers
 * the emulator plays by model name, and the gate run as Claude Code runs its Stop hook: the
 * hook input in, one line of output read back. `gate` runs it in this process (gateMain with
 * the input and environment injected); the SIGTERM test in review_gate_test.ts and
 * tests/e2e/plugin_gate_test.ts start the real program.
 */
import { committedRepo } from "../support/git_repo.ts";
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import process from "node:process";
import type { ChatRequestView, EmulatorOptions } from "../support/emulator/emulator.ts";
import { startScene } from "../support/scene.ts";
import { tempDir } from "../support/harness.ts";
import { gateMain } from "../../src/cli/hooks/review_gate.ts";
import type { CliEnv } from "./jobs_support.ts";

export const REVIEW_TASK = "Review these changes";
export const MODELS = ["qwen3-coder:30b", "gpt-oss:20b", "llama3.1:8b"];

export function repo(): string {
  return committedRepo(tempDir("od-cli-review-"), { "app.ts": "const a = 1;\nexport {};\n" });
}

export const finding = (line: number, severity: string, claim: string) => ({
  file: "app.ts",
  line,
  severity,
  claim,
  evidence: "see the diff",
});

/** The new-side line of the diff's first added line that starts with `text`, or undefined. */
function addedLine(diff: string, text: string): number | undefined {
  let line = 0;
  for (const l of diff.split("\n")) {
    const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)/.exec(l);
    if (hunk) line = Number(hunk[1]);
    else if (l.startsWith(`+${text}`) && !l.startsWith("+++")) return line;
    else if (line > 0 && !l.startsWith("-") && !l.startsWith("\\")) line++;
  }
  return undefined;
}

/**
 * Reviewers that read the diff: `eval(` on line 2 is a high finding for the first two models
 * (the third misses it), `exec(` one wherever it is added, `TODO` a low one for the first model
 * only.
 */
export function reviewers(seen: ChatRequestView[]) {
  return (view: ChatRequestView) => {
    if (!view.firstUserText.includes(REVIEW_TASK)) return undefined;
    seen.push(view);
    const found = [];
    if (view.firstUserText.includes("+const b = eval(") && view.model !== "llama3.1:8b") {
      found.push(finding(2, "high", `eval of input runs arbitrary code (${view.model})`));
    }
    const exec = addedLine(view.firstUserText, "const c = exec(");
    if (exec !== undefined && view.model !== "llama3.1:8b") {
      found.push(finding(exec, "high", `exec runs a shell command built from input`));
    }
    if (view.firstUserText.includes("TODO") && view.model === "qwen3-coder:30b") {
      found.push(finding(2, "low", "a TODO left in the code"));
    }
    return { kind: "text" as const, text: JSON.stringify({ findings: found }) };
  };
}

/** Runs `review --gate` with `input` as its stdin; the hook input names the folder. */
export async function gate(ctx: CliEnv, input: string) {
  let stdout = "";
  let stderr = "";
  const started = Date.now();
  // Claude Code reads the hook's whole stdout as its answer: what the gate would print on this
  // process's stdout by another way than its io counts too.
  const write = process.stdout.write;
  const log = console.log;
  process.stdout.write = ((chunk: string | Uint8Array) => {
    stdout += typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk);
    return true;
  }) as typeof process.stdout.write;
  console.log = (...args: unknown[]) => void (stdout += `${args.join(" ")}\n`);
  let code: number;
  try {
    code = await gateMain({
      readInput: () => Promise.resolve(input),
      out: (line) => void (stdout += `${line}\n`),
      err: (line) => void (stderr += `${line}\n`),
      env: ctx.env,
    });
  } finally {
    process.stdout.write = write;
    console.log = log;
  }
  const lines = stdout.trim() === "" ? [] : stdout.trim().split("\n");
  assert.ok(lines.length <= 1, `one JSON object at most: ${stdout}`);
  return {
    code,
    stderr,
    seconds: (Date.now() - started) / 1000,
    output: lines[0] === undefined ? undefined : JSON.parse(lines[0]) as Record<string, unknown>,
  };
}

/** An emulator closed when the test ends, whatever it threw. */
export async function emulator(options: EmulatorOptions) {
  const scene = await startScene({ server: false, emulator: options });
  return Object.assign(scene, { url: scene.emulator.url });
}

export const hook = (sessionId: string, cwd: string, active = false) =>
  JSON.stringify({
    session_id: sessionId,
    transcript_path: "/nonexistent/transcript.jsonl",
    cwd,
    hook_event_name: "Stop",
    stop_hook_active: active,
  });

export const jobCount = (stateDir: string) =>
  existsSync(stateDir)
    ? readdirSync(stateDir, { withFileTypes: true }).filter((e) =>
      e.isDirectory() && !e.name.startsWith(".")
    ).length
    : 0;

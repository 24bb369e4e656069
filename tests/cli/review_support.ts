/**
 * What the tests of `ollama-delegate review` and `review --gate` share: a repository, reviewers
 * the emulator plays by model name, and the gate run as Claude Code runs its Stop hook (the
 * real program in a subprocess, the hook input on stdin, its output read back).
 */
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ChatRequestView, EmulatorOptions } from "../support/ollama_emulator.ts";
import { startScene } from "../support/scene.ts";
import { tempDir } from "../support/harness.ts";
import { cliArgv, type CliEnv } from "./jobs_support.ts";

export const REVIEW_TASK = "Review these changes";
export const MODELS = ["qwen3-coder:30b", "gpt-oss:20b", "llama3.1:8b"];

export function git(cwd: string, ...args: string[]) {
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd });
}

export function repo(): string {
  const dir = tempDir("od-cli-review-");
  git(dir, "init", "-q", "-b", "main");
  writeFileSync(join(dir, "app.ts"), "const a = 1;\nexport {};\n");
  git(dir, "add", ".");
  git(dir, "commit", "-q", "-m", "one");
  return dir;
}

export const finding = (line: number, severity: string, claim: string) => ({
  file: "app.ts",
  line,
  severity,
  claim,
  evidence: "see the diff",
});

/**
 * Reviewers that read the diff: `eval(` is a high finding for the first two models (the third
 * misses it), `TODO` a low one for the first model only.
 */
export function reviewers(seen: ChatRequestView[]) {
  return (view: ChatRequestView) => {
    if (!view.firstUserText.includes(REVIEW_TASK)) return undefined;
    seen.push(view);
    const found = [];
    if (view.firstUserText.includes("+const b = eval(") && view.model !== "llama3.1:8b") {
      found.push(finding(2, "high", `eval of input runs arbitrary code (${view.model})`));
    }
    if (view.firstUserText.includes("TODO") && view.model === "qwen3-coder:30b") {
      found.push(finding(2, "low", "a TODO left in the code"));
    }
    return { kind: "text" as const, text: JSON.stringify({ findings: found }) };
  };
}

/** Runs `review --gate` with `input` on stdin, in `cwd`. */
export async function gate(ctx: CliEnv, cwd: string, input: string) {
  const { command, args } = cliArgv(["review", "--gate"]);
  const child = spawn(command, args, { env: ctx.env, cwd, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Uint8Array) => (stdout += new TextDecoder().decode(c)));
  child.stderr.on("data", (c: Uint8Array) => (stderr += new TextDecoder().decode(c)));
  child.stdin.end(input);
  const started = Date.now();
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", resolve);
  });
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

/**
 * delegate_review end to end: the real server computes the diff of a real git repository, the
 * emulator plays the reviewer (native `/api/chat`, and the real Claude Code CLI on
 * `/v1/messages`), and the reply lists the findings that point into the diff.
 */
import { committedRepo, git } from "../support/git_repo.ts";
import assert from "node:assert/strict";
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ChatRequestView } from "../support/emulator/emulator.ts";
import { field, tempDir } from "../support/harness.ts";
import { startInProcessScene } from "../support/in_process_scene.ts";

const REVIEW_TASK = "Review these changes";

/**
 * A repository with one commit on main and, uncommitted: app.ts lines 2-3 changed (its hunk
 * covers new lines 1-5), and an untracked `.env` holding a secret.
 */
function repo(): string {
  const dir = committedRepo(tempDir("od-review-"), {
    "app.ts": "const a = 1;\nconst b = 2;\nconst c = 3;\nexport {};\n",
    "notes.md": "unchanged\n",
  });
  writeFileSync(
    join(dir, "app.ts"),
    "const a = 1;\nconst b = eval(input);\nconst c = 3;\nconst d = 4;\nexport {};\n",
  );
  writeFileSync(join(dir, ".env"), "TOKEN=SECRET-IN-ENV-FILE\n");
  return dir;
}

const finding = (file: string, line: number, severity: string, claim: string) => ({
  file,
  line,
  severity,
  claim,
  evidence: "see the diff",
});

/** A reviewer that answers `reply` to the review task (and falls back to directives). */
function reviewer(reply: string, seen: ChatRequestView[] = []) {
  return (view: ChatRequestView) => {
    if (!view.firstUserText.includes(REVIEW_TASK)) return undefined;
    seen.push(view);
    return { kind: "text" as const, text: reply };
  };
}

const systemOf = (view: ChatRequestView) =>
  String((view.messages[0] as { content?: unknown }).content ?? "");

Deno.test("review (native): findings in the diff, sorted; those outside dropped and counted", async () => {
  const seen: ChatRequestView[] = [];
  const reply = JSON.stringify({
    findings: [
      finding("app.ts", 4, "low", "d is unused"),
      finding("app.ts", 2, "critical", "eval of input runs arbitrary code"),
      finding("app.ts", 40, "high", "a line that is not in the diff"),
      finding("notes.md", 1, "medium", "a file that is not in the diff"),
    ],
  });
  await using scene = await startInProcessScene({
    emulator: { chatScript: reviewer(reply, seen) },
  });
  const dir = repo();
  const r = await scene.call("delegate_review", {
    cwd: dir,
    engine: "native",
    model: "qwen3:8b",
    focus: "security",
    wait_seconds: 120,
  }, { timeoutMs: 180_000 });
  assert.equal(r.isError, false, r.text);
  assert.equal(field(r.text, "state"), "completed", r.text);
  assert.equal(field(r.text, "agent"), "reviewer");
  assert.match(r.text, /^reviewed: +1 file \(\+2 -1\) of uncommitted changes, focus: security$/m);
  assert.match(r.text, /^not sent: +1: \.env \(.*looks like a secret/m);
  assert.match(r.text, /^findings: +2 \(1 critical, 1 low\)$/m);
  assert.match(r.text, /^dropped: +2 findings outside the diff \(app\.ts:40, notes\.md:1\)$/m);
  const critical = r.text.indexOf('1. [critical] app.ts:2  "eval of input runs arbitrary code"');
  const low = r.text.indexOf('2. [low] app.ts:4  "d is unused"');
  assert.ok(critical > 0 && low > critical, r.text);
  assert.doesNotMatch(r.text, /not in the diff/);
  const id = field(r.text, "job_id")!;
  assert.match(r.text, new RegExp(`delegate_followup\\(\\{ job_id: "${id}"`));

  // What the reviewer got: the diff, the focus, the read-only tools, the reviewer's prompt.
  assert.equal(seen.length, 1);
  const view = seen[0]!;
  assert.match(view.firstUserText, /\+const b = eval\(input\);/);
  assert.match(view.firstUserText, /Focus: security\./);
  assert.deepEqual([...view.tools].sort(), ["Glob", "Grep", "Read"]);
  assert.match(systemOf(view), /You are a careful code reviewer/);
  for (const req of scene.emulator.nativeChatRequests()) {
    assert.equal(req.bodyText.includes("SECRET-IN-ENV-FILE"), false, ".env reached the model");
  }
  // The job folder keeps the diff's line map the server checks findings against.
  const saved = JSON.parse(readFileSync(join(scene.stateDir, id, "review.json"), "utf8"));
  assert.deepEqual(saved.lines, { "app.ts": [[1, 5]] });

  // delegate_result of the review job renders the same checked findings.
  const again = await scene.call("delegate_result", { job_id: id });
  assert.equal(again.isError, false, again.text);
  assert.match(again.text, /^findings: +2 \(1 critical, 1 low\)$/m);
  assert.match(again.text, /^dropped: +2 findings outside the diff/m);
});

Deno.test("review (native): a reply that is not findings JSON is said so, with its path", async () => {
  await using scene = await startInProcessScene({
    emulator: { chatScript: reviewer("Looks good to me! No problems found.") },
  });
  const r = await scene.call("delegate_review", {
    cwd: repo(),
    engine: "native",
    model: "qwen3:8b",
    wait_seconds: 120,
  }, { timeoutMs: 180_000 });
  assert.equal(r.isError, true, r.text);
  assert.equal(field(r.text, "state"), "completed");
  const id = field(r.text, "job_id")!;
  const resultPath = join(scene.stateDir, id, "result.txt");
  assert.ok(
    r.text.includes(
      `The reviewer's reply was not findings JSON (no JSON found in it). Its raw reply: ${resultPath}`,
    ),
    r.text,
  );
  assert.equal(readFileSync(resultPath, "utf8"), "Looks good to me! No problems found.");
});

Deno.test("review (native): JSON in a fenced block with a trailing comma is repaired", async () => {
  const text = "Here is my review:\n```json\n" +
    '{"findings": [{"file": "app.ts", "line": "2", "severity": "HIGH", "claim": "eval", ' +
    '"evidence": "line 2"},]}\n```\n';
  await using scene = await startInProcessScene({ emulator: { chatScript: reviewer(text) } });
  const r = await scene.call("delegate_review", {
    cwd: repo(),
    engine: "native",
    model: "qwen3:8b",
    wait_seconds: 120,
  }, { timeoutMs: 180_000 });
  assert.equal(r.isError, false, r.text);
  assert.match(r.text, /^findings: +1 \(1 high\)$/m);
  assert.match(
    r.text,
    /^repaired: +the reply was not plain JSON \(taken from a fenced code block/m,
  );
  assert.ok(r.text.includes('1. [high] app.ts:2  "eval'), r.text);
});

Deno.test("review: job.json names the review; a task's reply reads no review file; a record without the kind still reads", async () => {
  const reply = JSON.stringify({ findings: [finding("app.ts", 2, "high", "eval of input")] });
  await using scene = await startInProcessScene({ emulator: { chatScript: reviewer(reply) } });
  const dir = repo();
  const review = await scene.call("delegate_review", {
    cwd: dir,
    engine: "native",
    model: "qwen3:8b",
    wait_seconds: 120,
  }, { timeoutMs: 180_000 });
  assert.equal(review.isError, false, review.text);
  const reviewId = field(review.text, "job_id")!;
  const task = await scene.call("delegate_start", {
    engine: "native",
    model: "qwen3:8b",
    prompt: "@reply the plain answer\nanswer",
    cwd: dir,
    wait_seconds: 120,
  }, { timeoutMs: 180_000 });
  assert.equal(field(task.text, "state"), "completed", task.text);
  const taskId = field(task.text, "job_id")!;
  const recordPath = (id: string) => join(scene.stateDir, id, "job.json");
  const record = (id: string) => JSON.parse(readFileSync(recordPath(id), "utf8"));
  assert.equal(record(reviewId).kind, "review");
  assert.equal(record(taskId).kind, "task");

  // A review file in a task's folder is not the task's: its reply is its own output.
  copyFileSync(
    join(scene.stateDir, reviewId, "review.json"),
    join(scene.stateDir, taskId, "review.json"),
  );
  const plain = await scene.call("delegate_result", { job_id: taskId });
  assert.equal(plain.isError, false, plain.text);
  assert.match(plain.text, /--- output ---\nthe plain answer/);
  assert.doesNotMatch(plain.text, /^reviewed:/m);

  // Records written before the kind was: a review ran as an agent, a task (here) as none. A
  // second server reads both from disk.
  for (const id of [reviewId, taskId]) {
    const { kind: _, ...older } = record(id);
    writeFileSync(recordPath(id), JSON.stringify(older));
  }
  const second = await scene.startServer();
  const old = await second.call("delegate_result", { job_id: reviewId });
  assert.equal(old.isError, false, old.text);
  assert.match(old.text, /^findings: +1 \(1 high\)$/m);
  assert.ok(old.text.includes('1. [high] app.ts:2  "eval of input"'), old.text);
  const oldTask = await second.call("delegate_result", { job_id: taskId });
  assert.match(oldTask.text, /--- output ---\nthe plain answer/);
});

Deno.test("review: base...HEAD; a bad base, a clean tree and a non-repository are refused", async () => {
  const seen: ChatRequestView[] = [];
  await using scene = await startInProcessScene({
    emulator: { chatScript: reviewer('{"findings": []}', seen) },
  });
  const dir = repo();
  git(dir, "checkout", "-q", "-b", "topic");
  git(dir, "commit", "-q", "-am", "two");
  const r = await scene.call("delegate_review", {
    cwd: dir,
    base: "main",
    engine: "native",
    model: "qwen3:8b",
    wait_seconds: 120,
  }, { timeoutMs: 180_000 });
  assert.equal(r.isError, false, r.text);
  assert.match(r.text, /^reviewed: +1 file \(\+2 -1\) of main\.\.\.HEAD$/m);
  assert.match(r.text, /^findings: +0$/m);
  assert.match(seen[0]!.firstUserText, /Review these changes \(main\.\.\.HEAD\)/);

  const dash = await scene.call("delegate_review", { cwd: dir, base: "--output=/tmp/x" });
  assert.equal(dash.isError, true);
  assert.match(dash.text, /base is a git ref .* without a leading '-'/);
  assert.equal(existsSync("/tmp/x"), false);
  const missing = await scene.call("delegate_review", { cwd: dir, base: "no-such-branch" });
  assert.equal(missing.isError, true);
  assert.match(missing.text, /base "no-such-branch" names no commit/);

  const clean = tempDir("od-clean-");
  git(clean, "init", "-q");
  writeFileSync(join(clean, "x"), "x\n");
  git(clean, "add", ".");
  git(clean, "commit", "-q", "-m", "x");
  const nothing = await scene.call("delegate_review", { cwd: clean });
  assert.equal(nothing.isError, true);
  assert.match(nothing.text, /^Nothing to review: uncommitted changes in .* are none/);
  const plain = await scene.call("delegate_review", { cwd: tempDir("od-plain-") });
  assert.equal(plain.isError, true);
  assert.match(plain.text, /is not in a git repository/);
});

Deno.test("review (claude engine): the real Claude Code CLI reviews read-only", async () => {
  const reply = JSON.stringify({
    findings: [
      finding("app.ts", 2, "high", "eval of input"),
      finding("app.ts", 99, "low", "outside"),
    ],
  });
  const systems: string[] = [];
  const tools: string[][] = [];
  await using scene = await startInProcessScene({
    emulator: {
      script: (view) => {
        if (!view.firstUserText.includes(REVIEW_TASK)) return undefined;
        systems.push(view.system);
        tools.push(view.tools.map((t) => String((t as { name?: unknown }).name)));
        return { kind: "text", text: reply };
      },
    },
  });
  const r = await scene.call("delegate_review", {
    cwd: repo(),
    engine: "claude",
    model: "qwen3:8b",
    wait_seconds: 180,
  }, { timeoutMs: 240_000 });
  assert.equal(r.isError, false, r.text);
  assert.equal(field(r.text, "state"), "completed", r.text);
  assert.match(r.text, /^findings: +1 \(1 high\)$/m);
  assert.match(r.text, /^dropped: +1 finding outside the diff \(app\.ts:99\)$/m);
  // Claude Code may send side requests with the same first message (without tools, or with
  // its own system prompt): the delegate's turn is the one with tools.
  assert.ok(systems.some((s) => /You are a careful code reviewer/.test(s)), systems.join("\n--\n"));
  // Claude Code adds a placeholder of its own for deferred tools; no tool that changes files.
  const offered = tools.map((t) => t.filter((n) => n !== "DeferredToolPlaceholder").sort())
    .filter((t) => t.length > 0);
  assert.ok(offered.length >= 1, JSON.stringify(tools));
  // The lean harness (the default) offers Read of the reviewer's three read-only tools.
  for (const t of offered) assert.deepEqual(t, ["Read"]);
});

Deno.test("review: a user's reviewer.md replaces the built-in, and still only reads", async () => {
  const seen: ChatRequestView[] = [];
  const home = tempDir("od-home-");
  mkdirSync(join(home, ".ollama-mcp", "agents"), { recursive: true });
  writeFileSync(
    join(home, ".ollama-mcp", "agents", "reviewer.md"),
    "---\ndescription: Mine\ntools: Read, Bash, Write\npermission_mode: bypassPermissions\n" +
      "---\nYou are MY-OWN-REVIEWER.\n",
  );
  await using scene = await startInProcessScene({
    home,
    emulator: { chatScript: reviewer('{"findings": []}', seen) },
  });
  const r = await scene.call("delegate_review", {
    cwd: repo(),
    engine: "native",
    model: "qwen3:8b",
    wait_seconds: 120,
  }, { timeoutMs: 180_000 });
  assert.equal(r.isError, false, r.text);
  assert.equal(field(r.text, "agent"), "reviewer");
  assert.equal(field(r.text, "permission"), "dontAsk");
  assert.match(systemOf(seen[0]!), /You are MY-OWN-REVIEWER\./);
  assert.doesNotMatch(systemOf(seen[0]!), /careful code reviewer/);
  assert.deepEqual(seen[0]!.tools, ["Read"]);
});

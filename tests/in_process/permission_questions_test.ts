/**
 * Permission questions passed up to the person (issue 31, item 3): a delegate's call that its
 * permission mode or allow rules withhold is put to the person at the orchestrating client
 * through MCP elicitation (the SDK's Client declares form elicitation and answers here), on
 * both engines: the native engine from its own permission check, the claude engine (the real
 * Claude Code CLI) through its permission-prompt tool. Allow once, allow for this job, deny and
 * no answer in time; what stays refused whatever the mode is never asked; a client that cannot
 * ask a person (none declared, Claude Code's print mode) is never asked; every answer is in the
 * job's evidence.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import type { ElicitRequest, ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { field, tempDir } from "../support/harness.ts";
import { startInProcessScene } from "../support/in_process_scene.ts";

const linux = process.platform === "linux";
type Params = ElicitRequest["params"];
type Answer = "once" | "job" | "deny" | "decline" | "silence";

/** A person who answers each question from `answers`, in order, and remembers what was asked. */
function person(answers: Answer[], otherwise: Answer = "deny") {
  const asked: Params[] = [];
  /** The questions the server withdrew while they were open, by their index in `asked`. */
  const withdrawn: number[] = [];
  return {
    asked,
    withdrawn,
    /** More answers, for the next job. */
    next(more: Answer[]) {
      answers.push(...more);
    },
    elicit(params: Params, gone?: AbortSignal): Promise<ElicitResult> {
      const index = asked.push(params) - 1;
      gone?.addEventListener("abort", () => withdrawn.push(index));
      const next = answers.shift() ?? otherwise;
      if (next === "silence") return new Promise(() => {});
      if (next === "decline") return Promise.resolve({ action: "decline" });
      return Promise.resolve({ action: "accept", content: { decision: next } });
    },
  };
}

const textOf = (p: Params) => String((p as { message?: string }).message ?? "");
const escaped = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** A work folder with a git repository's host-run files and a secret file, to be kept as is. */
function project(): string {
  const work = tempDir("od-ask-work-");
  mkdirSync(join(work, ".git", "hooks"), { recursive: true });
  writeFileSync(join(work, ".git", "config"), "[core]\n");
  writeFileSync(join(work, ".env"), "TOKEN=s3cret\n");
  return work;
}

Deno.test({
  name: "native: in manual mode a Write and a command are put to the person; allow once, " +
    "deny, allow for this job, no answer in time; each with the job, the path and the cwd, " +
    "and in the evidence",
  ignore: !linux,
  async fn() {
    const them = person(["once", "deny"]);
    await using scene = await startInProcessScene({
      elicit: (p, gone) => them.elicit(p, gone),
      env: { OLLAMA_MCP_PERMISSION_ASK_SECONDS: "3" },
    });
    const work = project();
    const r = await scene.call("delegate_start", {
      engine: "native",
      model: "qwen3:8b",
      permission_mode: "manual",
      prompt: '@tool Write {"file_path":"a.txt","content":"one"}\n' +
        '@tool Write {"file_path":"b.txt","content":"two"}\n@reply done\nwrite two files',
      cwd: work,
      wait_seconds: 120,
    }, { timeoutMs: 180_000 });
    assert.equal(field(r.text, "state"), "completed", r.text);
    assert.equal(readFileSync(join(work, "a.txt"), "utf8"), "one");
    assert.equal(existsSync(join(work, "b.txt")), false, "a denied Write ran");
    assert.equal(them.asked.length, 2);
    const id = field(r.text, "job_id")!;
    const first = textOf(them.asked[0]!);
    assert.match(
      first,
      new RegExp(
        `delegate job ${id.slice(0, 8)} \\(qwen3:8b\\) asks to change this file:\\n\\n` +
          `a\\.txt\\n\\nin ${escaped(work)}\\n`,
      ),
    );
    assert.match(first, /It was not given this permission \(permission mode manual\)\. Allow it\?/);
    assert.deepEqual(
      (them.asked[0]!.requestedSchema as { properties: { decision: { oneOf: unknown } } })
        .properties.decision.oneOf,
      [
        { const: "once", title: "Allow once" },
        { const: "job", title: "Allow Write for the rest of this job" },
        { const: "deny", title: "Deny" },
      ],
    );
    assert.equal(field(r.text, "asked"), "2: Write(a.txt) allowed once, Write(b.txt) denied");
    assert.equal(field(r.text, "denied"), "1: Write(b.txt)");
    // The delegate is told that the person denied it.
    const lines = readFileSync(join(scene.stateDir, id, "transcript.jsonl"), "utf8")
      .trim().split("\n").map((l) => JSON.parse(l));
    const results = lines.filter((e) => e.kind === "tool_result").map((e) => String(e.text));
    assert.match(results[1]!, /Permission to use Write was denied: the person denied it/);

    // Allow for this job: the second Write of the job is not asked; a command is asked too.
    them.next(["job", "once"]);
    const job = await scene.call("delegate_start", {
      engine: "native",
      model: "qwen3:8b",
      permission_mode: "manual",
      prompt: '@tool Write {"file_path":"c.txt","content":"three"}\n' +
        '@tool Write {"file_path":"d.txt","content":"four"}\n' +
        "@bash echo five > e.txt\n@reply done\nwrite three files",
      cwd: work,
      wait_seconds: 120,
    }, { timeoutMs: 180_000 });
    assert.equal(field(job.text, "state"), "completed", job.text);
    assert.equal(readFileSync(join(work, "d.txt"), "utf8"), "four");
    assert.equal(readFileSync(join(work, "e.txt"), "utf8"), "five\n");
    assert.equal(them.asked.length, 4, "the second Write was asked again");
    assert.match(textOf(them.asked[3]!), /asks to run this command:\n\necho five > e\.txt\n/);
    assert.equal(
      field(job.text, "asked"),
      "3: Write(c.txt) allowed for this job, Write(d.txt) allowed for this job (by an " +
        "earlier answer), Bash(echo five > e.txt) allowed once",
    );

    // Nobody answers: the call is denied when the time is up.
    them.next(["silence"]);
    const started = Date.now();
    const silent = await scene.call("delegate_start", {
      engine: "native",
      model: "qwen3:8b",
      permission_mode: "manual",
      prompt: '@tool Write {"file_path":"f.txt","content":"six"}\n@reply done\nwrite a file',
      cwd: work,
      wait_seconds: 120,
    }, { timeoutMs: 180_000 });
    assert.equal(field(silent.text, "state"), "completed", silent.text);
    assert.ok(Date.now() - started >= 3000, "denied before the time was up");
    assert.equal(existsSync(join(work, "f.txt")), false);
    assert.equal(field(silent.text, "asked"), "1: Write(f.txt) denied (no answer in time)");
    // The record holds the answers (delegate_result reads it back).
    const shown = await scene.call("delegate_result", { job_id: field(silent.text, "job_id") });
    assert.match(shown.text, /asked: +1: Write\(f\.txt\) denied \(no answer in time\)/);
  },
});

Deno.test({
  name: "native: what stays refused whatever the mode is never put to the person, who would " +
    "allow anything: host-run paths, credential stores, outside the job's directories",
  ignore: !linux,
  async fn() {
    const them = person([], "job");
    await using scene = await startInProcessScene({ elicit: (p, gone) => them.elicit(p, gone) });
    const work = project();
    const outside = tempDir("od-ask-outside-");
    const r = await scene.call("delegate_start", {
      engine: "native",
      model: "qwen3:8b",
      permission_mode: "manual",
      prompt: '@tool Write {"file_path":".git/config","content":"[core]\\n\\tfsmonitor = evil"}\n' +
        '@tool Write {"file_path":".git/hooks/pre-commit","content":"#!/bin/sh\\nevil"}\n' +
        '@tool Write {"file_path":".ssh/authorized_keys","content":"ssh-ed25519 evil"}\n' +
        `@tool Write ${JSON.stringify({ file_path: join(outside, "x.txt"), content: "out" })}\n` +
        "@reply done\nwrite",
      cwd: work,
      wait_seconds: 120,
    }, { timeoutMs: 180_000 });
    assert.equal(field(r.text, "state"), "completed", r.text);
    assert.equal(them.asked.length, 0, `asked: ${them.asked.map(textOf).join("\n---\n")}`);
    assert.equal(readFileSync(join(work, ".git", "config"), "utf8"), "[core]\n");
    assert.equal(existsSync(join(work, ".git", "hooks", "pre-commit")), false);
    assert.equal(existsSync(join(work, ".ssh")), false);
    assert.equal(existsSync(join(outside, "x.txt")), false);
    assert.equal(field(r.text, "asked"), undefined);
    assert.match(field(r.text, "denied") ?? "", /^4: /);
    const id = field(r.text, "job_id")!;
    const results = readFileSync(join(scene.stateDir, id, "transcript.jsonl"), "utf8")
      .trim().split("\n").map((l) => JSON.parse(l))
      .filter((e) => e.kind === "tool_result").map((e) => String(e.text));
    for (const text of results.slice(0, 4)) {
      assert.match(text, /^Refused without asking: .*No permission mode or answer allows it/);
    }
  },
});

Deno.test({
  name: "native: a client that cannot ask a person is never asked: no elicitation declared, " +
    "or Claude Code's print mode, which declares it and answers cancel",
  ignore: !linux,
  async fn() {
    const work = project();
    const write = '@tool Write {"file_path":"a.txt","content":"one"}\n@reply done\nwrite';
    {
      await using scene = await startInProcessScene();
      const r = await scene.call("delegate_start", {
        engine: "native",
        model: "qwen3:8b",
        permission_mode: "manual",
        prompt: write,
        cwd: work,
        wait_seconds: 120,
      }, { timeoutMs: 180_000 });
      assert.equal(field(r.text, "state"), "completed", r.text);
      assert.equal(field(r.text, "asked"), undefined);
      // Denied as before any person could be asked: Write is not offered in manual mode.
      assert.equal(field(r.text, "denied"), "1: Write(a.txt)");
      assert.equal(existsSync(join(work, "a.txt")), false);
    }
    const them = person([], "once");
    await using scene = await startInProcessScene({
      elicit: (p, gone) => them.elicit(p, gone),
      env: { CLAUDE_CODE_ENTRYPOINT: "sdk-cli" },
    });
    const r = await scene.call("delegate_start", {
      engine: "native",
      model: "qwen3:8b",
      permission_mode: "manual",
      prompt: write,
      cwd: work,
      wait_seconds: 120,
    }, { timeoutMs: 180_000 });
    assert.equal(field(r.text, "state"), "completed", r.text);
    assert.equal(them.asked.length, 0);
    assert.equal(existsSync(join(work, "a.txt")), false);
  },
});

Deno.test({
  name: "claude: Claude Code's permission prompts reach the person through its permission-prompt " +
    "tool: allow once, deny, allow for this job, no answer in time; what stays refused is never " +
    "asked",
  ignore: !linux,
  async fn() {
    const them = person(["once", "deny", "job"]);
    const outside = tempDir("od-ask-outside-");
    writeFileSync(join(outside, "secret.txt"), "OUTSIDE-SECRET\n");
    await using scene = await startInProcessScene({
      elicit: (p, gone) => them.elicit(p, gone),
      env: { OLLAMA_MCP_PERMISSION_ASK_SECONDS: "5" },
      emulator: {
        script: (view) => {
          if (!view.firstUserText.includes("READ-OUTSIDE")) return undefined;
          if (view.lastToolResult === undefined) {
            return {
              kind: "tool_use",
              name: "Read",
              input: { file_path: join(outside, "secret.txt") },
            };
          }
          return { kind: "text", text: `READ-RESULT ${view.lastToolResult}` };
        },
      },
    });
    const work = project();
    const r = await scene.call("delegate_start", {
      engine: "claude",
      model: "qwen3:8b",
      permission_mode: "manual",
      prompt: "@bash echo one > a.txt\n@bash echo two > b.txt\n@bash echo three > c.txt\n" +
        "@bash echo four > d.txt\n@reply done\nwrite files",
      cwd: work,
      wait_seconds: 150,
    }, { timeoutMs: 200_000 });
    assert.equal(field(r.text, "state"), "completed", r.text);
    assert.equal(readFileSync(join(work, "a.txt"), "utf8"), "one\n");
    assert.equal(existsSync(join(work, "b.txt")), false, "a denied command ran");
    assert.equal(readFileSync(join(work, "c.txt"), "utf8"), "three\n");
    assert.equal(readFileSync(join(work, "d.txt"), "utf8"), "four\n");
    assert.equal(them.asked.length, 3, them.asked.map(textOf).join("\n---\n"));
    const id = field(r.text, "job_id")!;
    assert.match(
      textOf(them.asked[0]!),
      new RegExp(
        `delegate job ${id.slice(0, 8)} \\(qwen3:8b\\) asks to run this command:\\n\\n` +
          `echo one > a\\.txt\\n\\nin ${escaped(work)}\\n` +
          "It was not given this permission \\(permission mode manual\\)\\. Allow it\\?",
      ),
    );
    assert.equal(
      field(r.text, "asked"),
      "4: Bash(echo one > a.txt) allowed once, Bash(echo two > b.txt) denied, Bash(echo three " +
        "> c.txt) allowed for this job, Bash(echo four > d.txt) allowed for this job (by an " +
        "earlier answer)",
    );
    assert.match(field(r.text, "denied") ?? "", /^1: Bash\(echo two > b\.txt\)/);

    // Nobody answers within 5 s: denied.
    them.next(["silence"]);
    const silent = await scene.call("delegate_start", {
      engine: "claude",
      model: "qwen3:8b",
      permission_mode: "manual",
      prompt: "@bash echo five > e.txt\n@reply done\nwrite a file",
      cwd: work,
      wait_seconds: 150,
    }, { timeoutMs: 200_000 });
    assert.equal(field(silent.text, "state"), "completed", silent.text);
    assert.equal(existsSync(join(work, "e.txt")), false);
    assert.equal(
      field(silent.text, "asked"),
      "1: Bash(echo five > e.txt) denied (no answer in time)",
    );

    // A person who allows everything is never asked about a file outside the job's directories
    // (Claude Code asks there; the relay refuses), nor about the host-run and secret files its
    // deny rules keep.
    const before = them.asked.length;
    them.next(["job", "job", "job"]);
    const outsideRead = await scene.call("delegate_start", {
      engine: "claude",
      model: "qwen3:8b",
      permission_mode: "manual",
      prompt: "READ-OUTSIDE read the file",
      cwd: work,
      wait_seconds: 150,
    }, { timeoutMs: 200_000 });
    assert.equal(field(outsideRead.text, "state"), "completed", outsideRead.text);
    assert.equal(them.asked.length, before, them.asked.map(textOf).join("\n---\n"));
    const output = (await scene.call("delegate_result", {
      job_id: field(outsideRead.text, "job_id"),
    })).text;
    assert.doesNotMatch(output, /OUTSIDE-SECRET/);
    assert.match(
      output,
      /READ-RESULT .*Refused without asking: .* is outside the job's directories/,
    );
    const kept = await scene.call("delegate_start", {
      engine: "claude",
      model: "qwen3:8b",
      permission_mode: "manual",
      prompt: "@bash printf evil > .git/hooks/pre-commit\n@bash cat .env > leaked.txt\n" +
        "@reply done\nwrite",
      cwd: work,
      wait_seconds: 150,
    }, { timeoutMs: 200_000 });
    assert.equal(field(kept.text, "state"), "completed", kept.text);
    assert.equal(existsSync(join(work, ".git", "hooks", "pre-commit")), false);
    assert.notEqual(
      existsSync(join(work, "leaked.txt")) ? readFileSync(join(work, "leaked.txt"), "utf8") : "",
      "TOKEN=s3cret\n",
    );
  },
});

/** Polls until `ready` holds, for at most `ms`. */
async function until(ready: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!ready()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

Deno.test({
  name: "a job cancelled while its question is open withdraws the question and ends at once, " +
    "on both engines",
  ignore: !linux,
  async fn() {
    const them = person([], "silence");
    await using scene = await startInProcessScene({
      elicit: (p, gone) => them.elicit(p, gone),
      env: { OLLAMA_MCP_PERMISSION_ASK_SECONDS: "300" },
    });
    const work = project();
    for (const engine of ["native", "claude"] as const) {
      const before = them.asked.length;
      const r = await scene.call("delegate_start", {
        engine,
        model: "qwen3:8b",
        permission_mode: "manual",
        prompt: "@bash echo " + engine + " > " + engine + ".txt\n@reply done\nwrite a file",
        cwd: work,
      });
      const id = field(r.text, "job_id")!;
      await until(() => them.asked.length > before, 120_000, `${engine}'s question`);
      const cancelled = Date.now();
      await scene.call("delegate_cancel", { job_id: id });
      const end = await scene.call("delegate_status", { job_id: id, wait_seconds: 60 });
      assert.equal(field(end.text, "state"), "cancelled", end.text);
      assert.ok(Date.now() - cancelled < 30_000, `${engine}: the cancel waited for the answer`);
      await until(() => them.withdrawn.includes(before), 10_000, `${engine}'s withdrawal`);
      assert.equal(existsSync(join(work, `${engine}.txt`)), false);
      if (engine === "native") {
        assert.equal(
          field(end.text, "asked"),
          "1: Bash(echo native > native.txt) denied (the job stopped first)",
        );
      }
    }
  },
});

Deno.test({
  name: "native without its sandbox: in acceptEdits a command that would run unconfined runs " +
    "only when the person allows it, and the question says it would run unconfined",
  ignore: !linux,
  async fn() {
    const them = person(["deny", "once"]);
    await using scene = await startInProcessScene({
      elicit: (p, gone) => them.elicit(p, gone),
      env: { OLLAMA_MCP_SANDBOX: "off" },
    });
    const work = project();
    const r = await scene.call("delegate_start", {
      engine: "native",
      model: "qwen3:8b",
      permission_mode: "acceptEdits",
      prompt: "@bash echo one > a.txt\n@bash echo two > b.txt\n@reply done\nwrite two files",
      cwd: work,
      wait_seconds: 120,
    }, { timeoutMs: 180_000 });
    assert.equal(field(r.text, "state"), "completed", r.text);
    assert.equal(existsSync(join(work, "a.txt")), false, "a denied unconfined command ran");
    assert.equal(readFileSync(join(work, "b.txt"), "utf8"), "two\n");
    assert.equal(them.asked.length, 2);
    assert.match(
      textOf(them.asked[0]!),
      /asks to run this command:\n\necho one > a\.txt\n\nin .*\nIt was not given this permission \(its commands would run unconfined: off \(the sandbox setting is off\)\)\. Allow it\?/,
    );
    assert.match(field(r.text, "sandbox") ?? "", /so each command is put to the person first/);
    assert.equal(
      field(r.text, "asked"),
      "2: Bash(echo one > a.txt) denied, Bash(echo two > b.txt) allowed once",
    );
  },
});

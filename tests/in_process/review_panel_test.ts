/**
 * delegate_review with a panel: the real server starts one read-only reviewer job per model on
 * the same diff, the emulator plays each reviewer by model name, and the reply merges their
 * findings. What reached the emulator shows that no reviewer saw another's answer.
 */
import { committedRepo } from "../support/git_repo.ts";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ChatRequestView, MessagesRequestView } from "../support/emulator/emulator.ts";
import { field, tempDir } from "../support/harness.ts";
import { startInProcessScene } from "../support/in_process_scene.ts";

const REVIEW_TASK = "Review these changes";
const MODELS = ["qwen3-coder:30b", "gpt-oss:20b", "llama3.1:8b"];

/** A repository whose uncommitted change is app.ts lines 2-4 (its hunk covers new lines 1-9). */
function repo(): string {
  const lines = ["const a = 1;", "const b = 2;", "const c = 3;", "const x = 0;", "export {};"];
  const dir = committedRepo(tempDir("od-panel-"), { "app.ts": lines.join("\n") + "\n" });
  writeFileSync(
    join(dir, "app.ts"),
    [
      "const a = 1;",
      "const b = eval(input);",
      "for (let i = 0; i <= list.length; i++) use(list[i]);",
      "const token = log(secret);",
      "const c = 3;",
      "const x = 0;",
      "export {};",
    ].join("\n") + "\n",
  );
  return dir;
}

const finding = (line: number, severity: string, claim: string) => ({
  file: "app.ts",
  line,
  severity,
  claim,
  evidence: `${claim} (evidence)`,
});

/** What each model answers: eval found by all three in their own words, the rest apart. */
const ANSWERS: Record<string, unknown> = {
  "qwen3-coder:30b": {
    findings: [
      finding(2, "high", "QWEN-WORDS eval of user input runs arbitrary code"),
      finding(3, "medium", "loop bound is off by one and reads past the end"),
    ],
  },
  "gpt-oss:20b": {
    findings: [
      finding(3, "critical", "GPTOSS-WORDS arbitrary code execution: eval is called on input"),
      finding(4, "low", "secret written to the log"),
    ],
  },
  "llama3.1:8b": {
    findings: [
      finding(2, "high", "LLAMA-WORDS calling eval with input lets anyone run code"),
      finding(3, "medium", "off by one: the loop bound reads past the end of list"),
    ],
  },
};

function panelScript(seen: ChatRequestView[], answers: Record<string, unknown> = ANSWERS) {
  return (view: ChatRequestView) => {
    if (!view.firstUserText.includes(REVIEW_TASK)) return undefined;
    seen.push(view);
    const answer = answers[view.model];
    if (answer === undefined) return undefined;
    if (typeof answer === "string") {
      // Prose, and late: a reply about the panel must wait for this one too.
      return { kind: "delay" as const, ms: 1500, then: { kind: "text" as const, text: answer } };
    }
    if (answer instanceof Error) {
      return { kind: "error" as const, status: 400, message: answer.message };
    }
    return { kind: "text" as const, text: JSON.stringify(answer) };
  };
}

Deno.test("review panel (native): three blind reviewers, findings merged by agreement, each reviewer's words kept", async () => {
  const seen: ChatRequestView[] = [];
  await using scene = await startInProcessScene({
    emulator: { models: MODELS.map((name) => ({ name })), chatScript: panelScript(seen) },
  });
  const r = await scene.call("delegate_review", {
    cwd: repo(),
    engine: "native",
    models: MODELS,
    wait_seconds: 120,
  }, { timeoutMs: 180_000 });
  assert.equal(r.isError, false, r.text);
  assert.match(r.text, /^reviewers: +3 of 3 answered$/m, r.text);
  assert.match(r.text, /^reviewed: +1 file \(\+3 -1\) of uncommitted changes$/m);
  assert.match(r.text, /^findings: +3 \(1 high, 1 medium, 1 low\), by agreement, then severity$/m);
  const body = r.text.slice(r.text.indexOf("\n\n"));
  const items = body.split("\n").filter((l) => /^\d+\. /.test(l));
  assert.deepEqual(items, [
    "1. [high] app.ts:2 (3 of 3: qwen3-coder:30b high, gpt-oss:20b critical, llama3.1:8b high)  " +
    '"QWEN-WORDS eval of user input runs arbitrary code"',
    '2. [medium] app.ts:3 (2 of 3: qwen3-coder:30b, llama3.1:8b)  "loop bound is off by one and ' +
    'reads past the end"',
    '3. [low] app.ts:4 (1 of 3: gpt-oss:20b)  "secret written to the log"',
  ]);

  // Blind: each reviewer got the same task, and no request carries another's answer.
  const byModel = new Map<string, ChatRequestView[]>();
  for (const v of seen) byModel.set(v.model, [...(byModel.get(v.model) ?? []), v]);
  assert.deepEqual([...byModel.keys()].sort(), [...MODELS].sort());
  const tasks = new Set(seen.map((v) => v.firstUserText));
  assert.equal(tasks.size, 1, "every reviewer got the same diff and instructions");
  const marks: Record<string, string> = {
    "qwen3-coder:30b": "QWEN-WORDS",
    "gpt-oss:20b": "GPTOSS-WORDS",
    "llama3.1:8b": "LLAMA-WORDS",
  };
  for (const req of scene.emulator.nativeChatRequests()) {
    const model = String((JSON.parse(req.bodyText) as { model?: unknown }).model);
    for (const [other, mark] of Object.entries(marks)) {
      if (other === model) continue;
      assert.equal(
        req.bodyText.includes(mark),
        false,
        `${model}'s request carries ${other}'s answer`,
      );
    }
  }

  // Each reviewer is a session of its own to a gateway: one id on all its requests, its own.
  const sessions = new Map<string, Set<string>>();
  for (const req of scene.emulator.nativeChatRequests()) {
    const model = String((JSON.parse(req.bodyText) as { model?: unknown }).model);
    const ids = sessions.get(model) ?? new Set<string>();
    ids.add(req.headers["x-dynamo-session-id"] ?? "none");
    sessions.set(model, ids);
  }
  const perReviewer = [...sessions.values()].map((ids) => [...ids]);
  assert.ok(perReviewer.every((ids) => ids.length === 1 && ids[0] !== "none"), `${perReviewer}`);
  assert.equal(new Set(perReviewer.flat()).size, MODELS.length);

  // Every reviewer's words are kept in the first job's folder.
  const lead = field(r.text, "job_id")!;
  const saved = JSON.parse(readFileSync(join(scene.stateDir, lead, "panel.json"), "utf8"));
  assert.equal(saved.findings[0].agreed, 3);
  assert.deepEqual(
    saved.findings[0].reviewers.map((o: { model: string; claim: string }) => [o.model, o.claim]),
    [
      ["qwen3-coder:30b", "QWEN-WORDS eval of user input runs arbitrary code"],
      ["gpt-oss:20b", "GPTOSS-WORDS arbitrary code execution: eval is called on input"],
      ["llama3.1:8b", "LLAMA-WORDS calling eval with input lets anyone run code"],
    ],
  );
  assert.match(
    r.text,
    new RegExp(`^wordings: +every reviewer's own words: .*${lead}/panel\\.json$`, "m"),
  );

  // min_agreement 2 leaves out what only one reviewer found; delegate_result of any member
  // renders the panel.
  const ids = saved.reviewers.map((x: { job_id: string }) => x.job_id) as string[];
  const again = await scene.call("delegate_result", { job_id: ids[2]! });
  assert.equal(again.isError, false, again.text);
  assert.match(again.text, /^findings: +3 /m);

  // Usage counts each reviewer.
  const usage = await scene.call("delegate_usage", {});
  for (const model of MODELS) {
    assert.match(
      usage.text,
      new RegExp(`^ +${model.replace(/[.:]/g, "\\$&")} +1 job`, "m"),
      usage.text,
    );
  }
});

Deno.test("review panel (native): a reviewer that fails and one that answers prose do not sink the panel; a panel larger than maxConcurrent still ends", async () => {
  const seen: ChatRequestView[] = [];
  await using scene = await startInProcessScene({
    env: { OLLAMA_MCP_MAX_CONCURRENT: "1" },
    emulator: {
      models: MODELS.map((name) => ({ name })),
      chatScript: panelScript(seen, {
        "qwen3-coder:30b": ANSWERS["qwen3-coder:30b"],
        "gpt-oss:20b": new Error("emulated bad request for the panel"),
        "llama3.1:8b": "Looks fine to me, ship it!",
      }),
    },
  });
  const started = await scene.call("delegate_review", {
    cwd: repo(),
    engine: "native",
    models: MODELS,
    min_agreement: 1,
    wait_seconds: 0,
  });
  assert.equal(started.isError, false, started.text);
  assert.match(started.text, /^Review panel started\.$/m, started.text);
  const ids = JSON.parse(/job_ids: (\[[^\]]*\])/.exec(started.text)![1]!) as string[];
  assert.equal(ids.length, 3);
  // delegate_result on the first reviewer waits for the whole panel, then merges it.
  const r = await scene.call("delegate_result", { job_id: ids[0]!, wait_seconds: 120 }, {
    timeoutMs: 180_000,
  });
  assert.equal(r.isError, false, r.text);
  assert.match(r.text, /^reviewers: +1 of 3 answered; the panel went on with the rest$/m, r.text);
  assert.match(r.text, /^ {2}2\. gpt-oss:20b +job \S+ .*: failed: .*emulated bad request/m);
  assert.match(
    r.text,
    /^ {2}3\. llama3\.1:8b +job \S+ .*: its reply was not findings JSON \(no JSON found in it\): /m,
  );
  assert.match(r.text, /^1\. \[high\] app\.ts:2 \(1 of 1: qwen3-coder:30b\)/m);
  const status = await scene.call("delegate_status", {
    job_ids: ids,
    wait: "all",
    wait_seconds: 0,
  }, {
    timeoutMs: 180_000,
  });
  assert.equal((status.text.match(/^state: +(completed|failed)$/gm) ?? []).length, 3, status.text);
  // One slot: the reviewers ran one after another, never two at once.
  const spans = ids.map((id) => {
    const job = JSON.parse(readFileSync(join(scene.stateDir, id, "job.json"), "utf8"));
    return [job.startedAt as number, job.endedAt as number];
  }).sort((a, b) => a[0]! - b[0]!);
  for (let i = 1; i < spans.length; i++) {
    assert.ok(spans[i]![0]! >= spans[i - 1]![1]!, JSON.stringify(spans));
  }
});

Deno.test("review panel: sizes, doubles and min_agreement are checked before any job starts", async () => {
  await using scene = await startInProcessScene({
    emulator: { models: MODELS.map((name) => ({ name })) },
  });
  const dir = repo();
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ models: ["qwen3-coder:30b"] }, /a panel has 2-5 reviewers, and models and agents name 1/],
    [{ models: MODELS, model: "qwen3-coder:30b" }, /pass model .* or models, not both/],
    [{ models: MODELS, min_agreement: 4 }, /min_agreement 4 is more than the panel's 3 reviewers/],
    [
      { models: ["qwen3-coder:30b", "qwen3-coder:30b"] },
      /names model "qwen3-coder:30b" as agent "reviewer" twice/,
    ],
    [{ min_agreement: 2 }, /min_agreement 2 needs a panel/],
    [{ models: [...MODELS, "a", "b", "c"] }, /models: at most 5 entries/],
  ];
  for (const [args, message] of cases) {
    const r = await scene.call("delegate_review", { cwd: dir, engine: "native", ...args });
    assert.equal(r.isError, true, r.text);
    assert.match(r.text, message);
  }
  const jobs = existsSync(scene.stateDir)
    ? [...Deno.readDirSync(scene.stateDir)].filter((e) => e.isDirectory && !e.name.startsWith("."))
    : [];
  assert.deepEqual(jobs.map((e) => e.name), [], "no reviewer job was started");
});

Deno.test("review panel (claude engine): two real Claude Code reviewers, neither sees the other's answer", async () => {
  const seen: MessagesRequestView[] = [];
  const replies: Record<string, string> = {
    "qwen3-coder:30b": JSON.stringify({
      findings: [finding(2, "high", "CLAUDE-A eval runs input as code")],
    }),
    "gpt-oss:20b": JSON.stringify({
      findings: [finding(2, "high", "CLAUDE-B eval of input runs code")],
    }),
  };
  await using scene = await startInProcessScene({
    emulator: {
      models: MODELS.map((name) => ({ name })),
      script: (view) => {
        if (!view.firstUserText.includes(REVIEW_TASK)) return undefined;
        seen.push(view);
        const text = replies[view.model];
        return text === undefined ? undefined : { kind: "text", text };
      },
    },
  });
  const r = await scene.call("delegate_review", {
    cwd: repo(),
    engine: "claude",
    models: ["qwen3-coder:30b", "gpt-oss:20b"],
    wait_seconds: 240,
  }, { timeoutMs: 300_000 });
  assert.equal(r.isError, false, r.text);
  assert.match(r.text, /^reviewers: +2 of 2 answered$/m, r.text);
  assert.match(
    r.text,
    /^1\. \[high\] app\.ts:2 \(2 of 2: qwen3-coder:30b, gpt-oss:20b\) {2}"CLAUDE-A/m,
  );
  for (const view of seen) {
    const body = JSON.stringify(view.messages) + view.system;
    const other = view.model === "qwen3-coder:30b" ? "CLAUDE-B" : "CLAUDE-A";
    assert.equal(body.includes(other), false, `${view.model} saw ${other}`);
  }
  assert.deepEqual([...new Set(seen.map((v) => v.model))].sort(), [
    "gpt-oss:20b",
    "qwen3-coder:30b",
  ]);
});

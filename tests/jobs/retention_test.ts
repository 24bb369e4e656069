import { tempDir } from "../support/temp_dir.ts";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { selfIdentity } from "../../src/platform/process_identity.ts";
import type { JobRecord } from "../../src/jobs/record.ts";
import { startBackgroundPrune } from "../../src/jobs/background_prune.ts";
import { pruneJobs } from "../../src/jobs/retention.ts";
import { JobStore } from "../../src/jobs/store.ts";
import { defaultSettings } from "../../src/settings/fields.ts";
import type { Settings } from "../../src/settings/types.ts";

const DAY = 86_400_000;
const NOW = Date.UTC(2024, 5, 1);
const sid = (n: number) => `5e550000-0000-4000-8000-${String(n).padStart(12, "0")}`;
const jid = (n: number) => `10b00000-0000-4000-8000-${String(n).padStart(12, "0")}`;
/** The test process with a start time it never had: a server that died (pid reused). */
const DEAD_OWNER = { pid: process.pid, startTime: "never" };

function rec(n: number, session: number, over: Partial<JobRecord> = {}): JobRecord {
  return {
    format: 1,
    id: jid(n),
    sessionId: sid(session),
    turn: 1,
    engine: "claude",
    model: "m",
    cwd: "/w",
    state: "completed",
    createdAt: NOW - 40 * DAY,
    startedAt: NOW - 40 * DAY,
    endedAt: NOW - 40 * DAY + 1000,
    promptPreview: "p",
    options: { permissionMode: "auto", addDirs: [] },
    sessionCreated: true,
    owner: DEAD_OWNER,
    toolCalls: 0,
    permissionDenials: [],
    ...over,
  };
}

/** Settings whose claude config dir is the test's own, next to its state dir. */
const settingsFor = (dir: string): Settings => ({
  ...defaultSettings(),
  claudeConfigDir: join(dir, "..", `${dir.split("/").at(-1)}-claude`),
});

async function fixture(): Promise<{ store: JobStore; dir: string; settings: Settings }> {
  const dir = tempDir("od-prune-");
  const store = new JobStore(dir);
  store.init();
  const alive = await selfIdentity();
  const records = [
    // Session 1: two old finished turns -> removed with its index.
    rec(1, 1),
    rec(2, 1, { turn: 2, state: "failed" }),
    // Session 2: an old turn and a recent one -> both kept (the conversation is live).
    rec(3, 2),
    rec(4, 2, { turn: 2, createdAt: NOW - DAY, endedAt: NOW - DAY }),
    // Old but still running (even with its owner gone, pruning never touches it).
    rec(5, 3, { state: "running", endedAt: undefined }),
    // Old, finished, but its server process is alive.
    rec(6, 4, { owner: alive }),
    // Recent.
    rec(7, 5, { createdAt: NOW - 2 * DAY, endedAt: NOW - 2 * DAY }),
    // Old, no endedAt: createdAt counts; no owner recorded.
    rec(8, 6, { state: "interrupted", endedAt: undefined, owner: undefined }),
    // Old queued.
    rec(9, 7, { state: "queued", startedAt: undefined, endedAt: undefined }),
  ];
  for (const r of records) {
    await store.create(r, "prompt");
    await store.addSessionJob(r.sessionId, r.id);
  }
  // An unreadable record and a folder whose record is not written yet.
  mkdirSync(join(dir, jid(10)));
  writeFileSync(join(dir, jid(10), "job.json"), "{ not json");
  mkdirSync(join(dir, jid(11)));
  return { store, dir, settings: settingsFor(dir) };
}

Deno.test("pruneJobs: removes old finished conversations, keeps live, recent and owned ones", async () => {
  const { store, dir, settings } = await fixture();
  const report = await pruneJobs(store, { olderThanMs: 30 * DAY, now: NOW, settings });
  assert.deepEqual(report.removed.map((r) => r.id).sort(), [jid(1), jid(2), jid(8)]);
  for (const n of [1, 2, 8]) assert.equal(existsSync(join(dir, jid(n))), false, `job ${n} stays`);
  for (const n of [3, 4, 5, 6, 7, 9, 10, 11]) {
    assert.equal(existsSync(join(dir, jid(n))), true, `job ${n} was removed`);
  }
  const kept = Object.fromEntries(report.kept.map((k) => [k.id, k.reason]));
  assert.deepEqual(kept, {
    [jid(3)]: "conversation has a newer or live turn",
    [jid(4)]: "recent",
    [jid(5)]: "running",
    [jid(6)]: "owner alive",
    [jid(7)]: "recent",
    [jid(9)]: "running",
    [jid(11)]: "no record yet",
  });
  assert.equal(report.corrupt.length, 1);
  assert.equal(report.corrupt[0]!.id, jid(10));
  assert.match(report.corrupt[0]!.reason, /not valid JSON/);
  assert.deepEqual(report.sessionsRemoved.sort(), [sid(1), sid(6)]);
  const indexes = readdirSync(join(dir, ".sessions")).sort();
  assert.deepEqual(indexes, [2, 3, 4, 5, 7].map((n) => `${sid(n)}.json`));
  assert.deepEqual(report.failed, []);
});

/** Claude Code's files of a session in `claude` (session_files.ts), as a real run leaves them. */
function plantSession(claude: string, session: string): string[] {
  const files = [
    join(claude, "projects", "-w", `${session}.jsonl`),
    join(claude, "projects", "-w", session, "tool-results", "r.txt"),
    join(claude, "todos", `${session}-agent-${session}.json`),
    join(claude, "debug", `${session}.txt`),
  ];
  for (const f of files) {
    mkdirSync(join(f, ".."), { recursive: true });
    writeFileSync(f, "conversation");
  }
  mkdirSync(join(claude, "session-env", session), { recursive: true });
  return files;
}

Deno.test("pruneJobs: a removed conversation's Claude Code files go with it, never through a link; a kept one's stay", async () => {
  const { store, settings } = await fixture();
  const claude = settings.claudeConfigDir;
  const gone = plantSession(claude, sid(1));
  const kept = plantSession(claude, sid(2));
  // Shared files, and a delegate's links to folders outside holding files of that name.
  writeFileSync(join(claude, ".claude.json"), "{}");
  mkdirSync(join(claude, "projects", "-w", "memory"));
  const outside = join(claude, "..", `${sid(9)}-outside`);
  mkdirSync(join(outside, sid(1)), { recursive: true });
  writeFileSync(join(outside, `${sid(1)}.jsonl`), "not Claude Code's");
  symlinkSync(outside, join(claude, "projects", "-linked"));
  symlinkSync(outside, join(claude, "file-history"));

  const dry = await pruneJobs(store, { olderThanMs: 30 * DAY, now: NOW, dryRun: true, settings });
  assert.deepEqual(dry.engineFiles.map((f) => [f.sessionId, f.engine, f.paths.length]), [
    [sid(1), "claude", 5],
  ]);
  for (const f of gone) assert.ok(existsSync(f), `a dry run removed ${f}`);

  const report = await pruneJobs(store, { olderThanMs: 30 * DAY, now: NOW, settings });
  assert.deepEqual(report.failed, []);
  assert.deepEqual(report.engineFiles.map((f) => f.paths.sort()), [[
    join(claude, "debug", `${sid(1)}.txt`),
    join(claude, "projects", "-w", sid(1)),
    join(claude, "projects", "-w", `${sid(1)}.jsonl`),
    join(claude, "session-env", sid(1)),
    join(claude, "todos", `${sid(1)}-agent-${sid(1)}.json`),
  ]]);
  for (const f of gone) assert.equal(existsSync(f), false, f);
  assert.equal(existsSync(join(claude, "session-env", sid(1))), false);
  // Session 2 is kept (a recent turn), and so are its files, what is shared and what lies
  // behind the links.
  for (const f of kept) assert.ok(existsSync(f), f);
  assert.ok(existsSync(join(claude, "session-env", sid(2))));
  assert.ok(existsSync(join(claude, ".claude.json")));
  assert.ok(existsSync(join(claude, "projects", "-w", "memory")));
  assert.ok(existsSync(join(outside, `${sid(1)}.jsonl`)));
  assert.ok(existsSync(join(outside, sid(1))));
});

Deno.test("pruneJobs: a dry run reports the same and removes nothing", async () => {
  const { store, dir, settings } = await fixture();
  const before = readdirSync(dir).sort();
  const sessionsBefore = readdirSync(join(dir, ".sessions")).sort();
  const report = await pruneJobs(store, {
    olderThanMs: 30 * DAY,
    now: NOW,
    dryRun: true,
    settings,
  });
  assert.equal(report.dryRun, true);
  assert.deepEqual(report.removed.map((r) => r.id).sort(), [jid(1), jid(2), jid(8)]);
  assert.deepEqual(report.sessionsRemoved.sort(), [sid(1), sid(6)]);
  assert.deepEqual(readdirSync(dir).sort(), before);
  assert.deepEqual(readdirSync(join(dir, ".sessions")).sort(), sessionsBefore);
});

Deno.test("pruneJobs: an index naming another live job keeps its file", async () => {
  const { store, dir, settings } = await fixture();
  // A follow-up of session 1 started after the scan would be listed here; a job id whose
  // folder exists but is not part of the session's scanned turns keeps the conversation.
  await store.addSessionJob(sid(1), jid(11));
  const report = await pruneJobs(store, { olderThanMs: 30 * DAY, now: NOW, settings });
  assert.ok(existsSync(join(dir, jid(1))));
  assert.ok(!report.removed.some((r) => r.sessionId === sid(1)));
  assert.ok(existsSync(join(dir, ".sessions", `${sid(1)}.json`)));
});

Deno.test("pruneJobs: an empty or missing state dir prunes nothing", async () => {
  const store = new JobStore(join(tmpdir(), `od-missing-${Date.now()}`));
  const settings = settingsFor(store.stateDir);
  const report = await pruneJobs(store, { olderThanMs: DAY, settings });
  assert.deepEqual(report.removed, []);
  await assert.rejects(pruneJobs(store, { olderThanMs: -1, settings }), RangeError);
});

Deno.test("startBackgroundPrune: runs later, off the caller's path; 0 days does nothing", async () => {
  const { store, dir, settings } = await fixture();
  const lines: string[] = [];
  const off = startBackgroundPrune(store, { ...settings, retainDays: 0 }, (l) => lines.push(l), 0);
  assert.equal(await off.done, undefined);
  const handle = startBackgroundPrune(
    store,
    { ...settings, retainDays: 1 },
    (l) => lines.push(l),
    20,
  );
  // Nothing has happened synchronously.
  assert.ok(existsSync(join(dir, jid(1))));
  // The timer is unref'd, so that it never keeps a server alive: hold the loop open here.
  const keep = setInterval(() => {}, 1000);
  const report = await handle.done.finally(() => clearInterval(keep));
  assert.ok(report);
  assert.ok(!existsSync(join(dir, jid(1))));
  // The recent jobs are recent against NOW, which is in the past: all old ones can go now,
  // except those never pruned (running, queued, owner alive, unreadable).
  for (const n of [5, 6, 9, 10, 11]) assert.ok(existsSync(join(dir, jid(n))), `job ${n}`);
  assert.ok(
    lines.some((l) => /^retention: removed \d+ finished job\(s\) older than 1 days/.test(l)),
  );
  assert.ok(lines.some((l) => /skipped 1 unreadable job record/.test(l)));
  const stopped = startBackgroundPrune(store, { ...settings, retainDays: 1 }, () => {}, 60_000);
  stopped.stop();
  assert.equal(await stopped.done, undefined);
});

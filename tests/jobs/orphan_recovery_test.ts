/** Jobs whose server process died: marked interrupted, with what their folder says. */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { isTerminal } from "../../src/jobs/record.ts";
import type { JobRecord } from "../../src/jobs/record.ts";
import { reconcile, recoverOrphans, type RecoveryDeps } from "../../src/jobs/orphan_recovery.ts";
import { identityOf, isRunning, selfIdentity } from "../../src/platform/process_identity.ts";
import { FakeEngine, managerWith } from "./support/fake_engine.ts";

/** A process identity no process has. */
const GONE = { pid: 2_147_483_000, startTime: "1" };
const jobId = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;

function record(id: string, extra: Partial<JobRecord> = {}): JobRecord {
  return {
    format: 1,
    id,
    sessionId: "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee",
    turn: 1,
    engine: "claude",
    model: "qwen3:8b",
    cwd: "/w",
    state: "running",
    createdAt: 1,
    promptPreview: "p",
    options: { permissionMode: "acceptEdits", addDirs: [] },
    sessionCreated: false,
    owner: GONE,
    toolCalls: 1,
    permissionDenials: [],
    ...extra,
  };
}

function setup() {
  const engine = new FakeEngine();
  engine.facts_ = { toolCalls: 4, sessionCreated: true, permissionMode: "acceptEdits" };
  const { store } = managerWith(engine);
  const deps: RecoveryDeps = { store, engines: { claude: engine }, liveRecord: () => undefined };
  return { store, deps };
}

Deno.test("reconcile: an orphan is interrupted, its delegate stopped, its folder's facts kept", async () => {
  const { store, deps } = setup();
  const delegate = spawn("sleep", ["30"]);
  try {
    const child = await identityOf(delegate.pid!);
    const orphan = record(jobId(1), { child });
    await store.create(orphan, "p");
    const after = await reconcile(orphan, deps);
    assert.equal(after.state, "interrupted");
    assert.match(after.errorText ?? "", /pid 2147483000\) stopped before it finished/);
    assert.equal(after.toolCalls, 4);
    assert.equal(after.sessionCreated, true);
    assert.equal(after.effectivePermissionMode, "acceptEdits");
    assert.equal(after.child, undefined);
    assert.equal(await isRunning(child!), false);
    const disk = await store.read(jobId(1));
    assert.equal(disk.kind === "ok" && disk.record.state, "interrupted");
  } finally {
    delegate.kill("SIGKILL");
  }
});

Deno.test("reconcile: a job whose owner still runs, or that this process holds, is left be", async () => {
  const { deps } = setup();
  const owner = spawn("sleep", ["30"]);
  try {
    const alive = record(jobId(2), { owner: await identityOf(owner.pid!) });
    assert.equal((await reconcile(alive, deps)).state, "running");
  } finally {
    owner.kill("SIGKILL");
  }
  const mine = record(jobId(7), { owner: await selfIdentity(), state: "queued" });
  const held = { ...mine, state: "running" as const };
  assert.equal(await reconcile(mine, { ...deps, liveRecord: () => held }), held);
  const done = record(jobId(3), { state: "completed" });
  assert.equal(await reconcile(done, deps), done);
});

Deno.test("recoverOrphans: every orphan on disk, none of ours, none that ended", async () => {
  const { store, deps } = setup();
  await store.create(record(jobId(4)), "p");
  await store.create(record(jobId(5)), "p");
  await store.create(record(jobId(6), { state: "completed" }), "p");
  const ids = await recoverOrphans(deps, (id) => id === jobId(5));
  assert.deepEqual(ids, [jobId(4)]);
  const ours = await store.read(jobId(5));
  assert.ok(ours.kind === "ok" && !isTerminal(ours.record.state));
});

/**
 * The shared queue per backend across real processes: this test process and children that run
 * the same module (tests/jobs/queue/support/shared_queue_child.ts) on one folder, as the servers of
 * several Claude Code sessions do on one state dir.
 */
import { tempDir } from "../../support/temp_dir.ts";
import { until } from "../../support/harness.ts";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SharedEndpointQueues } from "../../../src/jobs/queue/shared_endpoint_queues.ts";
import { endpointFolder } from "../../../src/jobs/queue/slot_queue.ts";
import {
  Child,
  queueDir,
  sharedQueue,
  sleep,
  slotFiles,
  ticketFiles,
  uuid,
  WAIT_MS,
  withChildren,
} from "./support/shared_queue_driver.ts";

Deno.test("endpoint queue: another process's held slots count; one given back lets this one in", async () => {
  const root = tempDir("od-slots-");
  await withChildren(root, 2, 1, async ([other]) => {
    const [a, b] = [uuid(), uuid()];
    other!.send(`enter ${a}`);
    other!.send(`enter ${b}`);
    await other!.line(`held ${a}`);
    await other!.line(`held ${b}`);
    const here = sharedQueue(root, 2);
    const mine = uuid();
    let placed = false;
    let granted: boolean | undefined;
    void here.take(mine, () => (placed = true)).then((ok) => (granted = ok));
    await sleep(600);
    assert.equal(placed, true);
    assert.equal(granted, undefined, "this process waits while the other holds both slots");
    const detail = here.detail(mine)!;
    assert.equal(detail.backend, "ollama");
    assert.equal(detail.position, 1);
    assert.equal(detail.limit, 2);
    assert.deepEqual(
      detail.holders.map((h) => [h.jobId, h.pid, h.here]).sort(),
      [[a, other!.proc.pid, false], [b, other!.proc.pid, false]].sort(),
    );
    other!.send(`exit ${a}`);
    const deadline = Date.now() + WAIT_MS;
    while (granted === undefined && Date.now() < deadline) await sleep(20);
    assert.equal(granted, true);
    assert.equal(slotFiles(root).length, 2);
    // Files are the user's own: 0700 folders, 0600 files.
    assert.equal(statSync(root).mode & 0o777, 0o700);
    assert.equal(statSync(queueDir(root)).mode & 0o777, 0o700);
    for (const f of slotFiles(root)) {
      assert.equal(statSync(join(queueDir(root), f)).mode & 0o777, 0o600, f);
    }
    here.giveBack(mine);
    assert.equal(slotFiles(root).length, 1);
  });
});

Deno.test("endpoint queue: two processes claiming a free slot at the same moment: one wins", async () => {
  const root = tempDir("od-slots-");
  await withChildren(root, 1, 2, async ([b, c]) => {
    for (let round = 0; round < 30; round++) {
      const [idB, idC] = [uuid(), uuid()];
      const at = Date.now() + 150;
      b!.send(`enter ${idB} ${at}`);
      c!.send(`enter ${idC} ${at}`);
      const first = await Promise.race([
        b!.line(`held ${idB}`).then(() => ({ winner: b!, id: idB, loser: c!, other: idC })),
        c!.line(`held ${idC}`).then(() => ({ winner: c!, id: idC, loser: b!, other: idB })),
      ]);
      await sleep(100);
      assert.equal(first.loser.has(`held ${first.other}`), false, `round ${round}: both won`);
      first.winner.send(`exit ${first.id}`);
      await first.loser.line(`held ${first.other}`);
      first.loser.send(`exit ${first.other}`);
      await first.loser.line(`released ${first.other}`);
    }
  });
});

Deno.test("endpoint queue: the slot of a killed process is taken over", async () => {
  const root = tempDir("od-slots-");
  const doomed = new Child(root, 1);
  await doomed.line("ready");
  const held = uuid();
  doomed.send(`enter ${held}`);
  await doomed.line(`held ${held}`);
  await doomed.kill();
  assert.deepEqual(slotFiles(root), [`slot-0-${held}.json`], "the dead holder's file is left");
  const here = sharedQueue(root, 1);
  const mine = uuid();
  const granted = await Promise.race([
    here.take(mine, () => {}),
    sleep(WAIT_MS).then(() => "still waiting"),
  ]);
  assert.equal(granted, true);
  assert.deepEqual(slotFiles(root), [`slot-0-${mine}.json`]);
  here.giveBack(mine);
});

Deno.test("endpoint queue: two processes racing for one stale slot: exactly one wins", async () => {
  const root = tempDir("od-slots-");
  const doomed = new Child(root, 1);
  await doomed.line("ready");
  const dead = uuid();
  doomed.send(`enter ${dead}`);
  await doomed.line(`held ${dead}`);
  await doomed.kill();
  // What a server killed while holding the slot leaves behind, planted again for each round.
  const left = JSON.parse(readFileSync(join(queueDir(root), `slot-0-${dead}.json`), "utf8"));
  await withChildren(root, 1, 2, async ([b, c]) => {
    for (let round = 0; round < 20; round++) {
      const stale = uuid();
      if (round > 0) {
        writeFileSync(
          join(queueDir(root), `slot-0-${stale}.json`),
          JSON.stringify({ ...left, jobId: stale }),
        );
      }
      const [idB, idC] = [uuid(), uuid()];
      const at = Date.now() + 150;
      b!.send(`enter ${idB} ${at}`);
      c!.send(`enter ${idC} ${at}`);
      const first = await Promise.race([
        b!.line(`held ${idB}`).then(() => ({ winner: b!, id: idB, loser: c!, other: idC })),
        c!.line(`held ${idC}`).then(() => ({ winner: c!, id: idC, loser: b!, other: idB })),
      ]);
      // The loser gets as long as before to announce a second hold, were it to win too.
      await sleep(100);
      // Its claim is create-then-verify: its own file stays until it has listed the folder
      // again, which on a loaded machine takes longer than any fixed pause. The stale file and
      // the losing claim must both go; one that stays fails here after 5 s.
      const settled = Date.now() + 5_000;
      while (slotFiles(root).length > 1 && Date.now() < settled) await sleep(20);
      assert.equal(first.loser.has(`held ${first.other}`), false, `round ${round}: both won`);
      assert.deepEqual(slotFiles(root), [`slot-0-${first.id}.json`], "the stale file is gone");
      first.winner.send(`exit ${first.id}`);
      await first.loser.line(`held ${first.other}`);
      first.loser.send(`exit ${first.other}`);
      await first.loser.line(`released ${first.other}`);
    }
  });
});

/**
 * The place `id` holds in `queue`'s line, once it has one: its ticket is written in the
 * background, and on a machine running two suites at once that took longer than the 300 ms a
 * test used to allow it.
 */
function placed(queue: { position(id: string): number }, id: string): Promise<number> {
  return until(() => queue.position(id) || undefined, WAIT_MS, `a place in the line for ${id}`);
}

Deno.test("endpoint queue: a job that leaves the queue while waiting holds nothing and is out of the queue", async () => {
  const root = tempDir("od-slots-");
  await withChildren(root, 1, 1, async ([other]) => {
    const theirs = uuid();
    other!.send(`enter ${theirs}`);
    await other!.line(`held ${theirs}`);
    const here = sharedQueue(root, 1);
    const [first, second] = [uuid(), uuid()];
    const outcome: Record<string, boolean> = {};
    void here.take(first, () => {}).then((ok) => (outcome[first] = ok));
    await sleep(100);
    void here.take(second, () => {}).then((ok) => (outcome[second] = ok));
    assert.equal(await placed(here, first), 1);
    assert.equal(await placed(here, second), 2);
    assert.equal(here.leave(first), true);
    await sleep(300);
    assert.equal(outcome[first], false);
    assert.equal(here.leave(first), false, "leaving twice does nothing");
    assert.deepEqual(ticketFiles(root), [`wait-${second}.json`]);
    assert.deepEqual(slotFiles(root), [`slot-0-${theirs}.json`], "no slot was taken or freed");
    assert.equal(here.position(second), 1);
    other!.send(`exit ${theirs}`);
    const deadline = Date.now() + WAIT_MS;
    while (outcome[second] === undefined && Date.now() < deadline) await sleep(20);
    assert.equal(outcome[second], true);
    assert.deepEqual(slotFiles(root), [`slot-0-${second}.json`]);
    assert.deepEqual(ticketFiles(root), []);
    here.giveBack(second);
  });
});

Deno.test("endpoint queue: FIFO across processes: an earlier ticket of another process goes first", async () => {
  const root = tempDir("od-slots-");
  await withChildren(root, 1, 2, async ([holder, early]) => {
    const held = uuid();
    holder!.send(`enter ${held}`);
    await holder!.line(`held ${held}`);
    const before = uuid();
    early!.send(`enter ${before}`);
    await early!.line(`waiting ${before}`);
    const here = sharedQueue(root, 1);
    const mine = uuid();
    let granted = false;
    void here.take(mine, () => {}).then((ok) => (granted = ok));
    assert.equal(await placed(here, mine), 2);
    holder!.send(`exit ${held}`);
    await early!.line(`held ${before}`);
    await sleep(500);
    assert.equal(granted, false, "the later ticket waited for the earlier one");
    early!.send(`exit ${before}`);
    const deadline = Date.now() + WAIT_MS;
    while (!granted && Date.now() < deadline) await sleep(20);
    assert.equal(granted, true);
    here.giveBack(mine);
  });
});

Deno.test("endpoint queue: endpoint URLs become safe folder names; queues are per URL, each job holding to its own limit", async () => {
  assert.match(endpointFolder("http://gpu-1.lab:11434"), /^endpoint-gpu-1.lab_11434-[0-9a-f]{12}$/);
  assert.doesNotMatch(endpointFolder("http://../../etc"), /\//);
  assert.notEqual(endpointFolder("http://h:1/a"), endpointFolder("http://h:1/b"));
  assert.notEqual(endpointFolder("http://h:1"), endpointFolder("https://h:1"));
  const root = tempDir("od-slots-");
  const here = new SharedEndpointQueues(root);
  const url = "http://gpu:11434";
  // A backend without a limit has no shared queue: nothing is written.
  assert.equal(await here.take(uuid(), { url, backend: "free" }, () => {}), true);
  assert.deepEqual(readdirSync(root), []);
  // Two backends naming one URL share its queue: "lab" (1 at once) and the default (2).
  const id = uuid();
  assert.equal(await here.take(id, { url, backend: "lab", limit: 1 }, () => {}), true);
  assert.deepEqual(readdirSync(join(root, endpointFolder(url))), [`slot-0-${id}.json`]);
  const other = uuid();
  assert.equal(await here.take(other, { url, backend: "ollama", limit: 2 }, () => {}), true);
  assert.equal(readdirSync(join(root, endpointFolder(url))).length, 2);
  let labWaited = false;
  const labNext = { id: uuid(), done: Promise.resolve(false) };
  labNext.done = here.take(
    labNext.id,
    { url, backend: "lab", limit: 1 },
    () => (labWaited = true),
  );
  await sleep(300);
  assert.equal(labWaited, true, "lab's one slot on the URL is taken");
  assert.equal(here.detail(uuid()), undefined);
  // Another URL is another queue.
  const elsewhere = uuid();
  assert.equal(
    await here.take(elsewhere, { url: "http://gpu2:11434", backend: "lab", limit: 1 }, () => {}),
    true,
  );
  here.giveBack(id);
  await sleep(300);
  assert.equal(here.position(labNext.id), 1, "the default's job still counts on the URL");
  here.giveBack(other);
  assert.equal(await labNext.done, true);
  here.giveBack(elsewhere);
});

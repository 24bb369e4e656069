/**
 * Leases on the shared queue across real processes: a server stopped with SIGSTOP (what Ctrl-Z
 * does) keeps its pid but stops renewing, so its slot or ticket stops holding up the others';
 * resumed with SIGCONT, it finds out before it does more work with a slot it lost.
 */
import { tempDir } from "../../support/temp_dir.ts";
import assert from "node:assert/strict";
import { readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  Child,
  queueDir,
  sharedQueue,
  sleep,
  slotFiles,
  ticketFiles,
  uuid,
  withChildren,
} from "./support/shared_queue_driver.ts";

/** A short lease, so that the tests take seconds; renewed every 300 ms. */
const LEASE_MS = 1200;
/** When a stopped holder's slot may be taken: its lease, then 3/8 of it seen stale. */
const TAKEOVER_MS = LEASE_MS + LEASE_MS * 3 / 8;
const now = () => performance.timeOrigin + performance.now();
const root = () => tempDir("od-lease-");

/** Resolves with the time job `id` got its slot in `here`, or undefined after `ms`. */
async function grantedWithin(
  here: ReturnType<typeof sharedQueue>,
  id: string,
  ms: number,
): Promise<number | undefined> {
  let at: number | undefined;
  const entered = here.take(id, () => {}).then((ok) => {
    if (ok) at = now();
  });
  const deadline = Date.now() + ms;
  while (at === undefined && Date.now() < deadline) await sleep(20);
  if (at === undefined) {
    here.leave(id);
    await entered;
  }
  return at;
}

Deno.test("lease: a stopped holder's slot is taken within its lease; resumed, it stops before more work", async () => {
  const dir = root();
  await withChildren(dir, 1, 1, async ([stopped]) => {
    const theirs = uuid();
    stopped!.send(`enter ${theirs}`);
    await stopped!.line(`held ${theirs}`);
    stopped!.send(`work ${theirs} 1000 20`);
    await sleep(200);
    stopped!.signal("SIGSTOP");
    const stoppedAt = now();
    const here = sharedQueue(dir, 1, LEASE_MS);
    const mine = uuid();
    const heldAt = await grantedWithin(here, mine, 10_000);
    assert.ok(heldAt !== undefined, "the stopped server's slot was never given up");
    // The stale bound, with room for a loaded machine; the floor: not before the lease ran out.
    assert.ok(heldAt - stoppedAt >= LEASE_MS - 300, `taken ${heldAt - stoppedAt} ms after`);
    assert.ok(heldAt - stoppedAt <= TAKEOVER_MS + 2500, `taken ${heldAt - stoppedAt} ms after`);
    assert.deepEqual(
      slotFiles(dir).sort(),
      [`slot-0-${mine}.json`, `slot-0-${theirs}.json`].sort(),
    );

    await sleep(300);
    stopped!.signal("SIGCONT");
    const worked = await stopped!.line(`worked ${theirs}`);
    const starts = JSON.parse(worked.split(" ")[2]!) as number[];
    assert.ok(stopped!.has(`stopped ${theirs}`), "the resumed server was not told it lost");
    assert.ok(starts.length > 0);
    assert.deepEqual(starts.filter((t) => t >= heldAt), [], "it worked while the other held");
    await stopped!.line(`lost ${theirs}`);
    assert.deepEqual(slotFiles(dir), [`slot-0-${mine}.json`], "it removed its own file");
    assert.equal(await here.stillHolds(mine), true);

    // Queued again, it waits for the slot like anyone, and gets it once given back.
    const again = uuid();
    stopped!.send(`enter ${again}`);
    await stopped!.line(`waiting ${again}`);
    await sleep(2 * LEASE_MS);
    assert.equal(stopped!.has(`held ${again}`), false, "two held the one slot");
    here.giveBack(mine);
    await stopped!.line(`held ${again}`);
  }, LEASE_MS);
});

Deno.test("lease: a holder that keeps running keeps its slot past its lease; stopped with nobody waiting, it goes on", async () => {
  const dir = root();
  await withChildren(dir, 1, 1, async ([holder]) => {
    const theirs = uuid();
    holder!.send(`enter ${theirs}`);
    await holder!.line(`held ${theirs}`);
    const here = sharedQueue(dir, 1, LEASE_MS);
    const mine = uuid();
    assert.equal(
      await grantedWithin(here, mine, 3 * LEASE_MS),
      undefined,
      "a renewed slot was taken",
    );

    // Stopped past its lease while nobody waits: nobody took the slot, so it keeps it.
    holder!.send(`work ${theirs} 60 20`);
    await sleep(100);
    holder!.signal("SIGSTOP");
    await sleep(2 * LEASE_MS);
    const resumedAt = now();
    holder!.signal("SIGCONT");
    const worked = await holder!.line(`worked ${theirs}`);
    const starts = JSON.parse(worked.split(" ")[2]!) as number[];
    assert.equal(holder!.has(`stopped ${theirs}`), false, worked);
    assert.ok(starts.some((t) => t >= resumedAt), "it went on after it was resumed");
    assert.deepEqual(slotFiles(dir), [`slot-0-${theirs}.json`]);
    holder!.send(`exit ${theirs}`);
  }, LEASE_MS);
});

Deno.test("lease: a stopped waiter's ticket does not hold up the queue; resumed, it queues on", async () => {
  const dir = root();
  await withChildren(dir, 1, 2, async ([holder, waiter]) => {
    const held = uuid();
    holder!.send(`enter ${held}`);
    await holder!.line(`held ${held}`);
    const early = uuid();
    waiter!.send(`enter ${early}`);
    await waiter!.line(`waiting ${early}`);
    waiter!.signal("SIGSTOP");
    const here = sharedQueue(dir, 1, LEASE_MS);
    const mine = uuid();
    const entered = grantedWithin(here, mine, 10_000);
    await sleep(200);
    holder!.send(`exit ${held}`);
    assert.ok((await entered) !== undefined, "the stopped waiter's ticket held up the queue");
    assert.deepEqual(ticketFiles(dir), [`wait-${early}.json`], "its ticket is left for it");
    waiter!.signal("SIGCONT");
    await sleep(2 * LEASE_MS);
    assert.equal(waiter!.has(`held ${early}`), false, "two held the one slot");
    here.giveBack(mine);
    await waiter!.line(`held ${early}`);
  }, LEASE_MS);
});

Deno.test("lease: a slot file without a lease (an older server) counts while its process exists", async () => {
  const dir = root();
  const old = new Child(dir, 1);
  try {
    await old.line("ready");
    const theirs = uuid();
    old.send(`enter ${theirs}`);
    await old.line(`held ${theirs}`);
    old.signal("SIGSTOP");
    const file = join(queueDir(dir), `slot-0-${theirs}.json`);
    const { leaseMs: _dropped, ...entry } = JSON.parse(readFileSync(file, "utf8"));
    writeFileSync(file, JSON.stringify(entry));
    utimesSync(file, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    const here = sharedQueue(dir, 1, LEASE_MS);
    assert.equal(await grantedWithin(here, uuid(), 3 * LEASE_MS), undefined);
  } finally {
    await old.stop();
  }
});

import assert from "node:assert/strict";
import { procfsSource, psSource } from "../../../src/platform/posix/proc_source.ts";
import { isAliveWith } from "../../../src/platform/posix/proc_tree.ts";

const linux = Deno.build.os === "linux";

Deno.test({
  name: "a start time recorded from /proc and one from ps are not compared with each other",
  ignore: !linux,
  async fn() {
    const pid = Deno.pid;
    const fromProc = (await procfsSource.probe([pid])).get(pid)!.startTime;
    const fromPs = (await psSource.probe([pid])).get(pid)!.startTime;
    assert.match(fromProc, /^\d+$/);
    assert.doesNotMatch(fromPs, /^\d+$/);
    // Each source still tells a reused pid by its own kind of token...
    assert.equal(await isAliveWith(procfsSource, pid, fromProc), true);
    assert.equal(await isAliveWith(procfsSource, pid, String(Number(fromProc) + 1)), false);
    assert.equal(await isAliveWith(psSource, pid, fromPs), true);
    assert.equal(await isAliveWith(psSource, pid, "Mon Jan  1 00:00:00 2001"), false);
    // ...and a token of the other kind never makes a live process look dead.
    assert.equal(await isAliveWith(psSource, pid, fromProc), true);
    assert.equal(await isAliveWith(procfsSource, pid, fromPs), true);
  },
});

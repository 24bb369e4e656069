/**
 * The job layer's verification rounds: the server's check after the turn, repair rounds with
 * the failing output, and every way the loop ends (a pass, the cap, no progress, the same
 * failure again, a failed backend, a cancel). The engine is the fake one; both real engines'
 * checks are tested through the real server in tests/in_process/verify_test.ts.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { CheckResult, VerifySpec } from "../../src/engines/types.ts";
import { verifyLines, verifyMark } from "../../src/jobs/checks/verify_words.ts";
import {
  failedCheck,
  FakeEngine,
  managerWith,
  newTurn,
  passedCheck,
} from "./support/fake_engine.ts";

const TEST = "npm test";

Deno.test("a job whose check passes is verified, with its log in the job folder", async () => {
  const { manager, store, engine } = managerWith(new FakeEngine());
  engine.checks.push(passedCheck(TEST));
  const view = await manager.start(newTurn("do it", { checks: { verify: [TEST] } }));
  (await engine.turn(0)).end();
  const end = await manager.wait(view.record.id, 10);
  assert.equal(end.record.state, "completed");
  assert.equal(end.record.verification?.verdict, "passed");
  assert.equal(engine.turns.length, 1, "no repair round");
  assert.deepEqual(engine.verified[0]!.commands, [TEST]);
  assert.equal(engine.verified[0]!.cwd, end.record.cwd);
  const log = readFileSync(join(store.dirOf(view.record.id), "verify-1.log"), "utf8");
  assert.match(log, /verification 1: passed\n\n\$ npm test\nexit 0, 0\.8s\nok/);
});

Deno.test("a failing check starts repair rounds with its output, up to verify_rounds", async () => {
  const { manager, store, engine } = managerWith(new FakeEngine());
  engine.checks.push(
    failedCheck(TEST, "FAIL add.test.js\n  3 failing"),
    failedCheck(TEST, "FAIL add.test.js\n  2 failing"),
    failedCheck(TEST, "FAIL add.test.js\n  1 failing"),
  );
  const view = await manager.start(
    newTurn("make the tests pass", { checks: { verify: [TEST], verifyRounds: 2 } }),
  );
  const cwd = view.record.cwd;
  const first = await engine.turn(0);
  first.sink.sessionStarted({});
  first.end();
  for (const n of [1, 2]) {
    const repair = await engine.turn(n);
    // Each round changes a file: progress, with a different failure each time.
    writeFileSync(join(cwd, "add.js"), `round ${n}`);
    assert.equal(repair.spec.resume, true, "a repair round continues the conversation");
    assert.equal(repair.spec.previousDir, store.dirOf(view.record.id));
    assert.equal(repair.spec.turn, 1, "the same turn of the session");
    const prompt = readFileSync(repair.spec.promptPath, "utf8");
    assert.match(prompt, new RegExp(`repair round ${n} of at most 2`));
    assert.match(prompt, /\$ npm test\nexit 1, 1\.2s/);
    assert.match(prompt, new RegExp(`${4 - n} failing`), "the failing output is in the prompt");
    repair.end({ resultText: `fixed ${n}` });
  }
  const end = await manager.wait(view.record.id, 10);
  assert.equal(engine.turns.length, 3, "one turn and two repair rounds, no more");
  assert.equal(engine.verified.length, 3);
  assert.equal(end.record.state, "failed");
  const v = end.record.verification!;
  assert.equal(v.verdict, "failed");
  assert.equal(v.rounds.length, 3);
  assert.equal(v.stopped, "all 2 repair rounds used");
  assert.match(
    end.record.errorText!,
    /^verify_failed: failed \(npm test: exit 1, 1\.2s, 1 failing\)/,
  );
  assert.match(end.record.errorText!, /after 2 repair rounds/);
  for (const n of [1, 2, 3]) {
    assert.ok(existsSync(join(store.dirOf(view.record.id), `verify-${n}.log`)), `log ${n}`);
  }
});

Deno.test("a repair round that changes no file ends the loop", async () => {
  const { manager, engine } = managerWith(new FakeEngine());
  engine.checks.push(failedCheck(TEST, "1 failing"), failedCheck(TEST, "other failure"));
  const view = await manager.start(
    newTurn("fix", { checks: { verify: [TEST], verifyRounds: 5 } }),
  );
  (await engine.turn(0)).end();
  (await engine.turn(1)).end({ resultText: "I fixed it" });
  const end = await manager.wait(view.record.id, 10);
  assert.equal(engine.turns.length, 2);
  assert.equal(engine.verified.length, 1, "not checked again: nothing changed");
  assert.equal(end.record.verification?.stopped, "repair round 1 changed no file");
  assert.equal(end.record.state, "failed");
});

Deno.test("the same failure after a repair round ends the loop", async () => {
  const { manager, engine } = managerWith(new FakeEngine());
  // The same failure, but for its duration and a temporary path.
  engine.checks.push(
    failedCheck(TEST, "Error at /tmp/abc123/x.js\n1 failing (35ms)"),
    failedCheck(TEST, "Error at /tmp/zz9/x.js\n1 failing (41ms)"),
  );
  const view = await manager.start(
    newTurn("fix", { checks: { verify: [TEST], verifyRounds: 5 } }),
  );
  (await engine.turn(0)).end();
  const repair = await engine.turn(1);
  writeFileSync(join(view.record.cwd, "x.js"), "changed");
  repair.end();
  const end = await manager.wait(view.record.id, 10);
  assert.equal(engine.turns.length, 2);
  assert.equal(engine.verified.length, 2);
  assert.equal(end.record.verification?.stopped, "the same failure came back after repair round 1");
});

Deno.test("verify_rounds 0 checks once and repairs nothing", async () => {
  const { manager, engine } = managerWith(new FakeEngine());
  engine.checks.push(failedCheck(TEST, "1 failing"));
  const view = await manager.start(
    newTurn("fix", { checks: { verify: [TEST], verifyRounds: 0 } }),
  );
  (await engine.turn(0)).end();
  const end = await manager.wait(view.record.id, 10);
  assert.equal(engine.turns.length, 1);
  assert.equal(end.record.state, "failed");
  assert.equal(end.record.verification?.stopped, undefined);
});

Deno.test("a repair round whose backend fails ends the job with the evidence so far", async () => {
  const { manager, engine } = managerWith(new FakeEngine());
  engine.checks.push(failedCheck(TEST, "2 failing"));
  const view = await manager.start(newTurn("fix", { checks: { verify: [TEST] } }));
  (await engine.turn(0)).end({ resultText: "all tests pass" });
  (await engine.turn(1)).end({
    ok: false,
    errorText: "backend_unreachable: Cannot reach Ollama at http://127.0.0.1:9",
  });
  const end = await manager.wait(view.record.id, 10);
  assert.equal(engine.turns.length, 2);
  assert.equal(end.record.state, "failed");
  assert.equal(end.record.verification?.rounds.length, 1, "the first check is kept");
  assert.match(
    end.record.verification!.stopped!,
    /repair round 1 did not complete \(backend_unreachable/,
  );
  assert.match(
    end.record.errorText!,
    /^verify_failed: failed \(npm test: exit 1, 1\.2s, 2 failing\)/,
  );
});

Deno.test("a turn that fails is not checked", async () => {
  const { manager, engine } = managerWith(new FakeEngine());
  const view = await manager.start(newTurn("fix", { checks: { verify: [TEST] } }));
  (await engine.turn(0)).end({ ok: false, errorText: "context_overflow: too long" });
  const end = await manager.wait(view.record.id, 10);
  assert.equal(engine.verified.length, 0);
  assert.equal(end.record.verification?.verdict, "not-run");
  assert.equal(end.record.errorText, "context_overflow: too long");
});

Deno.test("cancel stops a running check", async () => {
  const { manager, engine } = managerWith(new FakeEngine());
  let aborted = false;
  engine.checks.push((spec: VerifySpec) =>
    new Promise<CheckResult>((resolve) => {
      spec.signal.addEventListener("abort", () => {
        aborted = true;
        resolve(failedCheck(TEST, "killed", 143));
      });
    })
  );
  const view = await manager.start(newTurn("fix", { checks: { verify: [TEST] } }));
  (await engine.turn(0)).end();
  while (engine.verified.length === 0) await new Promise((r) => setTimeout(r, 10));
  const { view: after } = await manager.cancel(view.record.id);
  assert.ok(aborted, "the check's signal was aborted");
  assert.equal(after.record.state, "cancelled");
  assert.equal(engine.turns.length, 1, "no repair round after a cancel");
});

Deno.test("a turn that passes budget_tokens is stopped at the next response", async () => {
  const { manager, engine } = managerWith(new FakeEngine());
  const view = await manager.start(newTurn("work", { checks: { budgetTokens: 1000 } }));
  const turn = await engine.turn(0);
  const response = (id: string, input: number) => ({
    id,
    reported: { inputTokens: input, outputTokens: 100, cacheReadTokens: 0, cacheCreationTokens: 0 },
    requestTokens: input,
    replyTokens: 100,
  });
  turn.sink.response!(response("1", 500));
  assert.equal(turn.stopped, false, "600 tokens are within the budget");
  turn.sink.response!(response("2", 350));
  const end = await manager.wait(view.record.id, 10);
  assert.equal(turn.stopped, true, "the turn was stopped");
  assert.equal(end.record.state, "failed");
  assert.match(
    end.record.errorText!,
    /^budget_exhausted: the job used 1050 tokens, past its budget_tokens 1000/,
  );
});

Deno.test("budget_usd stops a priced job; no repair round starts past a budget", async () => {
  const { manager, engine } = managerWith(new FakeEngine(), {
    pricing: { "qwen3:8b": { inputPerMillion: 1000, outputPerMillion: 1000 } },
  });
  engine.checks.push(failedCheck(TEST, "1 failing"));
  const view = await manager.start(
    newTurn("work", { checks: { verify: [TEST], budgetUsd: 0.5 } }),
  );
  // 600 tokens at $1000 per million: $0.60, reported only at the end of the turn.
  (await engine.turn(0)).end({
    usage: {
      inputTokens: 500,
      outputTokens: 100,
      cacheReadTokens: 0,
      cacheCreationTokens: 0,
      numTurns: 1,
      durationMs: 10,
    },
  });
  const end = await manager.wait(view.record.id, 10);
  assert.equal(engine.turns.length, 1, "no repair round");
  assert.equal(end.record.verification?.rounds.length, 1, "the check ran: it costs no tokens");
  assert.equal(end.record.state, "failed");
  assert.match(
    end.record.errorText!,
    /^budget_exhausted: the job cost \$0\.6000 .*budget_usd \$0\.5000/,
  );
});

Deno.test("a dollar budget without a price is not checked, and the job says so", async () => {
  const { manager, engine } = managerWith(new FakeEngine());
  const view = await manager.start(newTurn("work", { checks: { budgetUsd: 0.01 } }));
  assert.match(
    view.record.warnings?.[0] ?? "",
    /^budget_usd \$0\.0100 cannot be checked: the pricing setting has no price for "qwen3:8b"/,
  );
  (await engine.turn(0)).end({
    usage: {
      inputTokens: 5_000_000,
      outputTokens: 1,
      cacheReadTokens: 0,
      cacheCreationTokens: 0,
      numTurns: 1,
      durationMs: 10,
    },
  });
  const end = await manager.wait(view.record.id, 10);
  assert.equal(end.record.state, "completed");
});

Deno.test("a turn whose backend fails moves to the next fallback model and says so", async () => {
  const { manager, engine } = managerWith(new FakeEngine());
  const view = await manager.start(newTurn("work", { fallback: ["b:1b", "c:1b"] }));
  const first = await engine.turn(0);
  assert.equal(first.spec.model, "qwen3:8b");
  first.end({
    ok: false,
    errorText: "backend_unreachable: Cannot reach Ollama",
    apiErrorStatus: 503,
  });
  const second = await engine.turn(1);
  assert.equal(second.spec.model, "b:1b");
  second.end({ ok: false, errorText: "backend_refused: model b:1b does not support tools" });
  const end = await manager.wait(view.record.id, 10);
  assert.equal(engine.turns.length, 2, "a refusal is not the backend's failure: no third try");
  assert.equal(end.record.model, "b:1b");
  assert.deepEqual(end.record.fallback, ["c:1b"]);
  assert.deepEqual(end.record.fallbacks, [{
    from: "qwen3:8b",
    to: "b:1b",
    reason: "backend_unreachable: Cannot reach Ollama",
  }]);
});

Deno.test("the fallback follows the failure's kind, which the engine gives, not the error's words", async () => {
  const { manager, engine } = managerWith(new FakeEngine());
  const view = await manager.start(newTurn("work", { fallback: ["b:1b", "c:1b"] }));
  (await engine.turn(0)).end({
    ok: false,
    errorText: "context_overflow: the request needs about 9,000 tokens",
    failure: "context_overflow",
  });
  const second = await engine.turn(1);
  assert.equal(second.spec.model, "b:1b", "a context too small for the model: the next one");
  // Text that only reads like a kind (no engine said so) moves nothing.
  second.end({ ok: false, errorText: "context_overflow: written by someone else" });
  const end = await manager.wait(view.record.id, 10);
  assert.equal(engine.turns.length, 2, "no third try");
  assert.deepEqual(end.record.fallbacks?.map((f) => f.reason), [
    "context_overflow: the request needs about 9,000 tokens",
  ]);
});

/** The quality ledger's newest line. */
function lastLedgerLine(store: { stateDir: string }): Record<string, unknown> {
  const lines = readFileSync(join(store.stateDir, "ledger.jsonl"), "utf8").trim().split("\n");
  return JSON.parse(lines.at(-1)!);
}

Deno.test("a pass of a check whose test the delegate rewrote says so and earns no trust", async () => {
  const { manager, store, engine } = managerWith(new FakeEngine());
  engine.checks.push(passedCheck("node test.js"));
  const view = await manager.start(newTurn("fix add", { checks: { verify: ["node test.js"] } }));
  const cwd = view.record.cwd;
  const turn = await engine.turn(0);
  for (const file of ["add.js", "test.js"]) {
    writeFileSync(join(cwd, file), "process.exit(0)\n");
    turn.sink.fileChanged?.(join(cwd, file));
  }
  turn.end();
  const end = await manager.wait(view.record.id, 10);
  assert.equal(end.record.state, "completed");
  assert.equal(end.record.verification?.verdict, "passed", "the verdict stands");
  assert.deepEqual(end.record.verification?.changedCheck, [{ path: "test.js" }]);
  assert.equal(verifyMark(end.record), "passed a changed check");
  assert.match(
    verifyLines(end.record)[0]![1],
    /^passed \(node test\.js: exit 0, 0\.8s\); the delegate changed what the check runs: test\.js$/,
  );
  const line = lastLedgerLine(store);
  assert.equal(line.job, view.record.id);
  assert.equal(line.verified, false, "no verified pass for routing");
  assert.equal(line.checkChanged, "passed");
});

Deno.test("package.json counts by its scripts, not its dependencies; an earlier turn's changes count", async () => {
  const { manager, store, engine } = managerWith(new FakeEngine());
  const turn = newTurn("add a dependency", { checks: { verify: ["npm test"] } });
  const manifest = (over: Record<string, unknown>) =>
    JSON.stringify({ scripts: { test: "node test.js" }, dependencies: {}, ...over });
  writeFileSync(join(turn.cwd, "package.json"), manifest({}));
  const first = await manager.start(turn);
  const one = await engine.turn(0);
  writeFileSync(join(turn.cwd, "package.json"), manifest({ dependencies: { left: "1.0.0" } }));
  one.sink.sessionStarted({});
  one.sink.fileChanged?.(join(turn.cwd, "package.json"));
  one.end();
  const firstEnd = await manager.wait(first.record.id, 10);
  assert.equal(
    verifyMark(firstEnd.record),
    "verified",
    "a new dependency is no change to the check",
  );
  assert.equal(firstEnd.record.verification?.changedCheck, undefined);
  assert.equal(lastLedgerLine(store).verified, true);

  // The next turn rewrites the test script; the one after changes nothing, and its pass still
  // runs what the turn before changed.
  const second = await manager.followup(firstEnd.record, "again", {});
  const two = await engine.turn(1);
  writeFileSync(join(turn.cwd, "package.json"), manifest({ scripts: { test: "exit 0" } }));
  two.sink.fileChanged?.(join(turn.cwd, "package.json"));
  two.end();
  const secondEnd = await manager.wait(second.record.id, 10);
  assert.deepEqual(secondEnd.record.verification?.changedCheck, [
    { path: "package.json", part: "scripts" },
  ]);
  assert.match(
    verifyLines(secondEnd.record)[0]![1],
    /; the delegate changed what the check runs: package\.json "scripts"$/,
  );
  const third = await manager.followup(secondEnd.record, "once more", {});
  (await engine.turn(2)).end();
  const thirdEnd = await manager.wait(third.record.id, 10);
  assert.equal(verifyMark(thirdEnd.record), "passed a changed check");
  assert.deepEqual(thirdEnd.record.verification?.changedCheck, [
    { path: "package.json", part: "scripts", turn: 2 },
  ]);
  assert.match(verifyLines(thirdEnd.record)[0]![1], /: package\.json "scripts" \(turn 2\)$/);
  assert.equal(lastLedgerLine(store).verified, false);
});

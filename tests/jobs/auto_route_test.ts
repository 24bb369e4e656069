/** model "auto": the documented rule (Beta-UCB with a cost weight) on ledger entries. */
import assert from "node:assert/strict";
import { optimisticRate, routeByRecord } from "../../src/jobs/auto_route.ts";
import type { LedgerEntry } from "../../src/jobs/ledger/ledger.ts";

function jobs(model: string, passed: number, failed: number, cost: number | null = null) {
  const out: LedgerEntry[] = [];
  for (let i = 0; i < passed + failed; i++) {
    out.push({
      v: 1,
      at: 1000 + i,
      job: crypto.randomUUID(),
      model,
      engine: "native",
      backend: "ollama",
      agent: "tester",
      repo: "git:1",
      verified: i < passed,
      rounds: 0,
      toolCalls: 1,
      tokensIn: 100,
      tokensOut: 10,
      cost,
      wallMs: 1000,
      state: i < passed ? "completed" : "failed",
    });
  }
  return out;
}

Deno.test("auto: the model with the better verified record, and why", () => {
  const route = routeByRecord({
    candidates: ["llama3.2:3b", "qwen3-coder:30b"],
    entries: [...jobs("qwen3-coder:30b", 9, 1), ...jobs("llama3.2:3b", 2, 4)],
    agent: "tester",
  });
  assert.equal(route.model, "qwen3-coder:30b");
  assert.equal(route.reason, 'auto: 9 of 10 verified for "tester" here; llama3.2:3b 2 of 6');
});

Deno.test("auto: a model without a record is tried while the known ones are weak", () => {
  const route = routeByRecord({
    candidates: ["a:1b", "b:1b", "c:1b"],
    entries: [...jobs("a:1b", 1, 3), ...jobs("b:1b", 0, 3)],
    agent: "tester",
  });
  assert.equal(route.model, "c:1b");
  assert.equal(
    route.reason,
    'auto: exploring, no verified record for "tester" here yet; a:1b 1 of 4, b:1b 0 of 3',
  );
  // Not while a model has earned trust.
  const trusted = routeByRecord({
    candidates: ["a:1b", "c:1b"],
    entries: jobs("a:1b", 9, 1),
    agent: "tester",
  });
  assert.equal(trusted.model, "a:1b");
});

Deno.test("auto: without any verified record, the default model", () => {
  const route = routeByRecord({ candidates: ["a:1b"], entries: [], agent: "adhoc" });
  assert.equal(route.model, undefined);
  assert.match(route.reason, /no verified record for "adhoc" here yet, so the default model/);
});

Deno.test("auto: the cost weight prefers a much cheaper model with a close record", () => {
  const route = routeByRecord({
    candidates: ["dear:1b", "cheap:1b"],
    entries: [...jobs("dear:1b", 8, 2, 1), ...jobs("cheap:1b", 7, 3, 0.01)],
    agent: "tester",
  });
  assert.equal(route.model, "cheap:1b");
  assert.ok(Math.abs(optimisticRate(0, 0) - 0.7887) < 0.001);
  assert.ok(optimisticRate(9, 1) > optimisticRate(0, 0));
});

Deno.test("auto: passes of a check the delegate changed count as not passed, and lose a tie", () => {
  const cheats = jobs("cheat:8b", 0, 3).map((e) => ({ ...e, checkChanged: "passed" as const }));
  const route = routeByRecord({
    candidates: ["cheat:8b", "honest:8b"],
    entries: [...cheats, ...jobs("honest:8b", 0, 3)],
    agent: "tester",
  });
  assert.equal(route.model, "honest:8b");
  assert.equal(
    route.reason,
    'auto: 0 of 3 verified for "tester" here; cheat:8b 0 of 3 (3 passed a check it changed, ' +
      "not counted)",
  );
});

import assert from "node:assert/strict";
import {
  costOf,
  formatCost,
  jobCostText,
  priceOf,
  totalsCostText,
  usageTotals,
  utcDay,
} from "../../../src/jobs/spend/cost.ts";
import type { JobRecord } from "../../../src/jobs/record.ts";
import { renderUsage } from "../../../src/jobs/ledger/usage_report.ts";
import { jobUsageSuffix, renderList } from "../../../src/server/list.ts";

const DAY = 86_400_000;
/** 2024-03-10T12:00:00Z */
const NOON = Date.UTC(2024, 2, 10, 12);
const SID = "aaaaaaaa-0000-4000-8000-000000000001";
const jobId = (n: number) => `0000000${n % 10}-0000-4000-8000-${String(n).padStart(12, "0")}`;

function rec(n: number, over: Partial<JobRecord> = {}): JobRecord {
  return {
    format: 1,
    id: jobId(n),
    sessionId: SID,
    turn: 1,
    engine: "claude",
    model: "qwen3:8b",
    cwd: "/w",
    state: "completed",
    createdAt: NOON,
    startedAt: NOON,
    endedAt: NOON + 2500,
    promptPreview: `prompt ${n}`,
    options: { permissionMode: "auto", addDirs: [] },
    sessionCreated: true,
    toolCalls: 1,
    permissionDenials: [],
    usage: {
      inputTokens: 1_000_000,
      outputTokens: 500_000,
      cacheReadTokens: 0,
      cacheCreationTokens: 0,
      numTurns: 2,
      durationMs: 2000,
    },
    ...over,
  };
}

const PRICING = {
  "qwen3:8b": { inputPerMillion: 0.5, outputPerMillion: 2 },
  llama3: { inputPerMillion: 1, outputPerMillion: 1 },
  "free:1b": { inputPerMillion: 0, outputPerMillion: 0 },
};

Deno.test("cost: a priced model costs input and output at their prices per million", () => {
  const cost = costOf(rec(1), PRICING);
  assert.equal(cost.kind, "known");
  assert.equal(cost.kind === "known" && cost.amount, 0.5 + 1);
  assert.equal(jobCostText(rec(1), PRICING), "$1.50");
});

Deno.test("cost: cache tokens are charged at the input price", () => {
  const r = rec(1, {
    usage: {
      inputTokens: 100_000,
      outputTokens: 0,
      cacheReadTokens: 200_000,
      cacheCreationTokens: 300_000,
      numTurns: 1,
      durationMs: 1,
    },
  });
  assert.equal(jobCostText(r, PRICING), "$0.3000");
});

Deno.test("cost: a model without a price is unknown, never 0 and never Claude's figure", () => {
  const r = rec(1, { model: "glm-5:cloud" });
  assert.deepEqual(costOf(r, PRICING), { kind: "unpriced" });
  assert.equal(jobCostText(r, PRICING), "unknown");
  assert.equal(jobCostText(r, {}), "unknown");
  // A record carrying Claude Code's own cost (an unknown key to us) changes nothing.
  const withClaudeCost = { ...r, total_cost_usd: 12.5 } as JobRecord;
  assert.equal(jobCostText(withClaudeCost, PRICING), "unknown");
});

Deno.test("cost: model names match as Ollama does (llama3 = llama3:latest)", () => {
  assert.equal(priceOf("llama3:latest", PRICING), PRICING.llama3);
  assert.equal(priceOf("llama3", { "llama3:latest": PRICING.llama3 }), PRICING.llama3);
  assert.equal(priceOf("llama3:8b", PRICING), undefined);
  assert.equal(jobCostText(rec(1, { model: "llama3:latest" }), PRICING), "$1.50");
});

Deno.test("cost: an explicit zero price is a known cost of 0", () => {
  assert.equal(jobCostText(rec(1, { model: "free:1b" }), PRICING), "$0.0000");
});

Deno.test("cost: no usage yet shows '-' while live and unknown once ended", () => {
  const { usage: _, ...bare } = rec(1);
  assert.equal(jobCostText({ ...bare, state: "running" }, PRICING), "-");
  assert.equal(jobCostText({ ...bare, state: "interrupted" }, PRICING), "unknown");
});

Deno.test("formatCost: four decimals below 1, two above", () => {
  assert.equal(formatCost(0.0123456), "$0.0123");
  assert.equal(formatCost(12.345), "$12.35");
  assert.equal(formatCost(0), "$0.0000");
});

Deno.test("usageTotals: per model and per UTC day, unpriced tokens counted apart", () => {
  const records = [
    rec(1),
    rec(2, { model: "qwen3:8b", createdAt: NOON - DAY }),
    rec(3, { model: "glm-5:cloud" }),
    rec(4, { model: "llama3" }),
    rec(5, { model: "llama3:latest", createdAt: Date.UTC(2024, 2, 9, 23, 59) }),
    rec(6, { state: "running", usage: undefined }),
  ];
  const report = usageTotals(records, PRICING);
  const byModel = Object.fromEntries(report.byModel.map((t) => [t.key, t]));
  assert.deepEqual(Object.keys(byModel).sort(), ["glm-5:cloud", "llama3:latest", "qwen3:8b"]);
  assert.equal(byModel["qwen3:8b"]!.jobs, 3);
  assert.equal(byModel["qwen3:8b"]!.cost, 3);
  assert.equal(byModel["qwen3:8b"]!.noUsageJobs, 1);
  assert.equal(byModel["llama3:latest"]!.jobs, 2);
  assert.equal(byModel["llama3:latest"]!.cost, 3);
  assert.equal(byModel["glm-5:cloud"]!.unpricedJobs, 1);
  assert.equal(byModel["glm-5:cloud"]!.unpricedTokens, 1_500_000);
  assert.equal(totalsCostText(byModel["glm-5:cloud"]!), "unknown (1500000 tokens unpriced)");
  assert.equal(report.byDay.map((t) => t.key).join(","), "2024-03-10,2024-03-09");
  const [today, yesterday] = report.byDay;
  assert.equal(today!.jobs, 4);
  assert.equal(today!.cost, 1.5 + 1.5);
  assert.equal(totalsCostText(today!), "$3.00 + unknown (1500000 tokens unpriced)");
  assert.equal(yesterday!.jobs, 2);
  assert.equal(totalsCostText(yesterday!), "$3.00");
  assert.equal(report.total.jobs, 6);
  assert.equal(report.total.cost, 6);
  assert.equal(report.total.unpricedTokens, 1_500_000);
  assert.equal(utcDay(Date.UTC(2024, 2, 9, 23, 59, 59)), "2024-03-09");
});

Deno.test("renderUsage: unknown is shown as unknown, the window counts UTC days", () => {
  const records = [
    rec(1, { model: "glm-5:cloud" }),
    rec(2, { createdAt: NOON - 2 * DAY }),
    rec(3, { createdAt: NOON - 9 * DAY }),
  ];
  const text = renderUsage(records, PRICING, { days: 3, now: NOON });
  assert.match(text, /^Usage over the last 3 days \(UTC, today included\): 2 jobs$/m);
  assert.match(text, /glm-5:cloud .* cost unknown \(1500000 tokens unpriced\)$/m);
  assert.match(text, /qwen3:8b .* cost \$1\.50$/m);
  assert.match(text, /^ {2}2024-03-10 .* cost unknown/m);
  assert.match(text, /^ {2}2024-03-08 .* cost \$1\.50$/m);
  assert.doesNotMatch(text, /2024-03-01/);
  assert.match(text, /^No price for: glm-5:cloud\./m);
  assert.doesNotMatch(text, /glm-5:cloud.*\$0\.0000/);
  const all = renderUsage(records, PRICING, { days: 0, now: NOON });
  assert.match(all, /^Usage over all recorded jobs: 3 jobs$/m);
  assert.equal(
    renderUsage([], PRICING, { days: 7 }),
    "Usage over the last 7 days (UTC, today included): 0 jobs",
  );
});

Deno.test("renderList: jobs with usage get tokens and cost appended to their line", () => {
  const records = [rec(2, { model: "glm-5:cloud" }), rec(1, { createdAt: NOON - 1000 })];
  const text = renderList(
    "/state",
    { records, total: records.length, corrupt: [] },
    undefined,
    PRICING,
  );
  const lines = text.split("\n");
  assert.ok(
    lines.includes(
      `  completed   turn 1       2.5s  job ${jobId(1)}  "prompt 1"` +
        "  tokens in 1000000 / out 500000  cost $1.50",
    ),
    text,
  );
  assert.ok(
    lines.some((l) => l.endsWith(`"prompt 2"  tokens in 1000000 / out 500000  cost unknown`)),
  );
  assert.equal(jobUsageSuffix(rec(3, { usage: undefined }), PRICING), "");
});

/**
 * One turn per session at a time: follow-ups sent at once, through one server or two
 * sharing a state dir, get distinct turn numbers and run one after another, each continuing
 * the conversation of the turn before it. Real server, real Claude Code CLI, the emulator.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { contentText } from "../support/emulator/chat_script.ts";
import type { OllamaEmulator } from "../support/emulator/emulator.ts";
import { field, tempDir, type TestServer } from "../support/harness.ts";
import { startScene } from "../support/scene.ts";

/** Long enough that turns running at once would overlap, short enough for a loaded machine. */
const ANSWER_DELAY_MS = 1500;
const LONG = { timeoutMs: 600_000 };

interface JobRecord {
  id: string;
  turn: number;
  state: string;
  startedAt: number;
  endedAt: number;
  promptPreview: string;
  parentJobId?: string;
}

function readRecord(stateDir: string, id: string): JobRecord {
  return JSON.parse(readFileSync(join(stateDir, id, "job.json"), "utf8"));
}

function turnOf(text: string): number {
  const match = /\(turn (\d+)\)$/.exec(field(text, "session_id") ?? "");
  assert.ok(match, `no turn in: ${text}`);
  return Number(match[1]);
}

/** The last user text of a chat request (the native engine's requests). */
function lastChatUser(messages: unknown[]): string {
  const users = (messages as Array<{ role?: string; content?: unknown }>)
    .filter((m) => m?.role === "user");
  return contentText(users.at(-1)?.content);
}

/** Answers every prompt with a slow `answer to <prompt>`, on both emulated APIs. */
function scriptAnswers(emu: OllamaEmulator): void {
  emu.setScript((req) =>
    req.tools.length > 0
      ? { kind: "text", text: `answer to ${req.lastUserText.trim()}`, delayMs: ANSWER_DELAY_MS }
      : undefined
  );
  emu.setChatScript((view) => ({
    kind: "delay",
    ms: ANSWER_DELAY_MS,
    then: {
      kind: "text",
      text: `answer to ${lastChatUser(view.messages).trim()}`,
    },
  }));
}

/**
 * The request body that started each turn: the first request (with tools) whose newest user
 * text is that turn's prompt.
 */
function firstBodyOf(emu: OllamaEmulator, engine: string, prompt: string): string {
  const requests = engine === "native" ? emu.nativeChatRequests() : emu.messageRequests();
  for (const r of requests) {
    const body = r.json as {
      tools?: unknown[];
      messages?: Array<{ role: string; content: unknown }>;
    };
    if (!body?.tools || body.tools.length === 0) continue;
    const users = (body.messages ?? []).filter((m) => m.role === "user");
    if (contentText(users.at(-1)?.content).includes(prompt)) return r.bodyText;
    // Claude Code sends the prompt as content blocks with reminders around it.
    if (JSON.stringify(users.at(-1)?.content ?? "").includes(prompt)) return r.bodyText;
  }
  throw new Error(`no request carried "${prompt}"`);
}

async function threeAtOnce(
  engine: "native" | "claude",
  servers: TestServer[],
  work: string,
  emu: OllamaEmulator,
) {
  const [a] = servers;
  const tag = crypto.randomUUID().slice(0, 8);
  const opening = `opening question ${tag}`;
  const first = await a!.call("delegate_start", {
    prompt: opening,
    engine,
    model: "qwen3:8b",
    cwd: work,
    wait_seconds: 300,
  }, LONG);
  assert.equal(field(first.text, "state"), "completed", first.text);
  const id = field(first.text, "job_id")!;

  const prompts = ["alpha", "beta", "gamma"].map((p) => `follow-up ${p} ${tag}`);
  const replies = await Promise.all(
    prompts.map((prompt, i) =>
      servers[i % servers.length]!.call("delegate_followup", { job_id: id, prompt })
    ),
  );
  for (const r of replies) assert.equal(r.isError, false, r.text);
  const turns = replies.map((r) => turnOf(r.text));
  assert.deepEqual([...turns].sort(), [2, 3, 4], `turns ${turns}`);
  // The ones behind say what they wait for.
  const waiting = replies.filter((r) => /Waiting for turn \d of this session/.test(r.text));
  assert.ok(waiting.length >= 1, replies.map((r) => r.text).join("\n---\n"));

  const ids = replies.map((r) => field(r.text, "job_id")!);
  const results = await Promise.all(
    ids.map((jobId, i) =>
      servers[i % servers.length]!.call(
        "delegate_result",
        { job_id: jobId, wait_seconds: 500 },
        LONG,
      )
    ),
  );
  for (const [i, r] of results.entries()) {
    assert.equal(field(r.text, "state"), "completed", r.text);
    assert.match(r.text, new RegExp(`answer to ${prompts[i]}`));
  }

  const records = [id, ...ids].map((jobId) => readRecord(a!.stateDir, jobId))
    .sort((x, y) => x.turn - y.turn);
  assert.deepEqual(records.map((r) => r.turn), [1, 2, 3, 4]);
  for (let k = 1; k < records.length; k++) {
    const before = records[k - 1]!;
    const after = records[k]!;
    assert.ok(
      after.startedAt >= before.endedAt,
      `turn ${after.turn} started ${before.endedAt - after.startedAt} ms before turn ` +
        `${before.turn} ended`,
    );
    // Each turn continues the one before it, which ended before it started.
    assert.equal(after.parentJobId, before.id, `turn ${after.turn} continues turn ${before.turn}`);
  }

  // The model saw each conversation whole: every earlier turn's prompt and answer, in order,
  // and none of the later ones.
  const byTurn = records.map((r) => r.promptPreview);
  assert.equal(byTurn[0], opening);
  for (let k = 1; k < byTurn.length; k++) {
    const body = firstBodyOf(emu, engine, byTurn[k]!);
    let at = -1;
    for (const earlier of byTurn.slice(0, k)) {
      const i = body.indexOf(earlier);
      assert.ok(i > at, `turn ${k + 1} lacks "${earlier}" in order`);
      assert.ok(
        body.includes(`answer to ${earlier}`),
        `turn ${k + 1} lacks the answer to "${earlier}"`,
      );
      at = i;
    }
    for (const later of byTurn.slice(k + 1)) {
      assert.ok(!body.includes(later), `turn ${k + 1} already has "${later}"`);
    }
  }
}

async function withServers(
  count: number,
  engineEnv: Record<string, string>,
  body: (servers: TestServer[], work: string, emu: OllamaEmulator) => Promise<void>,
): Promise<void> {
  const work = tempDir("od-work-");
  await using scene = await startScene({ cwd: work, env: engineEnv, server: false });
  scriptAnswers(scene.emulator);
  const servers: TestServer[] = [];
  try {
    for (let i = 0; i < count; i++) servers.push(await scene.startServer());
    await body(servers, work, scene.emulator);
  } catch (e) {
    for (const s of servers) console.error(`server ${s.pid} stderr:\n${s.stderr()}`);
    throw e;
  }
}

Deno.test("native: three follow-ups at once run as turns 2, 3, 4, one after another", async () => {
  await withServers(1, {}, (servers, work, emu) => threeAtOnce("native", servers, work, emu));
});

Deno.test("native: follow-ups through two servers sharing a state dir run in turn", async () => {
  await withServers(2, {}, (servers, work, emu) => threeAtOnce("native", servers, work, emu));
});

Deno.test("claude: three follow-ups at once, through two servers, resume one session in turn", async () => {
  await withServers(
    2,
    { IS_SANDBOX: "1" },
    (servers, work, emu) => threeAtOnce("claude", servers, work, emu),
  );
});

Deno.test("a queued follow-up that is cancelled is skipped: the next continues the turn before", async () => {
  await withServers(1, {}, async ([server], work, emu) => {
    const tag = crypto.randomUUID().slice(0, 8);
    const first = await server!.call("delegate_start", {
      prompt: `opening ${tag}`,
      engine: "native",
      model: "qwen3:8b",
      cwd: work,
      wait_seconds: 120,
    });
    const id = field(first.text, "job_id")!;
    const second = await server!.call("delegate_followup", { job_id: id, prompt: `second ${tag}` });
    const third = await server!.call("delegate_followup", { job_id: id, prompt: `third ${tag}` });
    const fourth = await server!.call("delegate_followup", { job_id: id, prompt: `fourth ${tag}` });
    assert.deepEqual([second, third, fourth].map((r) => turnOf(r.text)), [2, 3, 4]);
    assert.equal(field(third.text, "state"), "queued", third.text);
    const thirdId = field(third.text, "job_id")!;
    const cancelled = await server!.call("delegate_cancel", { job_id: thirdId });
    assert.equal(cancelled.isError, false, cancelled.text);
    assert.equal(field(cancelled.text, "state"), "cancelled");
    const last = await server!.call("delegate_result", {
      job_id: field(fourth.text, "job_id")!,
      wait_seconds: 120,
    });
    assert.equal(field(last.text, "state"), "completed", last.text);
    const body = firstBodyOf(emu, "native", `fourth ${tag}`);
    assert.ok(body.includes(`answer to second ${tag}`), "turn 2 is in turn 4's history");
    assert.ok(!body.includes(`third ${tag}`), "the cancelled turn 3 never ran");
    const records = [second, third, fourth].map((r) =>
      readRecord(server!.stateDir, field(r.text, "job_id")!)
    );
    assert.equal(records[1]!.state, "cancelled");
    assert.equal(records[2]!.parentJobId, records[0]!.id);
    assert.ok(records[2]!.startedAt >= records[0]!.endedAt);
  });
});

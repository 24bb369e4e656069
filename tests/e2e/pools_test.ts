/**
 * A backend that is a pool of endpoints, with several emulators on loopback ports as the
 * endpoints (one Ollama per GPU): a session keeps to its endpoint across turns, a new session
 * goes to the idle one, an endpoint that dies or fails mid-turn moves the session elsewhere
 * and the reply says so, a 429 on one endpoint slows no other, a pool with every endpoint down
 * fails the job with one message listing them, and two servers on one state dir share each
 * endpoint's limit.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { field, tempDir, until } from "../support/harness.ts";
import type { OllamaEmulator } from "../support/emulator/emulator.ts";
import { startScene } from "../support/scene.ts";

const native = { engine: "native", model: "qwen3:8b" };
const tag = () => crypto.randomUUID();

/** A scene whose default Ollama is a pool of `n` emulators, and its server. */
async function poolScene(n: number, env: Record<string, string> = {}) {
  const scene = await startScene({ server: false });
  const endpoints = [scene.emulator];
  while (endpoints.length < n) endpoints.push(await scene.startEmulator());
  await scene.startServer({
    env: { OLLAMA_MCP_BASE_URLS: endpoints.map((e) => e.url).join(","), ...env },
  });
  const byUrl = (url: string | undefined): OllamaEmulator => {
    const found = endpoints.find((e) => e.url === url);
    assert.ok(found, `no endpoint ${url} in ${endpoints.map((e) => e.url)}`);
    return found;
  };
  return { scene, endpoints, byUrl };
}

/** The URL an `endpoint:` line names, without its note. */
const endpointOf = (text: string) => field(text, "endpoint")?.split("  ")[0];

Deno.test("pool: a session keeps its endpoint across turns; a new session goes to the idle one", async () => {
  const { scene, endpoints, byUrl } = await poolScene(2);
  await using _ = scene;
  const work = tempDir("od-pool-");
  const first = await scene.call("delegate_start", {
    ...native,
    prompt: `@reply turn done\nsession one ${tag()}`,
    cwd: work,
    wait_seconds: 60,
  });
  assert.equal(field(first.text, "state"), "completed", first.text);
  const home = byUrl(endpointOf(first.text));
  const other = endpoints.find((e) => e !== home)!;
  let last = first;
  for (let turn = 2; turn <= 4; turn++) {
    last = await scene.call("delegate_followup", {
      job_id: field(last.text, "job_id"),
      prompt: `turn ${turn}`,
      wait_seconds: 60,
    });
    assert.equal(field(last.text, "state"), "completed", last.text);
    assert.equal(field(last.text, "endpoint"), home.url, "no move, so no note");
  }
  assert.equal(home.nativeChatRequests().length, 4, "every turn on the session's endpoint");
  assert.equal(other.nativeChatRequests().length, 0);
  // The session's endpoint is busy with a long turn: a new session goes to the idle one.
  // (Directives are read from a conversation's first message; this turn's is its last.)
  for (const e of endpoints) {
    e.setChatScript((view) => {
      const lastMessage = JSON.stringify(view.messages.at(-1) ?? "");
      return lastMessage.includes("keep the GPU busy") ? { kind: "hang" } : undefined;
    });
  }
  const busy = await scene.call("delegate_followup", {
    job_id: field(last.text, "job_id"),
    prompt: "keep the GPU busy",
    wait_seconds: 0,
  });
  await until(() => home.nativeChatRequests().length === 5, 30_000, "the busy turn's request");
  const fresh = await scene.call("delegate_start", {
    ...native,
    prompt: `@reply elsewhere\nsession two ${tag()}`,
    cwd: work,
    wait_seconds: 60,
  });
  assert.equal(field(fresh.text, "state"), "completed", fresh.text);
  assert.equal(field(fresh.text, "endpoint"), other.url);
  assert.equal(other.nativeChatRequests().length, 1);
  await scene.call("delegate_cancel", { job_id: field(busy.text, "job_id") });
});

Deno.test("pool: an endpoint killed between turns: the next turn runs on another, and says it moved", async () => {
  const { scene, endpoints, byUrl } = await poolScene(2);
  await using _ = scene;
  const work = tempDir("od-pool-");
  const first = await scene.call("delegate_start", {
    ...native,
    prompt: `@reply still here\nsession ${tag()}`,
    cwd: work,
    wait_seconds: 60,
  });
  assert.equal(field(first.text, "state"), "completed", first.text);
  const dead = byUrl(endpointOf(first.text));
  const alive = endpoints.find((e) => e !== dead)!;
  await dead.close();
  const second = await scene.call("delegate_followup", {
    job_id: field(first.text, "job_id"),
    prompt: "go on",
    wait_seconds: 60,
  });
  assert.equal(field(second.text, "state"), "completed", second.text);
  assert.match(
    field(second.text, "endpoint") ?? "",
    new RegExp(`^${alive.url}  \\(moved from ${dead.url}: .*connection failed \\(ECONNREFUSED\\)`),
  );
  assert.match(second.text, /--- output ---\nstill here/);
  // The session's affinity moved with it: the next turn stays where it now is, without a note.
  const third = await scene.call("delegate_followup", {
    job_id: field(second.text, "job_id"),
    prompt: "and on",
    wait_seconds: 60,
  });
  assert.equal(field(third.text, "endpoint"), alive.url, third.text);
  assert.equal(alive.nativeChatRequests().length, 2);
  // The server's report shows the dead endpoint down.
  const models = await scene.call("ollama_models");
  assert.match(models.text, /Ollama pool: {6}2 endpoints, for both engines/);
  assert.match(
    models.text,
    new RegExp(`  ${dead.url}  DOWN: connection failed \\(ECONNREFUSED\\)`),
  );
  // The limit each endpoint of the default pool holds to (maxConcurrent), from the same table
  // of backends that places the turns.
  assert.match(models.text, new RegExp(`  ${alive.url} +up, max \\d+ at once`));
});

Deno.test("pool: an endpoint that fails mid-turn (HTTP 500): the turn goes on at another with the whole conversation", async () => {
  const { scene, endpoints, byUrl } = await poolScene(2);
  await using _ = scene;
  // Each endpoint serves a conversation's first request, then fails: a model runner that
  // crashed after the first reply.
  for (const e of endpoints) {
    e.setChatScript((view) =>
      view.conversationRequestNumber >= 2
        ? { kind: "error", status: 500, message: "llama runner process has terminated" }
        : undefined
    );
  }
  const work = tempDir("od-pool-");
  const reply = await scene.call("delegate_start", {
    ...native,
    prompt: `@bash echo moved > moved.txt\nwrite the file ${tag()}`,
    cwd: work,
    wait_seconds: 60,
  });
  assert.equal(field(reply.text, "state"), "completed", reply.text);
  assert.ok(existsSync(join(work, "moved.txt")), "the tool call of the first endpoint ran");
  const at = endpointOf(reply.text)!;
  const first = endpoints.find((e) => e.url !== at)!;
  assert.match(
    field(reply.text, "endpoint") ?? "",
    new RegExp(
      `^${at}  \\(moved from ${first.url}: HTTP 500: llama runner process has terminated\\)$`,
    ),
  );
  // The second endpoint got the conversation with the tool's result, and finished it.
  const second = byUrl(at).nativeChatRequests();
  assert.equal(second.length, 1);
  assert.match(second[0]!.bodyText, /"role":"tool"/);
  assert.match(reply.text, /--- output ---\ndone: /);
  assert.equal(first.nativeChatRequests().length, 2);
  const status = await scene.call("delegate_status", { job_id: field(reply.text, "job_id") });
  assert.match(
    status.text,
    new RegExp(`\\[error\\] endpoint ${first.url} failed .*moved to ${at}`),
  );
});

Deno.test("pool: a 429 on one endpoint does not slow a session on another", async () => {
  const { scene, endpoints, byUrl } = await poolScene(2);
  await using _ = scene;
  const work = tempDir("od-pool-");
  const slow = await scene.call("delegate_start", {
    ...native,
    prompt: `@fail 429 2\n@retry-after 3\n@reply waited\nrate limited ${tag()}`,
    cwd: work,
    wait_seconds: 0,
  });
  const slowId = field(slow.text, "job_id")!;
  await until(
    () => endpoints.some((e) => e.nativeChatRequests().length >= 1),
    30_000,
    "the first job's request",
  );
  const throttled = endpoints.find((e) => e.nativeChatRequests().length >= 1)!;
  const quick = await scene.call("delegate_start", {
    ...native,
    prompt: `@reply quick\nnot rate limited ${tag()}`,
    cwd: work,
    wait_seconds: 60,
  });
  assert.equal(field(quick.text, "state"), "completed", quick.text);
  const quickAt = byUrl(endpointOf(quick.text));
  assert.notEqual(quickAt, throttled, "the new session went to the other endpoint");
  const quickSeconds = Number(field(quick.text, "elapsed")!.replace("s", ""));
  assert.ok(quickSeconds < 3, `the other session took ${quickSeconds} s`);
  const waited = await scene.call("delegate_result", { job_id: slowId, wait_seconds: 60 });
  assert.equal(field(waited.text, "state"), "completed", waited.text);
  // The 429s were waited out where they came from: no move.
  assert.equal(field(waited.text, "endpoint"), throttled.url);
  assert.ok(Number(field(waited.text, "elapsed")!.replace("s", "")) >= 6, waited.text);
  assert.equal(throttled.nativeChatRequests().length, 3);
  assert.equal(quickAt.nativeChatRequests().length, 1);
});

Deno.test("pool: a job whose every endpoint is down fails with one message that lists them", async () => {
  await using scene = await startScene({ server: false });
  const a = await scene.startEmulator();
  const b = await scene.startEmulator();
  await scene.startServer({
    userConfig: { backends: { gpus: { urls: [a.url, b.url], kind: "ollama", maxConcurrent: 1 } } },
  });
  await a.close();
  await b.close();
  const reply = await scene.call("delegate_start", {
    ...native,
    backend: "gpus",
    prompt: `@reply never\nnobody home ${tag()}`,
    cwd: tempDir("od-pool-"),
    wait_seconds: 30,
  });
  assert.equal(reply.isError, true);
  assert.equal(field(reply.text, "state"), "failed", reply.text);
  assert.equal(
    field(reply.text, "error"),
    `backend_unreachable: Cannot run job: every endpoint of backend "gpus" is down: ` +
      `${a.url} (connection failed (ECONNREFUSED)), ${b.url} (connection failed ` +
      `(ECONNREFUSED)). Start them, or fix the URLs (ollama-delegate doctor checks each one)`,
  );
});

Deno.test("pool: two servers on one state dir never put more on an endpoint than its limit while another has room", async () => {
  await using scene = await startScene({ server: false });
  const [x, y] = [scene.emulator, await scene.startEmulator()];
  const pool = JSON.stringify([{ url: x.url, maxConcurrent: 1 }, { url: y.url, maxConcurrent: 1 }]);
  const env = { OLLAMA_MCP_BASE_URLS: pool, OLLAMA_MCP_MAX_CONCURRENT: "4" };
  const one = await scene.startServer({ env });
  const two = await scene.startServer({ env });
  const work = tempDir("od-pool-");
  const hang = (server: typeof one, name: string) =>
    server.call("delegate_start", {
      ...native,
      prompt: `@hang\n${name} ${tag()}`,
      cwd: work,
      wait_seconds: 0,
    });
  const inFlight = () => [x.nativeChatRequests().length, y.nativeChatRequests().length];
  /** Where a job of `server` was placed, once its status names the endpoint. */
  const placedAt = (server: typeof one, reply: { text: string }) =>
    until(
      async () => {
        const s = await server.call("delegate_status", { job_id: field(reply.text, "job_id") });
        return endpointOf(s.text);
      },
      30_000,
      "the job's endpoint",
    );
  const a = await hang(one, "a");
  await until(() => inFlight().reduce((s, n) => s + n, 0) === 1, 30_000, "a's request");
  // The other server counts a's slot, and sends b to the endpoint that has room.
  const b = await hang(two, "b");
  await until(() => inFlight().join() === "1,1", 30_000, "b on the other endpoint");
  const [aAt, bAt] = [await placedAt(one, a), await placedAt(two, b)];
  assert.notEqual(aAt, bAt);
  // Both endpoints full: c waits in one endpoint's line, and nothing more reaches either.
  const c = await hang(one, "c");
  const cId = field(c.text, "job_id")!;
  const queued = await until(
    async () => {
      const s = await one.call("delegate_status", { job_id: cId });
      return field(s.text, "queue") ? s.text : undefined;
    },
    30_000,
    "c's place in line",
  );
  const line = field(queued, "queue")!;
  assert.match(
    line,
    /^1st in line for backend "ollama" at http:\/\/127\.0\.0\.1:\d+ \(1 of 1 slot held: 1 (here|by another session)\)$/,
  );
  const waitsAt = /at (http:\/\/\S+)/.exec(line)![1]!;
  assert.equal(endpointOf(queued), waitsAt);
  await new Promise((r) => setTimeout(r, 1500));
  assert.deepEqual(inFlight(), [1, 1], "no endpoint got a second request");
  // The holder of that endpoint ends: c runs there, on the slot it waited for.
  const [holder, holderServer] = aAt === waitsAt ? [a, one] : [b, two];
  await holderServer.call("delegate_cancel", { job_id: field(holder.text, "job_id") });
  const target = waitsAt === x.url ? x : y;
  await until(() => target.nativeChatRequests().length === 2, 30_000, "c's request");
  const running = await one.call("delegate_status", { job_id: cId });
  assert.equal(field(running.text, "state"), "running", running.text);
  assert.equal(endpointOf(running.text), waitsAt);
  assert.deepEqual(inFlight().sort(), [1, 2], "never two at once on one endpoint");
  for (const [server, r] of [[one, a], [two, b], [one, c]] as const) {
    await server.call("delegate_cancel", { job_id: field(r.text, "job_id") });
  }
});

Deno.test("pool: a claude-engine turn is pinned to one endpoint; the session's next turn stays there", async () => {
  const { scene, endpoints, byUrl } = await poolScene(2);
  await using _ = scene;
  const work = tempDir("od-pool-");
  const first = await scene.call("delegate_start", {
    prompt: `@reply pinned\nclaude session ${tag()}`,
    model: "qwen3:8b",
    cwd: work,
    wait_seconds: 120,
  });
  assert.equal(field(first.text, "state"), "completed", first.text);
  const home = byUrl(endpointOf(first.text));
  const other = endpoints.find((e) => e !== home)!;
  const sent = home.messageRequests().length;
  assert.ok(sent >= 1, "Claude Code sent its requests to the endpoint the turn was placed on");
  const second = await scene.call("delegate_followup", {
    job_id: field(first.text, "job_id"),
    prompt: "once more",
    wait_seconds: 120,
  });
  assert.equal(field(second.text, "state"), "completed", second.text);
  assert.equal(field(second.text, "endpoint"), home.url);
  assert.ok(home.messageRequests().length > sent);
  assert.equal(other.messageRequests().length, 0, "nothing of the session reached the other");
});

Deno.test("pool: a claude turn's endpoint dies mid-turn: the turn fails soon, the next turn runs on another", async () => {
  const { scene, endpoints, byUrl } = await poolScene(2);
  await using _ = scene;
  const work = tempDir("od-pool-");
  const started = await scene.call("delegate_start", {
    prompt: `@hang\nclaude session ${tag()}`,
    model: "qwen3:8b",
    cwd: work,
    wait_seconds: 0,
  });
  const id = field(started.text, "job_id")!;
  const dead = await until(
    () => endpoints.find((e) => e.messageRequests().length > 0),
    90_000,
    "the request that hangs",
  );
  const alive = endpoints.find((e) => e !== dead)!;
  alive.setScript(() => ({ kind: "text", text: "resumed elsewhere" }));
  const t0 = performance.now();
  await dead.close();
  const failed = await scene.call("delegate_status", { job_id: id, wait_seconds: 60 });
  assert.equal(field(failed.text, "state"), "failed", failed.text);
  assert.match(field(failed.text, "error") ?? "", /^backend_unreachable: Cannot reach Ollama at /);
  assert.ok(performance.now() - t0 < 15_000);
  const next = await scene.call("delegate_followup", {
    job_id: id,
    prompt: "carry on",
    wait_seconds: 120,
  });
  assert.equal(field(next.text, "state"), "completed", next.text);
  assert.match(next.text, /resumed elsewhere/);
  assert.match(
    field(next.text, "endpoint") ?? "",
    new RegExp(`^${alive.url}  \\(moved from ${dead.url}: it is down: connection failed`),
  );
  assert.equal(byUrl(alive.url).messageRequests().length > 0, true);
});

Deno.test("pool: a gateway pool (kind openai) moves on like the others, its key sent to its own endpoints only", async () => {
  await using scene = await startScene({ server: false });
  const [x, y] = [await scene.startEmulator(), await scene.startEmulator()];
  await scene.startServer({
    env: { POOL_KEY: "sk-pool-secret" },
    userConfig: {
      backends: { gateways: { urls: [x.url, y.url], kind: "openai", apiKeyEnv: "POOL_KEY" } },
    },
  });
  const work = tempDir("od-pool-");
  const first = await scene.call("delegate_start", {
    ...native,
    backend: "gateways",
    prompt: `@reply through the gateway\nsession ${tag()}`,
    cwd: work,
    wait_seconds: 60,
  });
  assert.equal(field(first.text, "state"), "completed", first.text);
  const [dead, alive] = endpointOf(first.text) === x.url ? [x, y] : [y, x];
  assert.equal(dead.chatRequests().length, 1);
  await dead.close();
  const second = await scene.call("delegate_followup", {
    job_id: field(first.text, "job_id"),
    prompt: "go on",
    wait_seconds: 60,
  });
  assert.equal(field(second.text, "state"), "completed", second.text);
  assert.match(
    field(second.text, "endpoint") ?? "",
    new RegExp(`^${alive.url}  \\(moved from ${dead.url}: `),
  );
  assert.equal(alive.chatRequests().length, 1);
  for (const r of [...dead.requests, ...alive.requests]) {
    if (r.path === "/v1/chat/completions" || r.path === "/v1/models") {
      assert.equal(r.headers.authorization, "Bearer sk-pool-secret", r.path);
    }
  }
  assert.ok(!scene.emulator.requests.some((r) => r.headers.authorization), "no key elsewhere");
});

Deno.test("pool: a new session waiting for a busy endpoint takes one that became idle", async () => {
  await using scene = await startScene({ server: false });
  const [x, y] = [scene.emulator, await scene.startEmulator()];
  const pool = JSON.stringify([{ url: x.url, maxConcurrent: 1 }, { url: y.url, maxConcurrent: 1 }]);
  const server = await scene.startServer({ env: { OLLAMA_MCP_BASE_URLS: pool } });
  const work = tempDir("od-pool-");
  const hang = (name: string) =>
    server.call("delegate_start", {
      ...native,
      prompt: `@hang\n${name} ${tag()}`,
      cwd: work,
      wait_seconds: 0,
    });
  const a = await hang("a");
  const b = await hang("b");
  await until(
    () => x.nativeChatRequests().length + y.nativeChatRequests().length === 2,
    30_000,
    "a and b running",
  );
  const c = await hang("c");
  const cId = field(c.text, "job_id")!;
  const queued = await until(
    async () => {
      const s = await server.call("delegate_status", { job_id: cId });
      return field(s.text, "queue") ? s.text : undefined;
    },
    30_000,
    "c waiting",
  );
  const waitsAt = endpointOf(queued)!;
  // The job on the other endpoint ends: c goes there, without waiting for its own.
  const other = waitsAt === x.url ? y : x;
  const [otherJob] = await Promise.all(
    [a, b].map(async (r) => {
      const s = await server.call("delegate_status", { job_id: field(r.text, "job_id") });
      return endpointOf(s.text) === other.url ? r : undefined;
    }),
  ).then((found) => found.filter((r) => r !== undefined));
  assert.ok(otherJob, "a job ran on the other endpoint");
  await server.call("delegate_cancel", { job_id: field(otherJob.text, "job_id") });
  await until(() => other.nativeChatRequests().length === 2, 30_000, "c on the idle endpoint");
  const running = await server.call("delegate_status", { job_id: cId });
  assert.equal(field(running.text, "state"), "running", running.text);
  assert.equal(
    field(running.text, "endpoint"),
    other.url,
    "a new session's first place is no move",
  );
  for (const r of [a, b, c]) {
    await server.call("delegate_cancel", { job_id: field(r.text, "job_id") });
  }
});

Deno.test("pool: a background probe that finds a native turn's endpoint down moves its next request", async () => {
  const { scene, endpoints, byUrl } = await poolScene(2);
  await using _ = scene;
  const work = tempDir("od-pool-");
  const started = await scene.call("delegate_start", {
    ...native,
    prompt: `@bash sleep 8; echo slept\nwait a while ${tag()}`,
    cwd: work,
    wait_seconds: 0,
  });
  const id = field(started.text, "job_id")!;
  const first = await until(
    () => endpoints.find((e) => e.nativeChatRequests().length > 0),
    30_000,
    "the first request",
  );
  // The command runs: nothing is asked of the endpoint until it ends, but the server's probes
  // (every 5 s while the job runs) find it gone.
  await first.close();
  const done = await scene.call("delegate_result", { job_id: id, wait_seconds: 60 });
  assert.equal(field(done.text, "state"), "completed", done.text);
  const second = endpoints.find((e) => e !== first)!;
  assert.equal(
    field(done.text, "endpoint"),
    `${second.url}  (moved from ${first.url}: the server's health check of it failed)`,
  );
  assert.equal(byUrl(second.url).nativeChatRequests().length, 1);
  assert.match(done.text, /--- output ---\ndone: .*slept/s);
});

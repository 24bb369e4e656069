/**
 * Claude Code's discover probe is answered while the server still loads (early_discover.ts),
 * and nothing read before the transport existed is lost or reordered.
 */
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { EarlyDiscover } from "../../../src/server/transport/early_discover.ts";
import { CappedStdioTransport } from "../../../src/server/transport/stdio.ts";
import { serverCommand, tempDir } from "../../support/harness.ts";

const tick = () => new Promise((r) => setTimeout(r, 10));
const line = (m: unknown) => JSON.stringify(m) + "\n";
const discover = (id: string | number) => ({ jsonrpc: "2.0", id, method: "server/discover" });
const call = (id: number) => ({ jsonrpc: "2.0", id, method: "tools/list", params: {} });

function streams() {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const written: Array<Record<string, unknown>> = [];
  let rest = "";
  stdout.on("data", (chunk: Uint8Array) => {
    rest += new TextDecoder().decode(chunk);
    let nl;
    while ((nl = rest.indexOf("\n")) >= 0) {
      written.push(JSON.parse(rest.slice(0, nl)));
      rest = rest.slice(nl + 1);
    }
  });
  return { stdin, stdout, written };
}

/** Hands over to a transport and collects what it reads. */
async function transportAfter(early: EarlyDiscover, s: ReturnType<typeof streams>) {
  const input = early.handOver();
  const transport = new CappedStdioTransport(s.stdin, s.stdout, { pending: input.pending });
  const received: JSONRPCMessage[] = [];
  transport.onmessage = (m) => received.push(m);
  await transport.start();
  return { input, received };
}

Deno.test("early discover: a first-line server/discover is answered before the transport exists; the rest follows in order", async () => {
  const s = streams();
  const early = new EarlyDiscover(s.stdin, s.stdout);
  // One write: discover, a whole request and half of the next.
  const third = line(call(3));
  s.stdin.write(line(discover("probe-1")) + line(call(2)) + third.slice(0, 10));
  await tick();
  assert.equal(s.written.length, 1, "answered while the server loads");
  const answer = s.written[0]!;
  assert.equal(answer.id, "probe-1");
  const result = answer.result as Record<string, unknown>;
  assert.deepEqual(result.supportedVersions, ["2026-07-28"]);
  assert.equal(result.resultType, "complete");
  assert.deepEqual(result.capabilities, {
    tools: { listChanged: true },
    extensions: { "io.modelcontextprotocol/tasks": {} },
  });
  s.stdin.write(third.slice(10));
  const { input, received } = await transportAfter(early, s);
  assert.equal(input.answered, true);
  await tick();
  assert.deepEqual(received.map((m) => (m as { id: number }).id), [2, 3]);
  assert.equal(s.written.length, 1, "the discover is not answered twice");
});

Deno.test("early discover: any other first line is left whole to the transport", async () => {
  for (const first of [call(1), { jsonrpc: "2.0", method: "server/discover" }, "not json"]) {
    const s = streams();
    const early = new EarlyDiscover(s.stdin, s.stdout);
    s.stdin.write(typeof first === "string" ? first + "\n" : line(first));
    s.stdin.write(line(discover(9)));
    await tick();
    assert.equal(s.written.length, 0, `nothing answered early for ${JSON.stringify(first)}`);
    const { input, received } = await transportAfter(early, s);
    await tick();
    assert.equal(input.answered, false);
    const messages = received.length + s.written.length;
    // The transport reads both lines (a line that is not JSON is answered with a parse error).
    assert.equal(messages, 2, JSON.stringify({ received, written: s.written }));
  }
});

Deno.test("early discover: a client that closes stdin before the transport takes over is seen", async () => {
  const s = streams();
  const early = new EarlyDiscover(s.stdin, s.stdout);
  s.stdin.end('{"jsonrpc":"2.0"');
  await tick();
  const input = early.handOver();
  assert.equal(input.ended, true);
  assert.equal(new TextDecoder().decode(input.pending), '{"jsonrpc":"2.0"');
});

Deno.test("early discover: the server answers Claude Code's probe and then serves the session on one stdin", async () => {
  const server = serverCommand();
  const state = tempDir("od-early-state-");
  const child = new Deno.Command(server.command, {
    args: server.args,
    env: { OLLAMA_MCP_STATE_DIR: state, OLLAMA_MCP_BASE_URL: "http://127.0.0.1:9", NO_COLOR: "1" },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  const meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
  };
  await writer.write(
    new TextEncoder().encode(
      line({ ...discover(1), params: { _meta: meta } }) +
        line({ jsonrpc: "2.0", id: 2, method: "tools/list", params: { _meta: meta } }),
    ),
  );
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (text.split("\n").length < 3) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  await writer.close();
  const status = await child.status;
  const stderr = await new Response(child.stderr).text();
  reader.releaseLock();
  const [first, second] = text.trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(first.id, 1);
  assert.deepEqual(first.result.supportedVersions, ["2026-07-28"]);
  assert.equal(second.id, 2);
  assert.ok(
    (second.result.tools as Array<{ name: string }>).some((t) => t.name === "delegate_run"),
  );
  assert.equal(status.code, 0, stderr);
  assert.match(stderr, /stopping: client closed stdin/);
});

Deno.test("early discover: requests piped with stdin closed behind them are all answered, tools/list too (issue 34: the tools load after initialize)", async () => {
  const server = serverCommand();
  const state = tempDir("od-early-state-");
  const child = new Deno.Command(server.command, {
    args: server.args,
    env: { OLLAMA_MCP_STATE_DIR: state, OLLAMA_MCP_BASE_URL: "http://127.0.0.1:9", NO_COLOR: "1" },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(
    new TextEncoder().encode(
      line({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "script", version: "1" },
        },
      }) +
        line({ jsonrpc: "2.0", method: "notifications/initialized" }) +
        line({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
    ),
  );
  await writer.close();
  const [out, status, stderr] = await Promise.all([
    new Response(child.stdout).text(),
    child.status,
    new Response(child.stderr).text(),
  ]);
  const answers = out.trim().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(answers.map((a) => a.id), [1, 2], `${out}\n${stderr}`);
  assert.equal(answers[0].result.serverInfo.name, "ollama-delegate");
  assert.ok(
    (answers[1].result.tools as Array<{ name: string }>).some((t) => t.name === "delegate_run"),
  );
  assert.equal(status.code, 0, stderr);
});

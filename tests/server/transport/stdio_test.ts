/**
 * The capped stdio transport over real streams: a message over the cap is refused with a
 * JSON-RPC error naming its id, and the next message is read as usual.
 */
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { CappedStdioTransport, TopLevelScanner } from "../../../src/server/transport/stdio.ts";

function setup(maxMessageBytes: number) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const written: unknown[] = [];
  let pending = "";
  stdout.on("data", (chunk: Uint8Array) => {
    pending += new TextDecoder().decode(chunk);
    let nl;
    while ((nl = pending.indexOf("\n")) >= 0) {
      written.push(JSON.parse(pending.slice(0, nl)));
      pending = pending.slice(nl + 1);
    }
  });
  const logs: string[] = [];
  const transport = new CappedStdioTransport(stdin, stdout, {
    maxMessageBytes,
    log: (l) => logs.push(l),
  });
  const received: JSONRPCMessage[] = [];
  let closed = false;
  transport.onmessage = (m) => received.push(m);
  transport.onclose = () => closed = true;
  return { stdin, transport, written, received, logs, closed: () => closed };
}

const tick = () => new Promise((r) => setTimeout(r, 10));

const request = (id: number | string, text: string) =>
  JSON.stringify({
    method: "tools/call",
    params: { name: "x", arguments: { prompt: text } },
    jsonrpc: "2.0",
    id,
  });

Deno.test("transport: an over-long line gets an error with its id and the next line is read", async () => {
  const t = setup(1000);
  await t.transport.start();
  // The SDK client writes the id last; other clients write it first.
  t.stdin.write(request(7, "a".repeat(5000)) + "\n");
  t.stdin.write(
    JSON.stringify({
      jsonrpc: "2.0",
      id: "first",
      method: "m",
      params: { p: "\u0001".repeat(400) },
    }) +
      "\n",
  );
  t.stdin.write(request(8, "short") + "\n");
  await tick();
  assert.equal(t.closed(), false);
  assert.deepEqual(t.received.map((m) => (m as { id: unknown }).id), [8]);
  assert.equal(t.written.length, 2);
  const [first, second] = t.written as Array<
    { id: unknown; error: { code: number; message: string } }
  >;
  assert.equal(first!.id, 7);
  assert.equal(first!.error.code, -32600);
  assert.match(
    first!.error.message,
    /^Request too large: 5\d\d\d bytes on the wire, over the server's limit of 1000 bytes/,
  );
  assert.equal(second!.id, "first");
  assert.match(
    t.logs[0]!,
    /Refused an MCP message of 5\d\d\d bytes, over the 1000-byte limit \(id 7\)/,
  );
});

Deno.test("transport: a long line split over many chunks, CRLF and blank lines", async () => {
  const t = setup(200_000);
  await t.transport.start();
  const line = request(1, 'é\u0001"\\'.repeat(10_000));
  const bytes = new TextEncoder().encode(line + "\r\n\n");
  for (let i = 0; i < bytes.length; i += 333) t.stdin.write(bytes.subarray(i, i + 333));
  await tick();
  assert.equal(t.received.length, 1);
  const args = (t.received[0] as { params: { arguments: { prompt: string } } }).params.arguments;
  assert.equal(args.prompt, 'é\u0001"\\'.repeat(10_000));
  assert.deepEqual(t.written, []);
});

Deno.test("transport: a line that is not JSON or not JSON-RPC is answered, not dropped", async () => {
  const t = setup(1000);
  await t.transport.start();
  t.stdin.write("{not json\n");
  t.stdin.write(JSON.stringify({ jsonrpc: "1.0", id: 3, method: "m" }) + "\n");
  t.stdin.write(
    JSON.stringify({ jsonrpc: "2.0", method: "notifications/x", params: { a: "b".repeat(2000) } }) +
      "\n",
  );
  t.stdin.write(request(4, "ok") + "\n");
  await tick();
  const errors = t.written as Array<{ id: unknown; error: { code: number } }>;
  assert.deepEqual(errors.map((e) => [e.id, e.error.code]), [[null, -32700], [3, -32600]]);
  assert.deepEqual(t.received.map((m) => (m as { id: unknown }).id), [4]);
  assert.equal(t.logs.length, 3, "the over-long notification is logged, not answered");
});

Deno.test("transport: close stops reading and reports once", async () => {
  const t = setup(1000);
  await t.transport.start();
  await t.transport.close();
  t.stdin.write(request(1, "late") + "\n");
  await tick();
  assert.equal(t.closed(), true);
  assert.deepEqual(t.received, []);
});

Deno.test("TopLevelScanner: finds the top-level id, not nested ones or ids inside strings", () => {
  const scan = (text: string, pieces = 1) => {
    const s = new TopLevelScanner();
    const bytes = new TextEncoder().encode(text);
    const step = Math.ceil(bytes.length / pieces);
    for (let i = 0; i < bytes.length; i += step) s.feed(bytes.subarray(i, i + step));
    return s;
  };
  const nested = '{"params":{"id":99,"s":"\\"id\\":5,"},"method":"m","id":"abc"}';
  for (const pieces of [1, 3, 7, nested.length]) {
    const s = scan(nested, pieces);
    assert.equal(s.id, "abc", `pieces ${pieces}`);
    assert.equal(s.hasMethod, true);
  }
  assert.equal(scan('{ "id" : 12 , "method":"m"}').id, 12);
  assert.equal(scan('{"method":"m","params":{}}').id, undefined);
  assert.equal(scan('{"id":1.5}').id, undefined);
  assert.equal(scan('{"id":{"x":1}}').id, undefined);
  assert.equal(scan("[1,2,3]").id, undefined);
  assert.equal(scan("garbage").id, undefined);
});

/**
 * Limits of what one tool call may carry, with the real MCP SDK client over stdio: a prompt
 * at the documented limit works whatever its bytes, a bigger one gets a clear error, and no
 * message ends the server or interrupts a running delegate. prompt_file reads no pseudo-files.
 */
import assert from "node:assert/strict";
import { readFileSync, statSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { alive, field, tempDir, until } from "../support/harness.ts";
import { startScene } from "../support/scene.ts";

const native = { engine: "native", model: "qwen3:8b" };
const MIB = 1024 * 1024;

Deno.test({
  name: "input limits: big prompts work or get a clear error; the server and a running job go on",
  // The SDK client's own stdio reader keeps a timer per request it could not finish.
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    // A model whose context holds a 10 MiB prompt: this test is about what one call can carry,
    // not about fitting it into a context (tests/in_process/local_context_test.ts).
    await using scene = await startScene({
      emulator: {
        models: [{ name: "qwen3:8b", contextLength: 8 * MIB }],
      },
      // A backend's claimed context is clamped to 1M tokens unless the user sets maxContext.
      env: { OLLAMA_MCP_MAX_CONTEXT: String(8 * MIB) },
    });
    const work = tempDir("od-limits-");
    const hung = await scene.call("delegate_start", {
      ...native,
      prompt: `@hang\nkeep running ${crypto.randomUUID()}`,
      cwd: work,
      wait_seconds: 0,
    });
    assert.equal(hung.isError, false, hung.text);
    const hungId = field(hung.text, "job_id")!;
    await until(
      () => scene.emulator.nativeChatRequests().length >= 1,
      30_000,
      "the hanging job's request",
    );

    // 10,485,700 bytes: under the 10 MiB prompt limit, over the SDK transport's 10 MiB line.
    const header = "@reply big-ok\n";
    const big = header + "a".repeat(10_485_700 - header.length);
    const bigReply = await scene.call("delegate_start", {
      ...native,
      prompt: big,
      cwd: work,
      wait_seconds: 120,
    }, { timeoutMs: 300_000 });
    assert.equal(bigReply.isError, false, bigReply.text.slice(0, 500));
    assert.equal(field(bigReply.text, "state"), "completed", bigReply.text.slice(0, 500));
    assert.match(bigReply.text, /--- output ---\nbig-ok/);
    const bigId = field(bigReply.text, "job_id")!;
    assert.equal(
      statSync(join(scene.stateDir, bigId, "prompt.txt")).size,
      10_485_700,
      "the whole prompt was kept",
    );

    // 2 MB of \x01: 12 MB on the wire, since JSON spends 6 bytes on each.
    const control = "@reply ctl-ok\n" + "\x01".repeat(2_000_000);
    const controlReply = await scene.call("delegate_start", {
      ...native,
      prompt: control,
      cwd: work,
      wait_seconds: 120,
    }, { timeoutMs: 300_000 });
    assert.equal(field(controlReply.text, "state"), "completed", controlReply.text.slice(0, 500));
    assert.match(controlReply.text, /--- output ---\nctl-ok/);

    // One byte over the prompt limit: a tool error that says so.
    const over = await scene.call("delegate_start", {
      ...native,
      prompt: "a".repeat(10 * MIB + 1),
      cwd: work,
    }, { timeoutMs: 300_000 });
    assert.equal(over.isError, true);
    assert.match(over.text, /^Cannot use a prompt over 10485760 bytes \(UTF-8\)/);

    // Over the message cap itself (13 MiB of \x01 is 78 MiB on the wire): refused by the
    // transport with a JSON-RPC error for this very request, and the connection stays.
    const refused = await scene.call("delegate_start", {
      ...native,
      prompt: "\x01".repeat(13 * MIB),
      cwd: work,
    }, { timeoutMs: 300_000 }).then((r) => r, (e: unknown) => e);
    assert.ok(
      refused instanceof McpError,
      `expected a JSON-RPC error: ${JSON.stringify(refused)}`,
    );
    const error = refused as McpError;
    assert.equal(error.code, -32600);
    assert.match(
      error.message,
      /Request too large: \d+ bytes on the wire, over the server's limit of \d+ bytes \(76 MiB\)/,
    );

    // The server still answers, and the job that was running all along still runs.
    assert.ok(alive(scene.pid), "the server exited");
    const models = await scene.call("ollama_models");
    assert.equal(models.isError, false, models.text);
    const status = await scene.call("delegate_status", { job_id: hungId });
    assert.equal(field(status.text, "state"), "running", status.text);
    assert.match(scene.stderr(), /Refused an MCP message of \d+ bytes, over the \d+-byte limit/);
    assert.doesNotMatch(scene.stderr(), /stopping/);
    await scene.call("delegate_cancel", { job_id: hungId });
    await scene.server.close();
    // Every exit says why.
    await until(() => !alive(scene.pid), 20_000, "the server to exit");
    assert.match(scene.stderr(), /stopping: client closed stdin/);
    assert.match(scene.stderr(), /server exiting with code 0/);
  },
});

Deno.test("prompt_file: /proc/self/environ is refused and the server's token never reaches the model", async () => {
  const token = `ghp_poison${crypto.randomUUID().replaceAll("-", "")}`;
  await using scene = await startScene({ env: { GITHUB_TOKEN: token } });
  const work = tempDir("od-limits-");
  symlinkSync("/proc/self/environ", join(work, "task.md"));
  for (const promptFile of ["/proc/self/environ", join(work, "task.md"), "/dev/stdin"]) {
    const reply = await scene.call("delegate_start", {
      ...native,
      prompt_file: promptFile,
      cwd: work,
      wait_seconds: 30,
    });
    assert.equal(reply.isError, true, reply.text);
    assert.match(
      reply.text,
      /^Cannot read prompt_file "[^"]+"( \(it resolves to "[^"]+"\))?: (files under \/(proc|dev) are the kernel's|it is not a regular file)/,
    );
  }
  const files = await scene.call("delegate_start", {
    ...native,
    prompt: "@reply x\nsummarise",
    files: ["/proc/self/environ"],
    allowed_tools: [],
    cwd: work,
  });
  assert.equal(files.isError, true);
  assert.match(files.text, /files under \/proc/);
  for (const req of scene.emulator.requests) {
    assert.equal(req.bodyText.includes(token), false, "the token reached the backend");
  }
  assert.equal(readFileSync(`/proc/${scene.pid}/environ`, "utf8").includes(token), true);
});

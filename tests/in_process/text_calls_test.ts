/**
 * Tool calls written as text, end to end: the real server over stdio, the Ollama emulator
 * playing local models that write their calls in their family's text format (Hermes, Qwen3-
 * Coder, Llama JSON and python_tag, Mistral, a fenced block), and real bubblewrap running the
 * commands. Over Ollama's own chat API (the default backend) and over the OpenAI-compatible
 * one (a named backend on the same emulator).
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { type TextCallStyle } from "../support/emulator/emulator.ts";
import { TEXT_CALL_STYLES } from "../support/emulator/text_calls.ts";
import { defaultLayout } from "../support/default_layout.ts";
import { field, tempDir } from "../support/harness.ts";
import { startInProcessScene } from "../support/in_process_scene.ts";

const STYLES = TEXT_CALL_STYLES.filter((s): s is TextCallStyle => s !== "structured");
const modelOf = (style: TextCallStyle) => `${style}-coder:7b`;
/** The format the transcript names for each style. */
const FORMAT: Record<string, string> = { "qwen3-coder-bare": "qwen3-coder" };

Deno.test("text calls: a call written as text in each format runs in the sandbox, is counted as recovered and answered", async () => {
  await using scene = await startInProcessScene({
    emulator: {
      models: STYLES.map((style) => ({ name: modelOf(style), toolCallStyle: style })),
    },
    server: false,
  });
  await scene.startServer({
    userConfig: { backends: { compat: { url: scene.emulator.url, kind: "openai" } } },
  });
  for (const backend of ["ollama", "compat"]) {
    for (const style of STYLES) {
      const work = tempDir("od-textcall-");
      const reply = await scene.call("delegate_start", {
        engine: "native",
        backend,
        model: modelOf(style),
        wait_seconds: 90,
        cwd: work,
        prompt: `@bash echo made-by-${style} > out.txt && cat out.txt\n` +
          "@reply I wrote out.txt.\nwrite out.txt",
      });
      const what = `${style} over ${backend}`;
      assert.equal(field(reply.text, "state"), "completed", `${what}\n${reply.text}`);
      // The command really ran: the file is on disk.
      assert.equal(readFileSync(join(work, "out.txt"), "utf8"), `made-by-${style}\n`, what);
      assert.equal(field(reply.text, "tool calls"), "1 (1 recovered from text)", what);
      assert.equal(
        field(reply.text, "commands"),
        `1 run: echo made-by-${style} > out.txt && cat out.txt (exit 0)`,
        what,
      );
      assert.match(reply.text, /--- output ---\nI wrote out\.txt\./, what);
      const id = field(reply.text, "job_id")!;
      const transcript = readFileSync(join(scene.stateDir, id, "transcript.jsonl"), "utf8")
        .trim().split("\n").map((l) => JSON.parse(l));
      const call = transcript.find((e) => e.kind === "tool_call");
      assert.equal(call.name, "Bash", what);
      assert.equal(call.recovered, FORMAT[style] ?? style, what);
      const result = transcript.find((e) => e.kind === "tool_result");
      assert.equal(result.id, call.id, what);
      assert.match(result.text, new RegExp(`^exit code 0 .*\\nmade-by-${style}\\n`), what);
    }
  }
  // Both APIs were used, each for every format's two requests.
  assert.equal(scene.emulator.nativeChatRequests().length, 2 * STYLES.length);
  assert.equal(scene.emulator.chatRequests().length, 2 * STYLES.length);
});

Deno.test("text calls: prose that quotes a call is the answer; nothing runs and nothing is counted", async () => {
  const answer = "A Hermes model asks for a command like this: " +
    '<tool_call>{"name": "Bash", "arguments": {"command": "touch quoted.txt"}}</tool_call> ' +
    "and the server runs it. The same call in a fenced example:\n\n```json\n" +
    '{"name": "Bash", "arguments": {"command": "touch fenced.txt"}}\n```\n\nThat is the format.';
  await using scene = await startInProcessScene({
    emulator: {
      models: [{ name: "qwen2.5:7b", toolCallStyle: "hermes" }],
      chatScript: () => ({ kind: "text", text: answer }),
    },
  });
  const work = tempDir("od-textcall-");
  const reply = await scene.call("delegate_start", {
    engine: "native",
    model: "qwen2.5:7b",
    wait_seconds: 60,
    cwd: work,
    prompt: "how do text tool calls look?",
  });
  assert.equal(field(reply.text, "state"), "completed", reply.text);
  assert.equal(existsSync(join(work, "quoted.txt")), false);
  assert.equal(existsSync(join(work, "fenced.txt")), false);
  assert.match(field(reply.text, "tool calls") ?? "", /^0 /);
  assert.equal(field(reply.text, "commands"), undefined);
  assert.ok(reply.text.includes(`--- output ---\n${answer}`), reply.text);
  assert.equal(scene.emulator.nativeChatRequests().length, 1);
});

Deno.test("text calls: a Bash call written as text with Claude Code's description runs like the structured call, and the transcript notes the ignored parameter", async () => {
  await using scene = await startInProcessScene({
    ...defaultLayout("od-textcall-home-"),
    emulator: {
      models: TEXT_CALL_STYLES.map((style) => ({ name: modelOf(style), toolCallStyle: style })),
    },
  });
  for (const style of TEXT_CALL_STYLES) {
    const work = tempDir("od-textcall-");
    const call = { command: `echo described-${style} > out.txt`, description: "Write out.txt" };
    const reply = await scene.call("delegate_start", {
      engine: "native",
      model: modelOf(style),
      wait_seconds: 90,
      cwd: work,
      prompt: `@tool Bash ${JSON.stringify(call)}\n@reply Wrote it.\nwrite out.txt`,
    });
    assert.equal(field(reply.text, "state"), "completed", `${style}\n${reply.text}`);
    assert.equal(readFileSync(join(work, "out.txt"), "utf8"), `described-${style}\n`, style);
    assert.equal(
      field(reply.text, "tool calls"),
      style === "structured" ? "1" : "1 (1 recovered from text)",
      style,
    );
    assert.equal(
      field(reply.text, "commands"),
      `1 run: echo described-${style} > out.txt (exit 0)`,
      style,
    );
    const id = field(reply.text, "job_id")!;
    // The job folder is where a default install keeps it.
    const lines = readFileSync(
      join(scene.home, ".ollama-mcp", "jobs", id, "transcript.jsonl"),
      "utf8",
    )
      .trim().split("\n").map((l) => JSON.parse(l));
    const entry = lines.find((e) => e.kind === "tool_call");
    assert.deepEqual(entry.input, call, style);
    assert.deepEqual(entry.ignored, ["description"], style);
    const page = await scene.call("delegate_transcript", { job_id: id });
    assert.match(
      page.text,
      /\[0\] tool_call Bash \(call_[^)]+\)\n {2}\{.*"description":"Write out\.txt"\}\n {2}ignored: "description" \(Claude Code's Bash takes it; this one does not\)\n/,
      style,
    );
  }
});

Deno.test("text calls: dangerouslyDisableSandbox on a Bash call is ignored; the command stays in the sandbox and the model is told", async () => {
  await using scene = await startInProcessScene({
    emulator: {
      models: [{ name: modelOf("hermes"), toolCallStyle: "hermes" }, { name: "qwen3:8b" }],
    },
  });
  const outside = tempDir("od-textcall-outside-");
  for (const style of ["hermes", "structured"] as const) {
    const work = tempDir("od-textcall-");
    const call = {
      command: `touch ${outside}/escaped-${style}; echo ran`,
      dangerouslyDisableSandbox: true,
    };
    const reply = await scene.call("delegate_start", {
      engine: "native",
      model: style === "structured" ? "qwen3:8b" : modelOf(style),
      wait_seconds: 90,
      cwd: work,
      prompt: `@tool Bash ${JSON.stringify(call)}\n@reply Done.\nescape`,
    });
    assert.equal(field(reply.text, "state"), "completed", reply.text);
    assert.equal(existsSync(join(outside, `escaped-${style}`)), false, style);
    const id = field(reply.text, "job_id")!;
    const lines = readFileSync(join(scene.stateDir, id, "transcript.jsonl"), "utf8")
      .trim().split("\n").map((l) => JSON.parse(l));
    const result = lines.find((e) => e.kind === "tool_result");
    assert.match(
      result.text,
      /\nNote: this Bash does not take "dangerouslyDisableSandbox"; the call ran without it\.$/,
      style,
    );
  }
});

/** A ledger line per ended job, in the server's state dir. */
function ledgerOf(stateDir: string): Array<Record<string, unknown>> {
  return readFileSync(join(stateDir, "ledger.jsonl"), "utf8").trim().split("\n")
    .map((l) => JSON.parse(l));
}

Deno.test("text calls: a model that keeps writing calls nothing can run fails with tool_call_unparsed, never completed; raw replies in the transcript, the ledger notes it", async () => {
  // DeepSeek's begin token repeated with nothing readable after it (sgl-project/sglang#5224).
  const degenerate = "<｜tool▁calls▁begin｜>".repeat(5) + "MMMMMMMM";
  await using scene = await startInProcessScene({
    emulator: {
      models: [{ name: "deepseek-r1:8b" }],
      chatScript: () => ({ kind: "text", text: degenerate }),
    },
  });
  const reply = await scene.call("delegate_start", {
    engine: "native",
    model: "deepseek-r1:8b",
    wait_seconds: 60,
    cwd: tempDir("od-textcall-"),
    prompt: "list the files",
  });
  assert.equal(field(reply.text, "state"), "failed", reply.text);
  assert.match(
    field(reply.text, "error") ?? "",
    /^tool_call_unparsed: the model wrote 3 replies in a row that look like tool calls written as text but cannot be run/,
  );
  // Each reply was answered with what was wrong before the next was asked for.
  const requests = scene.emulator.nativeChatRequests().map((r) =>
    r.json as Record<string, unknown>
  );
  assert.equal(requests.length, 3);
  const last = (requests[2]!.messages as Array<{ role: string; content: string }>).at(-1)!;
  assert.equal(last.role, "user");
  assert.match(
    last.content,
    /^\[ollama-delegate\] Your last reply was not run: it looks like a tool call written as text/,
  );
  const id = field(reply.text, "job_id")!;
  const page = await scene.call("delegate_transcript", { job_id: id });
  assert.ok(page.text.includes("text\n  <｜tool▁calls▁begin｜><｜tool▁calls▁begin｜>"), page.text);
  assert.match(
    page.text,
    /tool_result ollama-delegate \(correction_1\) error\n {2}\[ollama-delegate\] Your last reply was not run/,
  );
  const [entry] = ledgerOf(scene.stateDir);
  assert.equal(entry!.state, "failed");
  assert.equal(entry!.unrunCall, true);
});

Deno.test("text calls: a call with the tool's name in another case and the parameter names small models use runs, and the transcript says how it was read", async () => {
  const call = '<tool_call>\n{"name": "bash", "arguments": {"cmd": "echo mapped > out.txt"}}\n' +
    "</tool_call>";
  await using scene = await startInProcessScene({
    emulator: {
      models: [{ name: "qwen2.5-coder:7b" }],
      chatScript: (view) => ({
        kind: "text",
        text: view.conversationRequestNumber === 1 ? call : "Wrote out.txt.",
      }),
    },
  });
  const work = tempDir("od-textcall-");
  const reply = await scene.call("delegate_start", {
    engine: "native",
    model: "qwen2.5-coder:7b",
    wait_seconds: 60,
    cwd: work,
    prompt: "write out.txt",
  });
  assert.equal(field(reply.text, "state"), "completed", reply.text);
  assert.equal(readFileSync(join(work, "out.txt"), "utf8"), "mapped\n");
  assert.equal(field(reply.text, "tool calls"), "1 (1 recovered from text)");
  const page = await scene.call("delegate_transcript", { job_id: field(reply.text, "job_id")! });
  assert.match(
    page.text,
    /tool_call Bash \(call_[^)]+\)\n {2}\{"command":"echo mapped > out\.txt"\}\n {2}mapped: bash -> Bash, cmd -> command \(the model wrote the call as text under these names\)/,
  );
  assert.match(
    page.text,
    /Note: read "bash" as "Bash", "cmd" as "command"; use the tool's own names next time\./,
  );
  const [entry] = ledgerOf(scene.stateDir);
  assert.equal(entry!.recovered, 1);
  assert.equal(entry!.unrunCall, undefined);
});

Deno.test({
  name:
    "text calls (claude engine): a turn that ends on a call written as text is no success: a warning says so and how to switch, the ledger notes it",
  ignore: process.platform !== "linux",
  async fn() {
    await using scene = await startInProcessScene({
      emulator: {
        // Writes every scripted tool call as Hermes text on /v1/messages too.
        models: [{ name: "hermes3:8b", toolCallStyle: "hermes" }],
        script: (req) =>
          req.tools.length > 0
            ? { kind: "tool_use", name: "Bash", input: { command: "touch made.txt" } }
            : undefined,
      },
    });
    const work = tempDir("od-textcall-claude-");
    const reply = await scene.call("delegate_start", {
      engine: "claude",
      model: "hermes3:8b",
      wait_seconds: 150,
      cwd: work,
      prompt: "create made.txt",
    }, { timeoutMs: 200_000 });
    assert.equal(field(reply.text, "state"), "failed", reply.text);
    assert.match(
      field(reply.text, "error") ?? "",
      /^tool_call_unparsed: the turn ended on a tool call the model wrote as text, which Claude Code does not run/,
    );
    assert.match(
      reply.text,
      /warning: +the model wrote a tool call as text \(a call to "Bash" in the hermes text format\); Claude Code runs only structured tool calls, so it did not run and the turn ended on it\. The native engine runs such calls: start the job again with engine: "native" \(or make it the default: ollama-delegate config --engine native\)/,
    );
    assert.equal(existsSync(join(work, "made.txt")), false);
    const [entry] = ledgerOf(scene.stateDir);
    assert.equal(entry!.engine, "claude");
    assert.equal(entry!.unrunCall, true);
  },
});

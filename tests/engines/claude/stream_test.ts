import assert from "node:assert/strict";
import { outcomeOf } from "../../../src/engines/claude/outcome.ts";
import { LineSplitter } from "../../../src/platform/line_splitter.ts";
import {
  parseStreamLine,
  readStreamEvent,
  type ResultEvent,
  type StreamItem,
} from "../../../src/engines/claude/stream.ts";

const SID = "9d3c1f2e-5a6b-4c7d-8e9f-0a1b2c3d4e5f";
const j = (v: unknown) => JSON.stringify(v);

const INIT = j({
  ...{ type: "system", subtype: "init", cwd: "/w", session_id: SID, model: "qwen3-coder" },
  ...{ permissionMode: "default", apiKeySource: "none", tools: ["Bash"], mcp_servers: [] },
});

const assistant = (content: unknown[], parent: string | null = null) =>
  j({
    type: "assistant",
    message: { id: "m", type: "message", role: "assistant", model: "qwen3-coder", content },
    parent_tool_use_id: parent,
    session_id: SID,
    uuid: "u2",
  });

const tool = (name: string, input: unknown) => ({ type: "tool_use", id: "t", name, input });
const toolItem = (name: string, detail: string): StreamItem => ({
  type: "activity",
  toolCall: true,
  activity: { kind: "tool", name, detail },
});
const err = (text: string): StreamItem => ({
  type: "activity",
  toolCall: false,
  activity: { kind: "error", text },
});
/** The result event of one line (which must be one). */
const resultOf = (v: unknown) => (parseStreamLine(j(v))[0] as { result: ResultEvent }).result;
/** A parsed Usage; durationMs is always RESULT_OK's 1234. */
const usage = (input: number, output: number, read: number, created: number, turns: number) => ({
  ...{ inputTokens: input, outputTokens: output, cacheReadTokens: read },
  ...{ cacheCreationTokens: created, numTurns: turns, durationMs: 1234 },
});

const RESULT_OK = {
  ...{ type: "result", subtype: "success", is_error: false, result: "All done.", num_turns: 2 },
  ...{ duration_ms: 1234, total_cost_usd: 0.00044, permission_denials: [], session_id: SID },
  usage: {
    ...{ input_tokens: 50, output_tokens: 12 },
    ...{ cache_read_input_tokens: 7, cache_creation_input_tokens: 4 },
  },
};

Deno.test("stream: system/init gives session id, permission mode and model", () => {
  assert.deepEqual(parseStreamLine(INIT), [
    { type: "init", sessionId: SID, permissionMode: "default", model: "qwen3-coder" },
  ]);
  assert.deepEqual(parseStreamLine(j({ type: "system", subtype: "init" })), [{ type: "init" }]);
});

Deno.test("stream: assistant text and tool_use blocks, subagent ones included", () => {
  const line = assistant([
    { type: "thinking", thinking: "hmm" },
    { type: "text", text: "  Let me look.  " },
    tool("Bash", { command: "ls -la", description: "list" }),
    tool("Read", { file_path: "/w/a.ts" }),
    tool("Grep", { pattern: "TODO", path: "/w" }),
    tool("WebFetch", { url: "https://x" }),
    tool("Mystery", { other: 1 }),
    { type: "text", text: "   " },
  ]);
  assert.deepEqual(parseStreamLine(line), [
    { type: "activity", toolCall: false, activity: { kind: "text", text: "Let me look." } },
    toolItem("Bash", "ls -la"),
    toolItem("Read", "/w/a.ts"),
    toolItem("Grep", "TODO"),
    toolItem("WebFetch", "https://x"),
    toolItem("Mystery", ""),
  ]);
  const sub = parseStreamLine(assistant([tool("Glob", { pattern: "*.md" })], "toolu_parent"));
  assert.deepEqual(sub, [toolItem("Glob", "*.md")]);
});

Deno.test("stream: tool calls are counted without a cap (500 tool_use blocks)", () => {
  const blocks = Array.from({ length: 500 }, (_, i) => tool("Read", { file_path: `/f${i}` }));
  const items = parseStreamLine(assistant(blocks));
  assert.equal(items.filter((i) => i.type === "activity" && i.toolCall).length, 500);
  let count = 0;
  const splitter = new LineSplitter(1 << 20, (l) => {
    for (const i of parseStreamLine(l)) if (i.type === "activity" && i.toolCall) count++;
  });
  const one = assistant([tool("Bash", { command: "true" })]);
  splitter.push(new TextEncoder().encode(`${one}\n`.repeat(500)));
  splitter.end();
  assert.equal(count, 500);
});

Deno.test("stream: failed tool results and system notices become error activity", () => {
  const user = j({
    type: "user",
    message: {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "a", content: "fine", is_error: false },
        { type: "tool_result", tool_use_id: "b", content: " Error: no such file ", is_error: true },
        {
          type: "tool_result",
          tool_use_id: "c",
          content: [{ type: "text", text: "x" }, { type: "text", text: "y" }],
          is_error: true,
        },
      ],
    },
    parent_tool_use_id: null,
    session_id: SID,
  });
  assert.deepEqual(parseStreamLine(user), [
    err("tool error: Error: no such file"),
    err("tool error: x y"),
  ]);
  const denied = j({
    ...{ type: "system", subtype: "permission_denied", tool_name: "Bash", tool_use_id: "t9" },
    ...{ message: "touch in '/w' needs approval", session_id: SID },
  });
  assert.deepEqual(parseStreamLine(denied), [
    err("permission denied: Bash: touch in '/w' needs approval"),
  ]);
  const retry = j({
    ...{ type: "system", subtype: "api_retry", attempt: 3, max_retries: 10, retry_delay_ms: 4000 },
    ...{ error_status: 401, error: "authentication_failed" },
  });
  assert.deepEqual(parseStreamLine(retry), [err("API retry 3/10: 401 authentication_failed")]);
  // Only a retry tells the running turn to ask whether its backend is still there.
  assert.equal((readStreamEvent(retry) as { retry?: true }).retry, true);
  assert.equal((readStreamEvent(denied) as { retry?: true }).retry, undefined);
  assert.deepEqual(parseStreamLine(j({ type: "system", subtype: "compact_boundary" })), []);
});

Deno.test("stream: result events, success and the two error shapes", () => {
  assert.deepEqual(parseStreamLine(j(RESULT_OK)), [{
    type: "result",
    result: {
      isError: false,
      subtype: "success",
      text: "All done.",
      errors: [],
      usage: usage(50, 12, 7, 4, 2),
      permissionDenials: [],
    },
  }]);
  const r1 = resultOf({
    ...RESULT_OK,
    subtype: "error_max_turns",
    is_error: true,
    result: null,
    errors: ["Reached maximum number of turns (1)"],
    num_turns: 1,
    permission_denials: [
      { tool_name: "Write", tool_use_id: "t1", tool_input: { file_path: "/w/x" } },
      { tool_name: "Bash", tool_use_id: "t2", tool_input: { command: "rm -rf /" } },
    ],
  });
  assert.equal(r1.isError, true);
  assert.equal(r1.text, "");
  assert.deepEqual(r1.errors, ["Reached maximum number of turns (1)"]);
  assert.deepEqual(r1.permissionDenials, [
    { tool: "Write", detail: "/w/x" },
    { tool: "Bash", detail: "rm -rf /" },
  ]);
  assert.equal("apiErrorStatus" in r1, false);
  const r2 = resultOf({
    ...RESULT_OK,
    is_error: true,
    result: "API Error: 410 model retired",
    api_error_status: 410,
    usage: undefined,
    num_turns: undefined,
  });
  assert.equal(r2.apiErrorStatus, 410);
  assert.equal(r2.text, "API Error: 410 model retired");
  assert.deepEqual(r2.usage, usage(0, 0, 0, 0, 0));
});

Deno.test("stream: garbage and non-objects give nothing and never throw", () => {
  const bad = [
    ...["", "   ", "not json", "{", "null", "42", '"str"', "[1,2]", "[{}]", "{}"],
    j({ type: "assistant" }),
    j({ type: "assistant", message: { content: "oops" } }),
    j({ type: "assistant", message: { content: [null, 1, "x", { type: "tool_use" }] } }),
    j({ type: "user", message: null }),
    j({ type: "system", subtype: 5 }),
    j({ type: "stream_event", event: {} }),
    "\u0000\uffff",
  ];
  for (const l of bad.slice(0, 12)) assert.deepEqual(parseStreamLine(l), [], l);
  // A tool_use block without name or input still counts, with placeholders.
  assert.deepEqual(parseStreamLine(bad[12]!), [toolItem("tool", "")]);
  for (const l of bad.slice(13)) assert.deepEqual(parseStreamLine(l), [], l);
  assert.deepEqual(parseStreamLine(j({ type: "result" }))[0]?.type, "result");
});

Deno.test("outcomeOf: exit 0 with a success result is ok", () => {
  const result = resultOf(RESULT_OK);
  assert.deepEqual(outcomeOf(result, 0, null, "noise"), {
    ok: true,
    resultText: "All done.",
    usage: result.usage,
    exitCode: 0,
    signal: null,
    permissionDenials: [],
  });
});

Deno.test("outcomeOf: exit 0 without a result event is a failure, not a completed job", () => {
  const o = outcomeOf(undefined, 0, null, "");
  assert.equal(o.ok, false);
  assert.equal(o.errorText, "Claude Code exited without a result event; the run did not finish");
  assert.equal(o.resultText, "");
});

Deno.test("outcomeOf: an is_error result gives its errors, else its text, else subtype", () => {
  const base: ResultEvent = {
    isError: true,
    subtype: "error_max_turns",
    text: "",
    errors: ["Reached maximum number of turns (1)", "second"],
    usage: usage(1, 2, 0, 0, 1),
    permissionDenials: [{ tool: "Bash", detail: "rm" }],
  };
  const o = outcomeOf(base, 1, null, "stderr text");
  assert.equal(o.ok, false);
  assert.equal(o.errorText, "Reached maximum number of turns (1); second");
  assert.deepEqual(o.permissionDenials, [{ tool: "Bash", detail: "rm" }]);
  const api = outcomeOf(
    { ...base, subtype: "success", errors: [], text: "API Error: 410 gone", apiErrorStatus: 410 },
    1,
    null,
    "",
  );
  assert.equal(api.errorText, "API Error: 410 gone");
  assert.equal(api.apiErrorStatus, 410);
  assert.equal(
    outcomeOf({ ...base, errors: [] }, 1, null, "").errorText,
    "Claude Code reported error_max_turns",
  );
  // is_error even with exit 0 is a failure.
  assert.equal(outcomeOf(base, 0, null, "").ok, false);
});

Deno.test("outcomeOf: nonzero exit without result: stderr tail, else exit code, else signal", () => {
  assert.equal(outcomeOf(undefined, 2, null, "\n  boom: bad flag \n").errorText, "boom: bad flag");
  assert.equal(outcomeOf(undefined, 2, null, "  \n").errorText, "claude exited with code 2");
  const sig = outcomeOf(undefined, null, "SIGKILL", "");
  assert.deepEqual(sig, {
    ok: false,
    resultText: "",
    errorText: "claude was ended by SIGKILL",
    exitCode: null,
    signal: "SIGKILL",
    permissionDenials: [],
  });
  // A clean result but a nonzero exit is still a failure.
  const o = outcomeOf(resultOf(RESULT_OK), 3, null, "");
  assert.equal(o.ok, false);
  assert.equal(o.errorText, "claude exited with code 3");
  assert.equal(o.resultText, "All done.");
});

/**
 * Tool calls written as text (issue 30), measured on the corpus of real replies
 * (tests/support/real_text_calls.ts: verbatim outputs from public issues, READMEs and parser
 * fixtures, each with its source):
 *
 * - native engine: each reply through the loop, over both chat clients (Ollama's `/api/chat`
 *   and the OpenAI-compatible one) against the emulator: the share whose calls run, the share
 *   answered with a correction, and the share that ends silently (taken for the final answer
 *   although it is a call): must be 0; and the answers (the labelled corpus's prose that
 *   quotes tool syntax) kept as answers;
 * - claude engine: each reply as a turn's answer, through the real server and the real Claude
 *   Code CLI (skipped with --no-claude or without Linux): the share of calls that leave a
 *   `warning:` and fail the job (must be all), and of plain answers left alone;
 * - the reader alone: time per reply on the corpus, and CPU time on hostile 4 MB replies.
 *
 *   deno run -A bench/text_calls_bench.ts [--no-claude]
 */
import "./support/help.ts";
import process from "node:process";
import { OllamaChatClient } from "../src/backends/ollama/chat.ts";
import type { ChatMessage } from "../src/backends/chat_types.ts";
import { runLoop } from "../src/engines/native/loop.ts";
import type { ToolName } from "../src/engines/native/tools/types.ts";
import { findTextCalls } from "../src/engines/text_calls/find_calls.ts";
import { startOllamaEmulator } from "../tests/support/emulator/emulator.ts";
import { REAL_TEXT_CALLS, renamedText } from "../tests/support/real_text_calls.ts";
import { CORPUS_TOOLS, TEXT_CALL_CORPUS } from "../tests/support/text_call_corpus.ts";
import { field, tempDir } from "../tests/support/harness.ts";
import { QUICK } from "./support/common.ts";
import { startInProcessScene } from "../tests/support/in_process_scene.ts";
import { harness, testTool } from "../tests/engines/native/support/loop_harness.ts";

// The real replies, and the labelled corpus's prose that quotes or explains tool syntax (which
// must stay the answer).
const all = [
  ...REAL_TEXT_CALLS.map((s) => ({
    id: s.id,
    family: s.family,
    expect: s.expect,
    reply: renamedText(s),
  })),
  ...TEXT_CALL_CORPUS.filter((c) => c.calls.length === 0 && !c.refused).map((c) => ({
    id: `labelled:${c.id}`,
    family: "labelled prose",
    expect: "answer" as const,
    reply: c.text,
  })),
];
// Quick mode: one reply with a call and one answer.
const samples = QUICK
  ? [all.find((s) => s.expect !== "answer")!, all.find((s) => s.expect === "answer")!]
  : all;
const real = samples.filter((s) => !s.id.startsWith("labelled:"));
const calls = samples.filter((s) => s.expect !== "answer");
const pct = (n: number, of: number) => `${n}/${of} (${(100 * n / Math.max(1, of)).toFixed(0)}%)`;

console.log(
  `corpus${QUICK ? " (quick: 2 of it)" : ""}: ${real.length} real replies from ${
    new Set(real.map((s) => s.family)).size
  } families (${calls.length} hold a call or an attempt at one), and ${
    samples.length - real.length
  } labelled answers that quote or explain tool syntax`,
);

// --- native engine ------------------------------------------------------------------------------
const emu = await startOllamaEmulator({
  models: [{ name: "qwen3:8b" }],
  chatScript: (view) => {
    const s = samples.find((x) => view.firstUserText === `sample ${x.id}`);
    if (!s) return undefined;
    return { kind: "text", text: view.conversationRequestNumber === 1 ? s.reply : "Done." };
  },
});
for (const api of ["native", "openai"] as const) {
  let ran = 0;
  let corrected = 0;
  let silent = 0;
  let answersKept = 0;
  const silentIds: string[] = [];
  for (const s of samples) {
    let tools = 0;
    const h = harness(
      emu.url,
      CORPUS_TOOLS.map((t) =>
        testTool(t.name as ToolName, false, () => {
          tools++;
          return { text: "ok" };
        }, t.parameters)
      ),
    );
    if (api === "native") h.deps.client = new OllamaChatClient({ baseUrl: emu.url, label: "o" });
    const messages: ChatMessage[] = [{ role: "user", content: `sample ${s.id}` }];
    const result = await runLoop(messages, h.deps);
    const wasCorrected = messages.some((m) =>
      (m.role === "tool" && (m.content ?? "").startsWith("Error: not run")) ||
      (m.role === "user" && (m.content ?? "").startsWith("[ollama-delegate]"))
    );
    const requests = messages.filter((m) => m.role === "assistant").length;
    if (s.expect === "answer") {
      if (requests === 1 && tools === 0 && result.text === s.reply) answersKept++;
      continue;
    }
    if (tools > 0) ran++;
    if (wasCorrected) corrected++;
    // Silent: the call's text was the job's answer, nothing run and nothing said.
    if (requests === 1 && result.ok) {
      silent++;
      silentIds.push(s.id);
    }
  }
  console.log(
    `native engine over ${
      api === "native" ? "/api/chat" : "/v1/chat/completions"
    }: of ${calls.length} replies with a call, ` +
      `calls ran in ${pct(ran, calls.length)}, a correction went back in ${
        pct(corrected, calls.length)
      }, ended silently: ${pct(silent, calls.length)}${
        silentIds.length ? ` (${silentIds.join(", ")})` : ""
      }; answers kept as answers: ${pct(answersKept, samples.length - calls.length)}`,
  );
}
await emu.close();

// --- claude engine ------------------------------------------------------------------------------
if (process.argv.includes("--no-claude") || process.platform !== "linux") {
  console.log("claude engine: skipped (--no-claude, or not Linux)");
} else {
  await using scene = await startInProcessScene({
    emulator: {
      models: [{ name: "qwen3:8b" }],
      script: (req) => {
        const s = samples.find((x) => req.firstUserText.includes(`sample ${x.id}`));
        return s ? { kind: "text", text: s.reply } : undefined;
      },
    },
  });
  let warned = 0;
  let answersClean = 0;
  const missed: string[] = [];
  const started = performance.now();
  for (const s of samples) {
    const reply = await scene.call("delegate_start", {
      engine: "claude",
      model: "qwen3:8b",
      wait_seconds: 150,
      cwd: tempDir("od-bench-textcall-"),
      prompt: `sample ${s.id}`,
    }, { timeoutMs: 200_000 });
    const warning = /warning: +the model wrote a tool call as text/.test(reply.text);
    const failed = field(reply.text, "state") === "failed" &&
      (field(reply.text, "error") ?? "").startsWith("tool_call_unparsed:");
    if (s.expect === "answer") {
      if (!warning && field(reply.text, "state") === "completed") answersClean++;
    } else if (warning && failed) {
      warned++;
    } else {
      missed.push(s.id);
    }
  }
  console.log(
    `claude engine (real Claude Code): of ${calls.length} replies with a call, a warning and a ` +
      `failed job in ${pct(warned, calls.length)}${
        missed.length ? ` (missed: ${missed.join(", ")})` : ""
      }; ` +
      `answers left alone: ${pct(answersClean, samples.length - calls.length)}; ` +
      `${((performance.now() - started) / 1000 / samples.length).toFixed(1)} s per job`,
  );
}

// --- the reader ---------------------------------------------------------------------------------
const names = CORPUS_TOOLS.map((t) => t.name);
let t0 = performance.now();
const rounds = 50;
for (let i = 0; i < rounds; i++) for (const s of samples) findTextCalls(s.reply, names);
const perReply = (performance.now() - t0) / rounds / samples.length;
const hostile: Array<[string, string]> = [
  ["open braces", "{"],
  ["open tool_call tags", '\n<tool_call>{"name": "x", "arguments": {'],
  ["inline code", "`a` "],
  ["unclosed fences", "```a\n"],
  ["deepseek tokens", "<｜tool▁call▁begin｜>function<｜tool▁sep｜>x\n```json\n{"],
  ["newlines", "\n"],
];
const costs: string[] = [];
for (const [name, unit] of hostile) {
  // Quick mode: a small reply of each kind, enough to run the code (1.5 CPU-s less).
  for (const size of QUICK ? [65_536] : [4 * 1024 * 1024, 999_999]) {
    const text = unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
    const start = process.cpuUsage();
    t0 = performance.now();
    findTextCalls(text, names);
    const cpu = process.cpuUsage(start);
    costs.push(
      `${name} ${(size / 1e6).toFixed(1)} MB: ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms`,
    );
  }
}
console.log(
  `reader: ${(perReply * 1000).toFixed(0)} µs per corpus reply; CPU on hostile replies: ${
    costs.join("; ")
  }`,
);

import assert from "node:assert/strict";
import type { ChatMessage, ChatRequest, ChatTool } from "../../../../src/backends/chat_types.ts";
import {
  ContextFitter,
  RECENT_TOOL_RESULTS,
} from "../../../../src/engines/native/context/fitter.ts";
import {
  ContextOverflowError,
  replyReserve,
} from "../../../../src/engines/native/context/budget.ts";
import { estimateTokens } from "../../../../src/models/tokens.ts";

const TOOLS: ChatTool[] = [{
  type: "function",
  function: { name: "Read", description: "Read a file", parameters: { type: "object" } },
}];

/** What a request of `messages` and TOOLS comes to, as JSON. */
function requestTokens(messages: readonly ChatMessage[]): number {
  return estimateTokens(JSON.stringify(messages).length + JSON.stringify(TOOLS).length);
}

/** A conversation: system, task, then `n` Read calls each answered with `size` characters. */
function conversation(n: number, size: number, task = "fix the bug"): ChatMessage[] {
  const out: ChatMessage[] = [
    { role: "system", content: "You are a careful coding agent." },
    { role: "user", content: task },
  ];
  for (let i = 0; i < n; i++) {
    const id = `call_${i}`;
    out.push({
      role: "assistant",
      content: "",
      tool_calls: [{
        id,
        type: "function",
        function: { name: "Read", arguments: JSON.stringify({ file_path: `src/f${i}.ts` }) },
      }],
    });
    out.push({
      role: "tool",
      tool_call_id: id,
      name: "Read",
      content: `${i}:`.padEnd(size, String.fromCharCode(97 + (i % 26))),
    });
  }
  return out;
}

const ask = (messages: ChatMessage[]): ChatRequest => ({ model: "m", messages, tools: TOOLS });

function fitter(tokens: number, sizeContext = true) {
  const notes: Array<{ count: number; note: string }> = [];
  const f = new ContextFitter({
    cap: { tokens, source: "setting" },
    sizeContext,
    onShortened: (count, note) => notes.push({ count, note }),
  });
  return { f, notes };
}

const toolContents = (r: ChatRequest) =>
  r.messages.flatMap((m) => (m.role === "tool" ? [m.content] : []));

Deno.test("fit: a request that fits goes out unchanged, with num_ctx for Ollama only", () => {
  const messages = conversation(3, 1000);
  const { f, notes } = fitter(32768);
  const out = f.fit(ask(messages));
  assert.deepEqual(out.messages, messages);
  assert.equal(out.numCtx, 16384, "about 1k tokens plus the 8k reserve");
  assert.equal(notes.length, 0);
  const openai = fitter(32768, false).f.fit(ask(messages));
  assert.equal(openai.numCtx, undefined);
  assert.deepEqual(openai.messages, messages);
});

Deno.test("fit: num_ctx stays put as the conversation grows within a step, and never shrinks", () => {
  const { f } = fitter(131072);
  const sizes = [1, 2, 3, 4].map((n) => f.fit(ask(conversation(n, 2000))).numCtx);
  assert.deepEqual(sizes, [16384, 16384, 16384, 16384]);
  assert.equal(f.fit(ask(conversation(20, 2000))).numCtx, 32768);
  // A smaller request later (a final turn without tools) keeps the loaded context.
  assert.equal(f.fit({ model: "m", messages: conversation(1, 10) }).numCtx, 32768);
});

Deno.test("fit: old tool results become one-line stubs only when needed, newest six kept whole", () => {
  // 10 results of 5,000 chars: about 12.9k tokens, over 16k minus the 4k reserve.
  const messages = conversation(10, 5000);
  const { f, notes } = fitter(16384);
  const out = f.fit(ask(messages));
  const contents = toolContents(out);
  const stubbed = contents.slice(0, 10 - RECENT_TOOL_RESULTS);
  for (const [i, c] of stubbed.entries()) {
    assert.equal(c, `[tool result of Read src/f${i}.ts: 5,000 chars, shown earlier]`);
  }
  assert.deepEqual(contents.slice(-RECENT_TOOL_RESULTS), toolContents(ask(messages)).slice(-6));
  assert.ok(requestTokens(out.messages) <= 16384 - replyReserve(16384));
  assert.equal(notes.length, 1);
  assert.equal(notes[0]!.count, 4);
  assert.match(
    notes[0]!.note,
    /^\[context shortened\] To fit the context \(16,384 tokens, set by maxContext; 4,096 kept for the reply\): stubbed Read src\/f0\.ts \(5,000 chars\); stubbed Read src\/f1\.ts/,
  );
  // The loop's own messages are untouched: the history keeps everything.
  assert.equal((messages[3] as { content: string }).content.length, 5000);
});

Deno.test("fit: stubs stay from request to request, so each request extends the one before", () => {
  const { f, notes } = fitter(16384);
  const messages = conversation(10, 5000);
  const first = f.fit(ask(messages));
  messages.push(...conversation(11, 100).slice(-2));
  const second = f.fit(ask(messages));
  const prefix = JSON.stringify(first.messages).slice(0, -1);
  assert.ok(JSON.stringify(second.messages).startsWith(prefix), "the second extends the first");
  assert.equal(notes.length, 1, "no new shortening for a request that fits");
});

Deno.test("fit: the system prompt, the task and the newest user message are never shortened", () => {
  const task = "TASK ".repeat(3000);
  const messages: ChatMessage[] = [
    ...conversation(12, 4000, task),
    { role: "user", content: "FOLLOW ".repeat(1000) },
  ];
  const { f } = fitter(16384);
  const out = f.fit(ask(messages));
  assert.equal(out.messages[0], messages[0]);
  assert.equal(out.messages[1], messages[1]);
  assert.equal(out.messages.at(-1), messages.at(-1));
});

Deno.test("fit: when stubs are not enough, the oldest results keep head and tail, with a marker", () => {
  // Seven results of 20,000 chars (5k tokens each) under 16k: stubbing down to the newest three
  // leaves 15k tokens, so the oldest of those keep only their head and tail.
  const messages = conversation(7, 20_000);
  const { f, notes } = fitter(16384);
  const out = f.fit(ask(messages));
  const contents = toolContents(out);
  for (const i of [0, 1, 2, 3]) {
    assert.equal(contents[i], `[tool result of Read src/f${i}.ts: 20,000 chars, shown earlier]`);
  }
  const first = contents[4]!;
  assert.ok(first.startsWith("4:eeee"), "the head is kept");
  assert.ok(first.endsWith("eeee"), "the tail is kept");
  assert.match(
    first,
    /\n\[\.\.\. 1\d,\d{3} of 20,000 characters of this tool result left out to fit the model's context \.\.\.\]\n/,
  );
  // The newest result is elided last: it stays whole when the others suffice.
  assert.equal(contents.at(-1)!.length, 20_000);
  // Shortened until a quarter of the budget is free, so the next request fits as it is.
  assert.ok(requestTokens(out.messages) <= 9216);
  assert.match(notes[0]!.note, /kept the head and tail of Read src\/f4\.ts \(20,000 -> /);
});

Deno.test("fit: long arguments of old calls (a Write's content) are shortened with the stubs", () => {
  const messages = conversation(8, 3000);
  const write = messages[2] as Extract<ChatMessage, { role: "assistant" }>;
  write.tool_calls![0]!.function = {
    name: "Write",
    arguments: JSON.stringify({ file_path: "big.ts", content: "w".repeat(30_000) }),
  };
  const { f, notes } = fitter(16384);
  const out = f.fit(ask(messages));
  const call = (out.messages[2] as typeof write).tool_calls![0]!;
  assert.deepEqual(JSON.parse(call.function.arguments), {
    file_path: "big.ts",
    content: "[30,000 characters, left out to fit the model's context]",
  });
  assert.match(notes[0]!.note, /shortened the arguments of Write big\.ts/);
});

Deno.test("fit: a request that cannot fit fails with context_overflow, the numbers and the fixes", () => {
  const messages = conversation(2, 100, "x".repeat(60_000));
  const { f } = fitter(8192);
  let error: unknown;
  try {
    f.fit(ask(messages));
  } catch (e) {
    error = e;
  }
  assert.ok(error instanceof ContextOverflowError, String(error));
  assert.equal(error.cap.tokens, 8192);
  assert.match(
    error.message,
    /^context_overflow: the request needs about 15,\d{3} tokens \(chars\/4: system prompt and tools \d+, task and user messages 15,\d{3}, the model's replies \d+, tool results \d+\) plus 2,048 for the reply, but the context is capped at 8,192 tokens, set by maxContext\. The system prompt and the task are never cut\. To fix: raise maxContext .*, use a model with a larger context window, or give the job a shorter task/,
  );
  const model = new ContextFitter({ cap: { tokens: 8192, source: "model" }, sizeContext: true });
  assert.throws(
    () => model.fit(ask(messages)),
    /capped at 8,192 tokens, the model's maximum\. .* To fix: use a model with a larger context/,
  );
});

Deno.test("fit: stubbing makes room for several requests at once, so rewrites are rare", () => {
  const { f, notes } = fitter(8192);
  const messages = conversation(0, 0);
  for (let n = 1; n <= 20; n++) {
    // One more result of 3,000 chars per request, as a job reading file after file.
    messages.push(...conversation(n, 3000).slice(-2));
    const contents = toolContents(f.fit(ask(messages)));
    assert.deepEqual(contents.slice(-3), toolContents(ask(messages)).slice(-3), `request ${n}`);
  }
  // Over the budget from the 8th request on: stubbing one result each time would rewrite the
  // conversation (and lose the server's cached prefix) on 13 requests.
  assert.ok(notes.length > 0 && notes.length <= 5, `${notes.length} rewrites`);
});

Deno.test("fit: the context the model is loaded with is kept while it holds the request", () => {
  const loaded = (loadedContext: number, cap = 131072) =>
    new ContextFitter({ cap: { tokens: cap, source: "model" }, sizeContext: true, loadedContext })
      .fit(ask(conversation(1, 100))).numCtx;
  assert.equal(loaded(32768), 32768, "no reload for a model loaded with more");
  assert.equal(loaded(4096), 16384, "a context too small for the request grows");
  assert.equal(loaded(65536, 32768), 32768, "never past the cap");
});

const ask2 = (content: string): ChatMessage => ({ role: "user", content });
const say = (content: string): ChatMessage => ({ role: "assistant", content });

Deno.test("fit: when shortening tool output is not enough, the oldest whole exchanges after the task are left out, one note in their place", () => {
  // Three answers of 20,000 chars (5k tokens each) under 16k: the task and the newest two
  // exchanges would still be 10k tokens, over the 9k that leaves a quarter free.
  const messages: ChatMessage[] = [
    ...conversation(0, 0),
    ask2("Q1"),
    say("A1".padEnd(20_000, "a")),
    ask2("Q2"),
    say("A2".padEnd(20_000, "b")),
    ask2("Q3"),
    say("A3".padEnd(20_000, "c")),
    ask2("Q4"),
  ];
  const { f, notes } = fitter(16384);
  const out = f.fit(ask(messages));
  assert.deepEqual(out.messages.map((m) => String(m.content).slice(0, 2)), [
    "Yo",
    "fi",
    "[4",
    "Q3",
    "A3",
    "Q4",
  ]);
  assert.deepEqual(out.messages[2], {
    role: "assistant",
    content: "[4 earlier messages of this conversation are left out here to fit the model's " +
      "context; the task above is whole]",
  });
  assert.ok(requestTokens(out.messages) <= 9216);
  assert.equal(notes.length, 1);
  assert.match(
    notes[0]!.note,
    /^\[context shortened\] To fit the context \(16,384 tokens, set by maxContext; 4,096 kept for the reply\): left out 4 earlier messages of the oldest exchanges after the task \(40,\d{3} chars\)\./,
  );
  // Left out for the rest of the turn, without a new rewrite; the loop's messages are whole.
  messages.push(say("A4"));
  const next = f.fit(ask(messages));
  assert.deepEqual(next.messages.slice(0, -1), out.messages);
  assert.equal(notes.length, 1);
  assert.equal(messages.length, 10);
});

Deno.test("fit: the current exchange is never left out: a turn that outgrows the context fails", () => {
  const messages: ChatMessage[] = [
    ...conversation(0, 0),
    ask2("Q1"),
    say("A1"),
    ask2("Q2"),
    say("x".repeat(60_000)),
  ];
  const { f } = fitter(16384);
  assert.throws(() => f.fit(ask(messages)), ContextOverflowError);
});

Deno.test("fit: messages the follow-up's history left out are named by one note after the task", () => {
  const messages: ChatMessage[] = [...conversation(0, 0), ask2("Q9"), say("A9"), ask2("Q10")];
  const notes: string[] = [];
  const f = new ContextFitter({
    cap: { tokens: 1_048_576, source: "clamped", claimed: 1_000_000_000 },
    sizeContext: false,
    leftOut: { messages: 16, bytes: 31_920_480 },
    onShortened: (_count, note) => notes.push(note),
  });
  const out = f.fit(ask(messages));
  assert.deepEqual(out.messages.map((m) => String(m.content).slice(0, 3)), [
    "You",
    "fix",
    "[16",
    "Q9",
    "A9",
    "Q10",
  ]);
  assert.deepEqual(notes, [
    "[context shortened] To fit the context (1,048,576 tokens, the most a backend's claim is " +
    "taken for while maxContext is not set (it claims 1,000,000,000); 8,192 kept for the " +
    "reply): left out 16 earlier messages (31,920,480 bytes), older than what a follow-up " +
    "holds in memory. The system prompt and the task are whole; the job's history keeps " +
    "everything",
  ]);
  f.fit(ask([...messages, say("A10")]));
  assert.equal(notes.length, 1, "said once");
});

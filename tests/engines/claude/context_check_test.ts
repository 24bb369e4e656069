import assert from "node:assert/strict";
import { failureLine } from "../../../src/engines/backend_failures.ts";
import {
  CLAUDE_PROMPT_TOKENS,
  estimatePromptTokens,
  judgeTurn,
  refusalText,
  requiredContext,
  suggestedContext,
} from "../../../src/engines/claude/context_check.ts";
import type { Usage } from "../../../src/engines/types.ts";
import { DEFAULT_CLAUDE_TOOLS } from "../../../src/settings/types.ts";

const usage = (inputTokens: number, numTurns: number, cacheReadTokens = 0): Usage => ({
  inputTokens,
  outputTokens: 10,
  cacheReadTokens,
  cacheCreationTokens: 0,
  numTurns,
  durationMs: 100,
});

const lean = (taskChars = 40) =>
  estimatePromptTokens({ tools: DEFAULT_CLAUDE_TOOLS, permissionMode: "acceptEdits", taskChars });

Deno.test("estimate: the default tools come to the measured lean request (about 5.2k)", () => {
  const e = lean(9);
  // bench/first_request_bench.ts measured 5,157 prompt tokens for this request.
  assert.ok(e >= 5_100 && e <= 5_250, `${e}`);
  assert.ok(e < 6_000);
});

Deno.test("estimate: the task, the appended prompt, tools and plan mode add up", () => {
  const base = lean(0);
  assert.equal(lean(8_000), base + 2_000);
  assert.equal(
    estimatePromptTokens({
      tools: DEFAULT_CLAUDE_TOOLS,
      permissionMode: "acceptEdits",
      taskChars: 0,
      appendChars: 4_000,
    }),
    base + 1_000,
  );
  assert.equal(
    estimatePromptTokens({ tools: DEFAULT_CLAUDE_TOOLS, permissionMode: "plan", taskChars: 0 }),
    base + CLAUDE_PROMPT_TOKENS.planMode,
  );
  const none = estimatePromptTokens({ tools: [], permissionMode: "acceptEdits", taskChars: 0 });
  assert.equal(none, CLAUDE_PROMPT_TOKENS.base);
  const readOnly = estimatePromptTokens({
    tools: ["Read"],
    permissionMode: "acceptEdits",
    taskChars: 0,
  });
  assert.equal(readOnly, CLAUDE_PROMPT_TOKENS.base + CLAUDE_PROMPT_TOKENS.anyTool + 480);
  const unknown = estimatePromptTokens({
    tools: ["Read", "Frobnicate"],
    permissionMode: "acceptEdits",
    taskChars: 0,
  });
  assert.equal(unknown, readOnly + CLAUDE_PROMPT_TOKENS.unknownTool);
});

Deno.test("estimate: 'default' is Claude Code's whole set, about 12k", () => {
  const e = estimatePromptTokens({ tools: ["default"], permissionMode: "manual", taskChars: 400 });
  assert.equal(e, CLAUDE_PROMPT_TOKENS.defaultSet + 100);
  assert.ok(e > 12_000);
});

Deno.test("required and suggested contexts", () => {
  assert.equal(requiredContext(5_000), 5_500);
  assert.equal(requiredContext(5_157), 5_673);
  assert.equal(suggestedContext(5_673), 32_768);
  assert.equal(suggestedContext(32_768), 32_768);
  assert.equal(suggestedContext(32_769), 65_536);
  assert.equal(suggestedContext(100_000), 131_072);
});

Deno.test("refusal: a loaded context under the request, with the numbers and every fix", () => {
  const refused = refusalText({ model: "qwen3:8b", loadedContext: 4096, estimate: 5_157 });
  assert.ok(refused, "refused");
  // The kind as data, which the job layer moves to a fallback model on; its word leads the text.
  assert.equal(refused.kind, "context_overflow");
  const text = failureLine(refused);
  assert.match(text, /^context_overflow: Cannot start the claude engine with qwen3:8b: /);
  assert.match(text, /qwen3:8b/);
  assert.match(text, /4,096 tokens/);
  assert.match(text, /about 5,157 tokens/);
  assert.match(text, /5,673 with room to answer/);
  assert.match(text, /OLLAMA_CONTEXT_LENGTH=32768/);
  assert.match(text, /restart Ollama/);
  assert.match(text, /ollama-delegate models derive qwen3:8b --ctx 32768/);
  assert.match(text, /engine: "native"/);
});

Deno.test("refusal: none when the model is not loaded, fits, or is a cloud model", () => {
  assert.equal(
    refusalText({ model: "qwen3:8b", loadedContext: undefined, estimate: 5_157 }),
    undefined,
  );
  assert.equal(
    refusalText({ model: "qwen3:8b", loadedContext: 5_673, estimate: 5_157 }),
    undefined,
  );
  assert.equal(
    refusalText({ model: "qwen3:8b", loadedContext: 32_768, estimate: 5_157 }),
    undefined,
  );
  assert.ok(refusalText({ model: "qwen3:8b", loadedContext: 5_672, estimate: 5_157 }));
  assert.equal(
    refusalText({ model: "gpt-oss:120b-cloud", loadedContext: 4096, estimate: 5_157 }),
    undefined,
  );
  assert.equal(
    refusalText({ model: "kimi-k2:cloud", loadedContext: 4096, estimate: 5_157 }),
    undefined,
  );
});

Deno.test("after a turn: a report under half the request means Ollama cut it", () => {
  // What the emulator reports for a 4096 context: the tail of the last message, ~2k tokens.
  const v = judgeTurn({
    model: "qwen3:8b",
    estimate: 5_157,
    usage: usage(2_040, 1),
    loadedContext: 4096,
  });
  assert.equal(v?.kind, "cut");
  assert.match(v!.warning, /^Ollama cut the prompt: qwen3:8b is loaded with a context of 4,096/);
  assert.match(v!.warning, /about 2,040 input tokens per request \(2,040 over 1 request\)/);
  assert.match(v!.warning, /about 5,157 tokens/);
  assert.match(v!.warning, /OLLAMA_CONTEXT_LENGTH=32768/);
  assert.match(v!.warning, /models derive qwen3:8b --ctx 32768/);
  assert.match(v!.warning, /engine: "native"/);
  // The same report with the model unloaded since: the low number alone decides.
  const gone = judgeTurn({
    model: "qwen3:8b",
    estimate: 5_157,
    usage: usage(4_080, 2),
    loadedContext: undefined,
  });
  assert.equal(gone?.kind, "cut");
  assert.doesNotMatch(gone!.warning, /is loaded with/);
});

Deno.test("after a turn: requests at a loaded context smaller than the request were cut", () => {
  // Ollama dropped whole messages and kept the system prompt: the report sits at the context.
  const v = judgeTurn({
    model: "qwen3:8b",
    estimate: 5_157,
    usage: usage(3 * 5_300, 3),
    loadedContext: 5_400,
  });
  assert.equal(v?.kind, "cut");
});

Deno.test("after a turn: nothing to say when the requests fit", () => {
  const base = { model: "qwen3:8b", estimate: 5_157 };
  assert.equal(
    judgeTurn({ ...base, usage: usage(5_160, 1), loadedContext: 32_768 }),
    undefined,
  );
  assert.equal(
    judgeTurn({ ...base, usage: usage(3 * 6_000, 3), loadedContext: undefined }),
    undefined,
  );
  // A tokenizer that counts fewer tokens than chars/4 and a context a little under the margin.
  assert.equal(judgeTurn({ ...base, usage: usage(4_600, 1), loadedContext: 5_600 }), undefined);
  // A small report while the model is loaded with room to spare is Ollama's prompt cache
  // (it may count only the tokens it had to evaluate), not a cut.
  assert.equal(judgeTurn({ ...base, usage: usage(300, 2), loadedContext: 32_768 }), undefined);
  assert.equal(judgeTurn({ ...base, usage: undefined, loadedContext: 4096 }), undefined);
  assert.equal(judgeTurn({ ...base, usage: usage(0, 0), loadedContext: 4096 }), undefined);
});

Deno.test("after a turn: cached tokens count as read", () => {
  const v = judgeTurn({
    model: "qwen3:8b",
    estimate: 5_157,
    usage: usage(100, 1, 5_100),
    loadedContext: undefined,
  });
  assert.equal(v, undefined);
});

Deno.test("after a turn: requests that filled a large enough context get a warning only", () => {
  const v = judgeTurn({
    model: "qwen3:8b",
    estimate: 5_157,
    usage: usage(2 * 8_100, 2),
    loadedContext: 8_192,
  });
  assert.equal(v?.kind, "full");
  assert.match(v!.warning, /may have been cut/);
  assert.match(v!.warning, /OLLAMA_CONTEXT_LENGTH=32768/);
});

Deno.test("after a turn: each request is judged; a cut of the second is caught", () => {
  // Issue 29: a lean turn (1,227 tokens a request) read a 33 KB file; its second request
  // carried ~12.7k, Ollama at 4,096 kept ~2k of it. On average the turn looked whole.
  const base = { model: "qwen3:8b", estimate: 1_227, usage: usage(1_239 + 2_039, 2) };
  const requests = [{ reported: 1_239, added: 0 }, { reported: 2_039, added: 11_490 }];
  assert.equal(judgeTurn({ ...base, loadedContext: 4096 }), undefined, "the average alone");
  for (const loadedContext of [4096, undefined]) {
    const v = judgeTurn({ ...base, requests, loadedContext });
    assert.equal(v?.kind, "cut", `${loadedContext}`);
    assert.match(
      v!.warning,
      /about 2,039 input tokens of request 2 of 2, which carried about 12,729 tokens: every request of this engine is about 1,227 tokens, and what the turn read and wrote before it added about 11,502/,
    );
    assert.match(v!.warning, /OLLAMA_CONTEXT_LENGTH=32768/);
  }
  // The first request cut: worded as before, per request.
  const first = judgeTurn({
    model: "qwen3:8b",
    estimate: 5_157,
    usage: usage(2_040, 1),
    requests: [{ reported: 2_040, added: 0 }],
    loadedContext: 4096,
  });
  assert.match(
    first!.warning,
    /about 2,040 input tokens of request 1 of 1, and every request of this engine is about 5,157 tokens/,
  );
});

Deno.test("after a turn: a later request that reached the loaded context is a cut; one that grew and fit is not", () => {
  const base = { model: "qwen3:8b", estimate: 1_227 };
  // Whole messages dropped to fit 8,192: the report sits at the context.
  const atContext = [
    { reported: 1_300, added: 0 },
    { reported: 4_000, added: 2_700 },
    { reported: 8_150, added: 6_000 },
  ];
  const v = judgeTurn({
    ...base,
    usage: usage(13_450, 3),
    requests: atContext,
    loadedContext: 8_192,
  });
  assert.equal(v?.kind, "cut");
  assert.match(v!.warning, /request 3 of 3, which carried about 10,000 tokens/);
  // The same growth in a context that holds it: nothing to say, also with a prompt cache that
  // made Ollama count the later requests a little short of chars/4.
  const grew = [
    { reported: 1_300, added: 0 },
    { reported: 3_600, added: 2_700 },
    { reported: 9_200, added: 6_000 },
  ];
  assert.equal(
    judgeTurn({ ...base, usage: usage(14_100, 3), requests: grew, loadedContext: 32_768 }),
    undefined,
  );
  // A subagent's or an unknown request reports nothing: judged on what is known.
  assert.equal(
    judgeTurn({
      ...base,
      usage: usage(1_300, 2),
      requests: [{ reported: 1_300, added: 0 }, { reported: 0, added: 50 }],
      loadedContext: 4096,
    }),
    undefined,
  );
});

Deno.test("after a turn: cloud models are never judged", () => {
  assert.equal(
    judgeTurn({
      model: "gpt-oss:120b-cloud",
      estimate: 5_157,
      usage: usage(10, 1),
      loadedContext: undefined,
    }),
    undefined,
  );
});

Deno.test("after a turn: reports above the loaded context mean nothing was cut", () => {
  assert.equal(
    judgeTurn({ model: "qwen3:8b", estimate: 5_157, usage: usage(7_229, 1), loadedContext: 4096 }),
    undefined,
  );
});

Deno.test("estimate: Claude Code's sandbox adds its description (about 7.1k in all)", () => {
  const on = estimatePromptTokens({
    tools: DEFAULT_CLAUDE_TOOLS,
    permissionMode: "acceptEdits",
    taskChars: 11,
    sandbox: true,
  });
  assert.equal(on, lean(11) + CLAUDE_PROMPT_TOKENS.sandbox);
  // bench/first_request_bench.ts measured 7,096 prompt tokens through the server.
  assert.ok(on >= 7_000 && on <= 7_200, `${on}`);
});

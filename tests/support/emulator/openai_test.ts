import { withEmulator } from "./emulator.ts";
import assert from "node:assert/strict";
import { withStandaloneEmulator } from "./standalone.ts";
import {
  type ChatRequestView,
  type EmulatorOptions,
  type OllamaEmulator,
  startOllamaEmulator,
} from "./emulator.ts";

const RETIRED = "glm-4.7 was retired at 2026-07-15 00:00:00 -0700 PDT (ref: 0b5e6c1a)";
const MODELS: EmulatorOptions["models"] = [
  { name: "qwen3:8b" },
  { name: "gemma2:2b", capabilities: ["completion"] },
  { name: "glm-5:cloud" },
  { name: "glm-4.7:cloud", retiredText: RETIRED },
];
const CHAT = "/v1/chat/completions";

type Json = Record<string, unknown>;

function post(
  emu: OllamaEmulator,
  body: unknown,
  init: { signal?: AbortSignal; headers?: Record<string, string> } = {},
) {
  return fetch(emu.url + CHAT, {
    method: "POST",
    headers: { "content-type": "application/json", ...init.headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
    signal: init.signal,
  });
}

async function getJson(res: Response): Promise<Json> {
  assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
  const body: unknown = await res.json();
  assert.ok(typeof body === "object" && body !== null && !Array.isArray(body));
  return body as Json;
}

const BASH_TOOL = {
  type: "function",
  function: {
    name: "Bash",
    description: "Run a shell command",
    parameters: { type: "object", properties: { command: { type: "string" } } },
  },
};
const READ_TOOL = {
  type: "function",
  function: {
    name: "Read",
    description: "Read a file",
    parameters: { type: "object", properties: { file_path: { type: "string" } } },
  },
};

function chatBody(content: string, extra: Json = {}): Json {
  return { model: "qwen3:8b", messages: [{ role: "user", content }], ...extra };
}

/** Parses an OpenAI stream strictly: every frame is one `data:` line, the last is [DONE]. */
function parseStream(text: string): Json[] {
  assert.ok(text.endsWith("data: [DONE]\n\n"), `the stream ends with [DONE]: ${text.slice(-80)}`);
  const frames = text.slice(0, -2).split("\n\n");
  assert.equal(frames.pop(), "data: [DONE]");
  return frames.map((f) => {
    assert.ok(f.startsWith("data: ") && !f.includes("\n"), `one data line per frame: ${f}`);
    return JSON.parse(f.slice("data: ".length)) as Json;
  });
}

function choiceOf(chunk: Json): Json {
  const choices = chunk.choices as Json[];
  assert.equal(choices.length, 1);
  return choices[0]!;
}

/** The text of a stream's content deltas. */
function contentOf(chunks: Json[]): string {
  return chunks.filter((c) => (c.choices as Json[]).length > 0)
    .map((c) => (choiceOf(c).delta as Json).content ?? "").join("");
}

function assertOpenAiError(body: Json, type: string, message: string): void {
  assert.deepEqual(body, { error: { message, type, param: null, code: null } });
}

async function waitUntil(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

// --- streaming --------------------------------------------------------------------------------

Deno.test("chat stream: role first, content over several chunks, finish chunk, [DONE]", async () => {
  await withEmulator({ models: MODELS }, async (emu) => {
    const prompt = "tell me something fairly long so that it is split";
    const res = await post(emu, chatBody(prompt, { stream: true }));
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "text/event-stream");
    const chunks = parseStream(await res.text());
    assert.ok(chunks.length >= 4, `several content chunks and a finish chunk: ${chunks.length}`);
    const [first] = chunks;
    assert.match(String(first!.id), /^chatcmpl-\d{1,3}$/);
    assert.ok(Number.isInteger(first!.created));
    for (const c of chunks) {
      assert.equal(c.object, "chat.completion.chunk");
      assert.equal(c.id, first!.id);
      assert.equal(c.created, first!.created, "all chunks share one created");
      assert.equal(c.model, "qwen3:8b");
      assert.equal(c.system_fingerprint, "fp_ollama");
      assert.ok(!("usage" in c), "no usage unless include_usage");
    }
    const content = chunks.slice(0, -1).map(choiceOf);
    assert.equal((content[0]!.delta as Json).role, "assistant");
    for (const c of content.slice(1)) assert.ok(!("role" in (c.delta as Json)));
    for (const c of content) {
      assert.equal(c.index, 0);
      assert.equal(c.finish_reason, null);
      assert.ok(!("tool_calls" in (c.delta as Json)));
    }
    assert.equal(content.map((c) => (c.delta as Json).content).join(""), `echo: ${prompt}`);
    assert.deepEqual(choiceOf(chunks.at(-1)!), { index: 0, delta: {}, finish_reason: "stop" });
  });
});

Deno.test("chat stream: include_usage adds a usage chunk with empty choices before [DONE]", async () => {
  await withEmulator({ models: MODELS }, async (emu) => {
    const small = chatBody("@reply ok", { stream: true, stream_options: { include_usage: true } });
    const chunks = parseStream(await (await post(emu, small)).text());
    const last = chunks.at(-1)!;
    assert.deepEqual(last.choices, []);
    const usage = last.usage as Json;
    assert.deepEqual(Object.keys(usage).sort(), [
      "completion_tokens",
      "prompt_tokens",
      "total_tokens",
    ]);
    assert.equal(
      usage.prompt_tokens,
      Math.ceil(JSON.stringify(small.messages).length / 4),
      "prompt tokens are chars/4 of the messages JSON",
    );
    assert.equal(usage.completion_tokens, 1);
    assert.equal(usage.total_tokens, Number(usage.prompt_tokens) + 1);
    assert.equal(choiceOf(chunks.at(-2)!).finish_reason, "stop");
    assert.equal(last.created, chunks[0]!.created);

    // Tools count towards the prompt, so a test can compare request sizes.
    const big = { ...small, tools: [BASH_TOOL, READ_TOOL] };
    const bigUsage = parseStream(await (await post(emu, big)).text()).at(-1)!.usage as Json;
    assert.equal(
      bigUsage.prompt_tokens,
      Math.ceil((JSON.stringify(small.messages).length + JSON.stringify(big.tools).length) / 4),
    );

    // include_usage false is the same as absent.
    const off = parseStream(
      await (await post(emu, { ...small, stream_options: { include_usage: false } })).text(),
    );
    assert.equal(choiceOf(off.at(-1)!).finish_reason, "stop");
    assert.ok(!off.some((c) => "usage" in c));
  });
});

Deno.test("chat stream: each tool call arrives whole in one delta", async () => {
  const script = () => ({
    kind: "tool_calls" as const,
    text: "Let me look.",
    calls: [
      { name: "Read", arguments: { file_path: "/etc/hosts" } },
      { name: "Bash", arguments: { command: "echo 'a \"quoted\" arg'", timeout: 5 } },
    ],
  });
  await withEmulator({ models: MODELS, chatScript: script }, async (emu) => {
    const res = await post(
      emu,
      chatBody("go", {
        stream: true,
        tools: [BASH_TOOL, READ_TOOL],
        stream_options: { include_usage: true },
      }),
    );
    const chunks = parseStream(await res.text());
    const usage = chunks.pop()!;
    assert.deepEqual(usage.choices, []);
    assert.deepEqual(choiceOf(chunks.pop()!), {
      index: 0,
      delta: {},
      finish_reason: "tool_calls",
    });
    const deltas = chunks.map((c) => choiceOf(c).delta as Json);
    const text = deltas.filter((d) => "content" in d).map((d) => d.content).join("");
    assert.equal(text, "Let me look.");
    const toolDeltas = deltas.filter((d) => "tool_calls" in d);
    assert.equal(toolDeltas.length, 2, "one delta per tool call");
    // Tool calls come after the text.
    assert.ok(deltas.findIndex((d) => "tool_calls" in d) > deltas.findLastIndex((d) => d.content));
    const calls = toolDeltas.map((d) => {
      const list = d.tool_calls as Json[];
      assert.equal(list.length, 1);
      return list[0]!;
    });
    const ids = new Set<unknown>();
    calls.forEach((c, i) => {
      assert.deepEqual(Object.keys(c).sort(), ["function", "id", "index", "type"]);
      assert.match(String(c.id), /^call_[a-z0-9]{8}$/);
      ids.add(c.id);
      assert.equal(c.index, i);
      assert.equal(c.type, "function");
      assert.equal(typeof (c.function as Json).arguments, "string");
    });
    assert.equal(ids.size, 2);
    assert.deepEqual(calls.map((c) => c.function), [
      { name: "Read", arguments: JSON.stringify({ file_path: "/etc/hosts" }) },
      {
        name: "Bash",
        arguments: JSON.stringify({ command: "echo 'a \"quoted\" arg'", timeout: 5 }),
      },
    ]);

    // Without text the first delta carries the role, empty content and the first call.
    emu.setChatScript(() => ({ kind: "tool_calls", calls: [{ name: "Read", arguments: {} }] }));
    const bare = parseStream(
      await (await post(emu, chatBody("go", { stream: true, tools: [READ_TOOL] }))).text(),
    );
    assert.equal(bare.length, 2);
    const delta = choiceOf(bare[0]!).delta as Json;
    assert.equal(delta.role, "assistant");
    assert.equal(delta.content, "");
    assert.deepEqual((delta.tool_calls as Json[]).map((c) => c.function), [
      { name: "Read", arguments: "{}" },
    ]);
  });
});

Deno.test("chat: non-streaming reply is a chat.completion with usage", async () => {
  await withEmulator({ models: MODELS }, async (emu) => {
    const res = await post(emu, chatBody("hello there"));
    assert.equal(res.status, 200);
    const body = await getJson(res);
    assert.match(String(body.id), /^chatcmpl-\d{1,3}$/);
    assert.equal(body.object, "chat.completion");
    assert.equal(body.model, "qwen3:8b");
    assert.equal(body.system_fingerprint, "fp_ollama");
    assert.ok(Math.abs(Number(body.created) - Date.now() / 1000) < 60);
    assert.deepEqual(body.choices, [{
      index: 0,
      message: { role: "assistant", content: "echo: hello there" },
      finish_reason: "stop",
    }]);
    const usage = body.usage as Json;
    assert.equal(usage.total_tokens, Number(usage.prompt_tokens) + Number(usage.completion_tokens));
    assert.ok(Number(usage.prompt_tokens) > 0 && Number(usage.completion_tokens) > 0);

    emu.setChatScript(() => ({
      kind: "tool_calls",
      calls: [{ name: "Bash", arguments: { command: "ls" } }],
    }));
    const tool = await getJson(await post(emu, chatBody("x", { tools: [BASH_TOOL] })));
    const choice = (tool.choices as Json[])[0]!;
    assert.equal(choice.finish_reason, "tool_calls");
    const message = choice.message as Json;
    assert.equal(message.content, "");
    const [call] = message.tool_calls as Json[];
    assert.match(String(call!.id), /^call_[a-z0-9]{8}$/);
    assert.equal(call!.index, 0);
    assert.equal(call!.type, "function");
    assert.deepEqual(call!.function, { name: "Bash", arguments: '{"command":"ls"}' });
  });
});

// --- errors -----------------------------------------------------------------------------------

Deno.test("chat errors: 404 unknown, 410 retired, 400 tools and orphan tool result", async () => {
  await withEmulator({ models: MODELS }, async (emu) => {
    const unknown = await post(emu, chatBody("x", { model: "nope:1b", stream: true }));
    assert.equal(unknown.status, 404);
    assertOpenAiError(await getJson(unknown), "not_found_error", 'model "nope:1b" not found');

    const retired = await post(emu, chatBody("x", { model: "glm-4.7:cloud", stream: true }));
    assert.equal(retired.status, 410);
    assert.deepEqual(await getJson(retired), { error: RETIRED });

    const noTools = await post(emu, chatBody("x", { model: "gemma2:2b", tools: [BASH_TOOL] }));
    assert.equal(noTools.status, 400);
    assertOpenAiError(
      await getJson(noTools),
      "invalid_request_error",
      "registry.ollama.ai/library/gemma2:2b does not support tools",
    );
    const plain = await post(emu, chatBody("x", { model: "gemma2:2b" }));
    assert.equal(plain.status, 200);
    await plain.body?.cancel();

    const orphan = await post(emu, {
      model: "qwen3:8b",
      messages: [
        { role: "user", content: "x" },
        {
          role: "assistant",
          content: "",
          tool_calls: [{
            id: "call_aaaaaaaa",
            type: "function",
            function: { name: "Bash", arguments: "{}" },
          }],
        },
        { role: "tool", tool_call_id: "call_aaaaaaaa", content: "ok" },
        { role: "tool", tool_call_id: "call_zzzzzzzz", content: "stray" },
      ],
    });
    assert.equal(orphan.status, 400);
    assertOpenAiError(
      await getJson(orphan),
      "invalid_request_error",
      'invalid tool message: tool_call_id "call_zzzzzzzz" answers no earlier assistant tool call',
    );

    const badJson = await post(emu, "{not json");
    assert.equal(badJson.status, 400);
    assertOpenAiError(await getJson(badJson), "invalid_request_error", "invalid request body");
    const noModel = await post(emu, { messages: [{ role: "user", content: "x" }] });
    assert.equal(noModel.status, 400);
    assertOpenAiError(await getJson(noModel), "invalid_request_error", "model is required");

    const wrongMethod = await fetch(emu.url + CHAT);
    assert.equal(wrongMethod.status, 404);
    assert.equal(await wrongMethod.text(), "404 page not found");
  });
});

Deno.test("chat script errors: OpenAI error types by status, Retry-After when asked", async () => {
  const cases: [number, string][] = [
    [400, "invalid_request_error"],
    [401, "api_error"],
    [404, "not_found_error"],
    [429, "api_error"],
    [500, "api_error"],
    [503, "api_error"],
  ];
  await withEmulator({ models: MODELS }, async (emu) => {
    for (const [status, type] of cases) {
      emu.setChatScript(() => ({
        kind: "error",
        status,
        message: `boom ${status}`,
        retryAfter: "3",
      }));
      const res = await post(emu, chatBody("x", { stream: true }));
      assert.equal(res.status, status);
      assert.equal(res.headers.get("retry-after"), "3");
      assertOpenAiError(await getJson(res), type, `boom ${status}`);
    }
    emu.setChatScript(() => ({ kind: "error", status: 502, message: "no header" }));
    const res = await post(emu, chatBody("x"));
    assert.equal(res.headers.get("retry-after"), null);
    await res.body?.cancel();

    emu.setChatScript(() => {
      throw new Error("script exploded");
    });
    const broken = await post(emu, chatBody("x"));
    assert.equal(broken.status, 500);
    assert.match(String(((await getJson(broken)).error as Json).message), /script exploded/);
  });
});

Deno.test("@fail fails the first requests of a conversation, with Retry-After", async () => {
  await withEmulator({ models: MODELS }, async (emu) => {
    const prompt = "@fail 503 2\n@reply finally";
    for (let i = 0; i < 2; i++) {
      const res = await post(emu, chatBody(prompt, { stream: true }));
      assert.equal(res.status, 503, `attempt ${i + 1}`);
      assert.equal(res.headers.get("retry-after"), "0");
      assertOpenAiError(
        await getJson(res),
        "api_error",
        "server busy, please try again.  maximum pending requests exceeded",
      );
    }
    const ok = await post(emu, chatBody(prompt, { stream: true }));
    assert.equal(ok.status, 200);
    const chunks = parseStream(await ok.text());
    assert.equal(contentOf(chunks), "finally");

    // Another conversation on the same emulator is counted separately.
    const other = await post(emu, chatBody("@fail 429 1\n@retry-after 7"));
    assert.equal(other.status, 429);
    assert.equal(other.headers.get("retry-after"), "7");
    assertOpenAiError(await getJson(other), "api_error", "emulated failure (HTTP 429)");
    const otherOk = await post(emu, chatBody("@fail 429 1\n@retry-after 7"));
    assert.equal(otherOk.status, 200);
    await otherOk.body?.cancel();

    const noHeader = await post(emu, chatBody("@fail 500 1\n@retry-after none"));
    assert.equal(noHeader.status, 500);
    assert.equal(noHeader.headers.get("retry-after"), null);
    await noHeader.body?.cancel();

    const typo = await post(emu, chatBody("@fail soon"));
    assert.equal(typo.status, 500);
    assert.match(String(((await getJson(typo)).error as Json).message), /@fail <status> <count>/);
  });
});

// --- directives and scripts -------------------------------------------------------------------

interface WireCall {
  id: string;
  type: string;
  function: { name: string; arguments: string };
}

async function completion(emu: OllamaEmulator, messages: unknown[], tools: unknown[]) {
  const res = await post(emu, { model: "qwen3:8b", messages, tools });
  assert.equal(res.status, 200);
  const choice = ((await getJson(res)).choices as Json[])[0]!;
  return {
    finish: choice.finish_reason,
    message: choice.message as { role: string; content: string; tool_calls?: WireCall[] },
  };
}

Deno.test("@tool and @bash are issued in order, each after the previous result", async () => {
  await withEmulator({ models: MODELS }, async (emu) => {
    const user = {
      role: "user",
      content: 'please\n@tool Read {"file_path": "/tmp/a b.txt"}\n  @bash echo two\n',
    };
    const tools = [BASH_TOOL, READ_TOOL];
    const first = await completion(emu, [user], tools);
    assert.equal(first.finish, "tool_calls");
    assert.equal(first.message.tool_calls?.length, 1);
    const call1 = first.message.tool_calls![0]!;
    assert.deepEqual(call1.function, { name: "Read", arguments: '{"file_path":"/tmp/a b.txt"}' });

    // Asking again without a result repeats the pending call rather than skipping it.
    const again = await completion(emu, [user], tools);
    assert.deepEqual(again.message.tool_calls![0]!.function, call1.function);

    const round1 = [
      user,
      first.message,
      { role: "tool", tool_call_id: call1.id, content: "contents of a" },
    ];
    const second = await completion(emu, round1, tools);
    const call2 = second.message.tool_calls![0]!;
    assert.deepEqual(call2.function, { name: "Bash", arguments: '{"command":"echo two"}' });

    const long = "two\n" + "x".repeat(500);
    const round2 = [
      ...round1,
      second.message,
      { role: "tool", tool_call_id: call2.id, content: [{ type: "text", text: long }] },
    ];
    const third = await completion(emu, round2, tools);
    assert.equal(third.finish, "stop");
    assert.equal(third.message.tool_calls, undefined);
    assert.equal(third.message.content, `done: ${long.slice(0, 200)}`);

    // A request without tools (a side query) only ever gets text.
    const side = await completion(emu, [user], []);
    assert.equal(side.message.content, "echo: please");

    // @reply replaces the final text.
    const withReply = { role: "user", content: "@bash true\n@reply all good" };
    const r1 = await completion(emu, [withReply], tools);
    const id = r1.message.tool_calls![0]!.id;
    const r2 = await completion(
      emu,
      [withReply, r1.message, { role: "tool", tool_call_id: id, content: "" }],
      tools,
    );
    assert.equal(r2.message.content, "all good");
  });
});

Deno.test("the chat script sees model, tool names, results, headers and request numbers", async () => {
  const seen: ChatRequestView[] = [];
  await withEmulator({
    models: MODELS,
    chatScript: (view) => {
      seen.push(view);
      return undefined;
    },
  }, async (emu) => {
    const messages = [
      { role: "system", content: "be brief" },
      {
        role: "user",
        content: [{ type: "text", text: "part one" }, { type: "text", text: "two" }],
      },
      {
        role: "assistant",
        content: null,
        tool_calls: [{
          id: "call_12345678",
          type: "function",
          function: { name: "Read", arguments: "{}" },
        }],
      },
      { role: "tool", tool_call_id: "call_12345678", content: "file text" },
    ];
    const res = await post(emu, { model: "qwen3:8b", messages, tools: [BASH_TOOL, READ_TOOL] }, {
      headers: { Authorization: "Bearer k1", "X-Custom": "v" },
    });
    assert.equal(res.status, 200);
    const body = await getJson(res);
    const message = (body.choices as Json[])[0]!.message as Json;
    assert.equal(message.content, "done: file text", "undefined falls back to the directives");
    await (await post(emu, chatBody("other", { stream: true }))).body?.cancel();
    await (await post(emu, chatBody("other"))).body?.cancel();
  });
  assert.equal(seen.length, 3);
  const [v1, v2, v3] = seen;
  assert.equal(v1!.model, "qwen3:8b");
  assert.deepEqual(v1!.tools, ["Bash", "Read"]);
  assert.equal(v1!.firstUserText, "part one\ntwo");
  assert.equal(v1!.messages.length, 4);
  assert.equal(v1!.stream, false);
  assert.deepEqual(v1!.toolResults, [
    { toolCallId: "call_12345678", name: "Read", content: "file text" },
  ]);
  assert.equal(v1!.headers["authorization"], "Bearer k1");
  assert.equal(v1!.headers["x-custom"], "v");
  assert.deepEqual(
    seen.map((v) => [v.requestNumber, v.conversationRequestNumber]),
    [[1, 1], [2, 1], [3, 2]],
  );
  assert.equal(v2!.stream, true);
  assert.deepEqual(v3!.tools, []);
});

Deno.test("@delay delays the whole response; @hang waits for the client to go away", async () => {
  await withEmulator({ models: MODELS }, async (emu) => {
    const started = Date.now();
    const res = await post(emu, chatBody("@delay 150\n@reply late", { stream: true }));
    assert.ok(Date.now() - started >= 140, "no headers before the delay");
    const chunks = parseStream(await res.text());
    assert.equal(contentOf(chunks), "late");

    const ac = new AbortController();
    const pending = post(emu, chatBody("@hang"), { signal: ac.signal });
    await waitUntil(() => emu.chatRequests().length === 2, "the hanging request");
    let settled = false;
    void pending.then(() => settled = true, () => settled = true);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(settled, false, "a hanging request gets no answer");
    ac.abort();
    await assert.rejects(pending);
  });
});

Deno.test("close() answers a hanging chat request with 503 and cuts a slow stream", async () => {
  const emu = await startOllamaEmulator({
    chatScript: (v) =>
      v.firstUserText === "slow"
        ? { kind: "text", text: "abcdefghij", chunkChars: 1, chunkDelayMs: 60_000 }
        : { kind: "hang" },
  });
  const hanging = post(emu, chatBody("hang"));
  const slow = await post(emu, chatBody("slow", { stream: true }));
  assert.equal(slow.status, 200);
  const reading = slow.text();
  await waitUntil(() => emu.chatRequests().length === 2, "both requests");
  const started = Date.now();
  await emu.close();
  assert.ok(Date.now() - started < 5000, "close() does not wait");
  const res = await hanging;
  assert.equal(res.status, 503);
  assert.equal(((await getJson(res)).error as Json).type, "api_error");
  // The stream stops after the first chunk, without a finish chunk or [DONE].
  const text = await reading;
  assert.ok(!text.includes("[DONE]"), text);
  const frames = text.trim().split("\n\n");
  assert.equal(frames.length, 1);
  assert.equal((choiceOf(JSON.parse(frames[0]!.slice(6))).delta as Json).content, "a");
});

Deno.test("@chunk-delay streams slowly and a client can cancel mid-stream", async () => {
  await withEmulator({ models: MODELS }, async (emu) => {
    const started = Date.now();
    const res = await post(emu, chatBody("@chunk-delay 40\n@reply 1234", { stream: true }));
    const chunks = parseStream(await res.text());
    assert.ok(Date.now() - started >= 110, "three waits between four content chunks");
    assert.equal(contentOf(chunks), "1234");

    emu.setChatScript(() => ({
      kind: "text",
      text: "x".repeat(50),
      chunkChars: 1,
      chunkDelayMs: 50,
    }));
    const slow = await post(emu, chatBody("y", { stream: true }));
    const reader = slow.body!.getReader();
    const first = await reader.read();
    assert.ok(!first.done);
    assert.ok(new TextDecoder().decode(first.value).startsWith("data: {"));
    await reader.cancel();
  });
});

// --- recording, several emulators, /v1/models -------------------------------------------------

Deno.test("two emulators at once record which Authorization reached which", async () => {
  const a = await startOllamaEmulator();
  const b = await startOllamaEmulator();
  try {
    assert.notEqual(a.port, b.port);
    const resA = await post(a, chatBody("to a"), { headers: { Authorization: "Bearer key-a" } });
    const resB = await post(b, chatBody("to b", { stream: true }), {
      headers: { Authorization: "Bearer key-b" },
    });
    await resA.body?.cancel();
    await resB.body?.cancel();
    await (await fetch(a.url + "/v1/models")).body?.cancel();

    assert.equal(a.requests.length, 2);
    const [recA] = a.chatRequests();
    const [recB] = b.chatRequests();
    assert.equal(a.chatRequests().length, 1);
    assert.equal(b.chatRequests().length, 1);
    assert.equal(recA!.path, CHAT);
    assert.equal(recA!.method, "POST");
    assert.equal(recA!.headers["authorization"], "Bearer key-a");
    assert.equal(recB!.headers["authorization"], "Bearer key-b");
    assert.equal(recA!.headers["content-type"], "application/json");
    assert.deepEqual(recA!.json, chatBody("to a"));
    assert.deepEqual(recB!.json, chatBody("to b", { stream: true }));
    assert.ok(Math.abs(recA!.at - Date.now()) < 60_000);
  } finally {
    await a.close();
    await b.close();
  }
});

Deno.test("/v1/models follows setModels and lists what /api/tags lists", async () => {
  await withEmulator({ models: MODELS }, async (emu) => {
    emu.setModels([{ name: "mistral:7b" }, { name: "me/tuned" }, { name: "kimi-k2:1t-cloud" }]);
    const models = await getJson(await fetch(emu.url + "/v1/models"));
    const tags = await getJson(await fetch(emu.url + "/api/tags"));
    const data = models.data as Json[];
    assert.equal(models.object, "list");
    assert.deepEqual(data.map((d) => d.id), (tags.models as Json[]).map((m) => m.name));
    assert.deepEqual(data.map((d) => [d.id, d.object, d.owned_by]), [
      ["mistral:7b", "model", "library"],
      ["me/tuned:latest", "model", "me"],
      ["kimi-k2:1t-cloud", "model", "library"],
    ]);
    const gone = await post(emu, chatBody("x"));
    assert.equal(gone.status, 404);
    await gone.body?.cancel();
  });
});

Deno.test("standalone mode serves chat completions and exits on stdin EOF", async () => {
  await withStandaloneEmulator([], async (url) => {
    const res = await fetch(url + CHAT, {
      method: "POST",
      body: JSON.stringify(chatBody("@reply standalone")),
    });
    const body = await getJson(res);
    assert.equal(((body.choices as Json[])[0]!.message as Json).content, "standalone");
  });
});

/**
 * The corpus of real replies with tool calls written as text (tests/support/real_text_calls.ts),
 * table-driven through the native loop over both chat clients (Ollama's `/api/chat` and the
 * OpenAI-compatible `/v1/chat/completions`) against the emulator: each sample whose call maps
 * onto an offered tool runs, every other gets a correction, none ends silently; and prose that
 * only mentions tool syntax (the labelled corpus's non-calls) runs nothing.
 */
import assert from "node:assert/strict";
import { OllamaChatClient } from "../../../src/backends/ollama/chat.ts";
import type { ChatMessage } from "../../../src/backends/chat_types.ts";
import { runLoop } from "../../../src/engines/native/loop.ts";
import type { ToolName } from "../../../src/engines/native/tools/types.ts";
import { startOllamaEmulator } from "../../support/emulator/emulator.ts";
import { REAL_TEXT_CALLS, type RealSample, renamedText } from "../../support/real_text_calls.ts";
import { CORPUS_TOOLS, TEXT_CALL_CORPUS } from "../../support/text_call_corpus.ts";
import { assertEveryCallAnswered, harness, testTool } from "./support/loop_harness.ts";

const FINAL = "Done.";

interface Row {
  id: string;
  text: string;
  expect: RealSample["expect"];
}

const ROWS: Row[] = [
  ...REAL_TEXT_CALLS.map((s) => ({ id: s.id, text: renamedText(s), expect: s.expect })),
  // Prose that quotes or explains tool syntax, JSON that is no call: the answer, as written.
  ...TEXT_CALL_CORPUS.filter((c) => c.calls.length === 0 && !c.refused).map((c) => ({
    id: `labelled:${c.id}`,
    text: c.text,
    expect: "answer" as const,
  })),
];

/** What one row did through the loop. */
async function replay(url: string, api: "openai" | "native", row: Row) {
  const ran: Array<{ name: string; arguments: Record<string, unknown> }> = [];
  const tools = CORPUS_TOOLS.map((t) =>
    testTool(t.name as ToolName, false, (input) => {
      ran.push({ name: t.name, arguments: input });
      return { text: `${t.name} ran` };
    }, t.parameters)
  );
  const h = harness(url, tools);
  if (api === "native") h.deps.client = new OllamaChatClient({ baseUrl: url, label: "ollama" });
  const messages: ChatMessage[] = [{ role: "user", content: `sample ${row.id}` }];
  const result = await runLoop(messages, h.deps);
  const corrected = messages.some((m) =>
    (m.role === "tool" && (m.content ?? "").startsWith("Error: not run")) ||
    (m.role === "user" && (m.content ?? "").startsWith("[ollama-delegate]"))
  );
  return {
    result,
    ran,
    corrected,
    messages,
    requests: messages.filter((m) => m.role === "assistant").length,
  };
}

for (const api of ["native", "openai"] as const) {
  Deno.test(`real text calls (${api}): each sample runs what maps onto an offered tool, the rest is corrected, nothing ends silently`, async () => {
    const byText = new Map(ROWS.map((r) => [`sample ${r.id}`, r]));
    const emu = await startOllamaEmulator({
      models: [{ name: "qwen3:8b" }],
      chatScript: (view) => {
        const row = byText.get(view.firstUserText);
        if (!row) return undefined;
        return { kind: "text", text: view.conversationRequestNumber === 1 ? row.text : FINAL };
      },
    });
    const wrong: string[] = [];
    try {
      for (const row of ROWS) {
        const got = await replay(emu.url, api, row);
        const say = (what: string) => wrong.push(`${row.id}: ${what}`);
        if (!got.result.ok) say(`failed: ${got.result.errorText}`);
        assertEveryCallAnswered(got.messages);
        if (row.expect === "answer") {
          if (got.result.text !== row.text) {
            say(`answer changed: ${JSON.stringify(got.result.text)}`);
          }
          if (got.ran.length > 0 || got.corrected || got.requests !== 1) {
            say(`an answer ran ${got.ran.length} calls, corrected ${got.corrected}`);
          }
          continue;
        }
        if (JSON.stringify(got.ran) !== JSON.stringify(row.expect.runs)) {
          say(`ran ${JSON.stringify(got.ran)}, expected ${JSON.stringify(row.expect.runs)}`);
        }
        if (got.corrected !== row.expect.corrected) say(`corrected: ${got.corrected}`);
        // Never silent: the reply was not taken for the answer.
        if (got.requests < 2 || got.result.text !== FINAL) say("ended on the call's text");
      }
    } finally {
      await emu.close();
    }
    assert.deepEqual(wrong, []);
  });
}

Deno.test("real text calls: the corpus holds 40+ verbatim samples from 8+ model families, each with its source", () => {
  assert.ok(REAL_TEXT_CALLS.length >= 40, `${REAL_TEXT_CALLS.length} samples`);
  const families = new Set(REAL_TEXT_CALLS.map((s) => s.family).filter((f) => f !== "unknown"));
  assert.ok(families.size >= 8, [...families].join(", "));
  assert.equal(new Set(REAL_TEXT_CALLS.map((s) => s.id)).size, REAL_TEXT_CALLS.length);
  for (const s of REAL_TEXT_CALLS) {
    assert.ok(s.source.includes("github.com"), `${s.id}: a source one can open`);
    assert.ok(s.model !== "" && s.intended !== "", s.id);
    // A rename touches only names the text has: it cannot invent a call.
    for (const from of Object.keys(s.rename ?? {})) {
      assert.ok(s.text.includes(from), `${s.id}: ${from}`);
    }
  }
  const kinds = REAL_TEXT_CALLS.map((s) =>
    s.expect === "answer" ? "answer" : s.expect.corrected ? "corrected" : "runs"
  );
  assert.ok(kinds.filter((k) => k === "runs").length >= 20);
  assert.ok(kinds.filter((k) => k === "corrected").length >= 10);
});

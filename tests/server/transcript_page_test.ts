/**
 * delegate_transcript paging: pages of a 50 MB Claude stream cost about their
 * own bytes, follow each other without losing or repeating an entry, keep to their byte
 * budget and cut long fields with a note; native transcripts page the same way.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import assert from "node:assert/strict";
import {
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { closeSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { TranscriptEntry } from "../../src/engines/types.ts";
import { JobManager } from "../../src/jobs/manager.ts";
import type { JobRecord } from "../../src/jobs/record.ts";
import { JobStore } from "../../src/jobs/store.ts";
import { outputBody } from "../../src/server/render.ts";
import { TranscriptIndex } from "../../src/server/transcript_index.ts";
import {
  type PageEntry,
  readTranscriptPage,
  renderTranscriptPage,
  transcriptReply,
} from "../../src/server/transcript_page.ts";
import { registerTranscriptTool } from "../../src/server/tools.ts";
import { REPO, tempDir } from "../support/harness.ts";

const srcUrl = (path: string) => pathToFileURL(join(REPO, "src", path)).href;

const MB = 1024 * 1024;
const encoder = new TextEncoder();
const bytes = (s: string) => encoder.encode(s).length;

// ---- a synthetic Claude Code stream-json transcript -------------------------------------

/** Every 100th turn's tool result is this long, so pages must cut it. */
const LONG_RESULT = 20_000;
const SHORT_RESULT = 600;

/** The three entries turn `t` of the synthetic stream holds, in order. */
function turnEntries(t: number): TranscriptEntry[] {
  return [
    { kind: "text", text: `Step ${t}: checking the build` },
    { kind: "tool_call", id: `toolu_${t}`, name: "Bash", input: { command: `make step-${t}` } },
    {
      kind: "tool_result",
      id: `toolu_${t}`,
      name: "Bash",
      text: resultText(t),
      isError: t % 50 === 7,
    },
  ];
}

function resultText(t: number): string {
  const size = t % 100 === 3 ? LONG_RESULT : SHORT_RESULT;
  // Multi-byte characters, so that cutting is measured in bytes, not characters.
  const unit = `r${t}é€-`;
  return unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
}

function turnLines(t: number): string {
  const [text, call, result] = turnEntries(t) as [
    Extract<TranscriptEntry, { kind: "text" }>,
    Extract<TranscriptEntry, { kind: "tool_call" }>,
    Extract<TranscriptEntry, { kind: "tool_result" }>,
  ];
  const assistant = {
    type: "assistant",
    message: {
      id: `msg_${t}`,
      type: "message",
      role: "assistant",
      model: "qwen3-coder",
      content: [
        { type: "thinking", thinking: "hidden reasoning is not an entry" },
        { type: "text", text: text.text },
        { type: "tool_use", id: call.id, name: call.name, input: call.input },
      ],
      stop_reason: null,
      usage: { input_tokens: 10, output_tokens: 5 },
    },
    parent_tool_use_id: null,
    session_id: "s",
    uuid: `u-a-${t}`,
  };
  // Odd turns give the result as text blocks, even turns as a string (both occur).
  const content = t % 2 === 1 ? [{ type: "text", text: result.text }] : result.text;
  const user = {
    type: "user",
    message: {
      role: "user",
      content: [{
        type: "tool_result",
        tool_use_id: result.id,
        content,
        is_error: result.isError,
      }],
    },
    parent_tool_use_id: null,
    session_id: "s",
    uuid: `u-u-${t}`,
    tool_use_result: { stdout: "raw output repeated here is not an entry", stderr: "" },
  };
  let out = `${JSON.stringify(assistant)}\n${JSON.stringify(user)}\n`;
  // Now and then a line that is not JSON, and an empty line: skipped, never fatal.
  if (t % 1000 === 500) out += `{"type":"assistant","message":{"content":[{"type":"te\n\n`;
  return out;
}

const INIT = JSON.stringify({
  type: "system",
  subtype: "init",
  session_id: "s",
  model: "qwen3-coder",
  permissionMode: "acceptEdits",
  tools: ["Bash", "Read"],
}) + "\n";

/** Writes a stream.jsonl of at least `size` bytes; returns its turn count and size. */
function writeClaudeStream(dir: string, size: number): { turns: number; size: number } {
  mkdirSync(dir, { recursive: true });
  const fd = openSync(join(dir, "stream.jsonl"), "w");
  let written = writeSync(fd, INIT);
  let turns = 0;
  try {
    while (written < size) {
      let chunk = "";
      while (chunk.length < MB) chunk += turnLines(turns++);
      written += writeSync(fd, chunk);
    }
    written += writeSync(
      fd,
      JSON.stringify({ type: "result", subtype: "success", result: "done", num_turns: turns }) +
        "\n",
    );
  } finally {
    closeSync(fd);
  }
  return { turns, size: written };
}

const expectedEntry = (index: number): TranscriptEntry =>
  turnEntries(Math.floor(index / 3))[index % 3]!;

/** Checks a page entry against the entry it shows: same fields, body a prefix, cut counted. */
function assertShows(shown: PageEntry, entry: TranscriptEntry): void {
  assert.equal(shown.kind, entry.kind, `entry ${shown.index}`);
  const whole = entry.kind === "tool_call" ? JSON.stringify(entry.input) : entry.text;
  assert.ok(whole.startsWith(shown.body), `entry ${shown.index}: body is not a prefix`);
  assert.equal(shown.body.length + shown.cutChars, whole.length, `entry ${shown.index}: cut`);
  if (entry.kind !== "text") {
    assert.equal(shown.id, entry.id);
    assert.equal(shown.name, entry.name);
  }
  if (entry.kind === "tool_result") assert.equal(shown.isError, entry.isError);
}

// One 50 MB stream shared by the tests that read it (generated once, about a second).
let big: { dir: string; turns: number; size: number } | undefined;
function bigStream() {
  if (!big) {
    const root = tempDir("od-transcript-");
    const dir = join(root, "job");
    big = { dir, ...writeClaudeStream(dir, 50 * MB) };
    // 50 MB is too much to leave behind in the temp dir after every run.
    globalThis.addEventListener("unload", () => rmSync(root, { recursive: true, force: true }));
  }
  return big;
}

Deno.test("the first page of a 50 MB stream reads one chunk, not the file", async () => {
  const { dir, size } = bigStream();
  assert.ok(size >= 50 * MB, `stream is ${size} bytes`);
  const page = await readTranscriptPage(dir, "claude", {}, new TranscriptIndex());
  assert.equal(page.entries.length, 20);
  page.entries.forEach((e, i) => {
    assert.equal(e.index, i);
    assertShows(e, expectedEntry(i));
  });
  assert.equal(page.next, 20);
  assert.equal(page.total, undefined);
  assert.ok(page.bytesRead <= 128 * 1024, `first page read ${page.bytesRead} bytes`);
});

Deno.test("paging through all of a 50 MB stream: no entry lost or repeated, linear cost", async () => {
  const { dir, turns, size } = bigStream();
  const index = new TranscriptIndex();
  let offset = 0;
  let pages = 0;
  let totalRead = 0;
  let maxRead = 0;
  let cuts = 0;
  for (;;) {
    const page = await readTranscriptPage(dir, "claude", {
      offset,
      limit: 200,
      maxBytes: 96 * 1024,
    }, index);
    pages++;
    totalRead += page.bytesRead;
    maxRead = Math.max(maxRead, page.bytesRead);
    assert.ok(page.entries.length > 0 || page.next === undefined, `page at ${offset} is empty`);
    for (const [k, e] of page.entries.entries()) {
      assert.equal(e.index, offset + k, "entries follow each other across pages");
      assertShows(e, expectedEntry(e.index));
      if (e.cutChars > 0) cuts++;
    }
    const text = renderTranscriptPage("job", page);
    assert.ok(bytes(text) <= 96 * 1024, `page at ${offset} is ${bytes(text)} bytes`);
    if (page.next === undefined) {
      assert.equal(offset + page.entries.length, turns * 3);
      assert.equal(page.total, turns * 3);
      assert.match(text, new RegExp(`end of transcript \\(${turns * 3} entries\\)\\.$`));
      break;
    }
    assert.equal(page.next, offset + page.entries.length);
    offset = page.next;
  }
  console.log(
    `  ${turns * 3} entries in ${pages} pages; read ${(totalRead / MB).toFixed(1)} MB of a ` +
      `${(size / MB).toFixed(1)} MB file, at most ${(maxRead / 1024).toFixed(0)} KB per page`,
  );
  // Each page starts at the checkpoint the previous one left: no rescans from the start.
  assert.ok(totalRead < size * 1.5, `read ${totalRead} bytes in all for a ${size}-byte file`);
  assert.ok(maxRead < 512 * 1024, `a page read ${maxRead} bytes`);
  assert.ok(cuts > 0, "the 20,000-character results were cut");
});

Deno.test("a page deep in a 50 MB stream scans it as a stream, in a small heap", () => {
  const { dir, turns, size } = bigStream();
  // A fresh process, so the figures are this read's alone, with a V8 heap smaller than the
  // file and a small young generation, so that garbage does not pass for growth. Reading the
  // file whole grows rss by more than its size (61 MB measured for this one).
  const script = join(tempDir("od-transcript-script-"), "deep_page.ts");
  writeFileSync(
    script,
    `import { readTranscriptPage } from ${JSON.stringify(srcUrl("server/transcript_page.ts"))};
const before = Deno.memoryUsage().rss;
const page = await readTranscriptPage(${JSON.stringify(dir)}, "claude", { offset: ${
      turns * 3 - 5
    } });
const grown = Deno.memoryUsage().rss - before;
console.log(JSON.stringify({ grown, read: page.bytesRead, shown: page.entries.length, total: page.total }));
`,
  );
  const child = spawnSync(Deno.execPath(), [
    "run",
    "-A",
    "--config",
    join(REPO, "deno.json"),
    "--v8-flags=--max-old-space-size=40,--max-semi-space-size=1",
    script,
  ], { encoding: "utf8" });
  assert.equal(child.status, 0, child.stderr);
  const out = JSON.parse(child.stdout) as {
    grown: number;
    read: number;
    shown: number;
    total: number;
  };
  console.log(
    `  cold page at the end: read ${(out.read / MB).toFixed(1)} MB, ` +
      `rss +${(out.grown / MB).toFixed(1)} MB`,
  );
  assert.equal(out.shown, 5);
  assert.equal(out.total, turns * 3);
  assert.ok(out.read >= size - 64 * 1024, "the whole file had to be scanned once");
  assert.ok(out.grown < 40 * MB, `rss grew by ${out.grown} bytes scanning ${size} bytes`);
});

Deno.test("a cold deep page leaves checkpoints: the pages after it cost little", async () => {
  const { dir, turns } = bigStream();
  const index = new TranscriptIndex();
  const deep = await readTranscriptPage(dir, "claude", { offset: turns * 3 - 5 }, index);
  assert.equal(deep.entries.length, 5);
  assert.ok(index.size(join(dir, "stream.jsonl")) > 100, "checkpoints along the way");
  for (const offset of [turns * 3 - 400, Math.floor(turns * 1.5), 1000]) {
    const page = await readTranscriptPage(dir, "claude", { offset }, index);
    assert.equal(page.entries[0]?.index, offset);
    assertShows(page.entries[0]!, expectedEntry(offset));
    assert.ok(page.bytesRead < 512 * 1024, `page at ${offset} read ${page.bytesRead} bytes`);
  }
});

Deno.test("every page keeps to its byte budget; long fields are cut with a note", async () => {
  const dir = join(tempDir("od-transcript-"), "job");
  mkdirSync(dir);
  // Turns 3 and 103 have 20,000-character results; everything else is short.
  let text = INIT;
  for (let t = 0; t < 120; t++) text += turnLines(t);
  writeFileSync(join(dir, "stream.jsonl"), text);
  for (const maxBytes of [1024, 4096, 16 * 1024, 64 * 1024]) {
    let offset: number | undefined = 0;
    let seen = 0;
    while (offset !== undefined) {
      const page = await readTranscriptPage(dir, "claude", { offset, maxBytes, limit: 200 });
      const rendered = renderTranscriptPage("11111111-2222-4333-8444-555555555555", page);
      assert.ok(
        bytes(rendered) <= maxBytes,
        `max_bytes ${maxBytes}, page at ${offset}: ${bytes(rendered)} bytes`,
      );
      assert.ok(page.entries.length >= 1, "a page always shows at least one entry");
      for (const e of page.entries) {
        assertShows(e, expectedEntry(e.index));
        const whole = expectedEntry(e.index);
        const length = whole.kind === "tool_call"
          ? JSON.stringify(whole.input).length
          : whole.text.length;
        if (length === LONG_RESULT) {
          // Cut to a quarter of the budget at most, and the note says by how much.
          assert.ok(e.cutChars > 0, `entry ${e.index} is cut at max_bytes ${maxBytes}`);
          assert.ok(bytes(e.body) <= maxBytes / 4);
          assert.ok(rendered.includes(`… [${e.cutChars} more chars cut]`));
        }
        seen++;
      }
      offset = page.next;
    }
    assert.equal(seen, 360, `max_bytes ${maxBytes}: every entry once`);
  }
});

Deno.test("rendering: entry layout, next-page footer, end, past the end", async () => {
  const dir = join(tempDir("od-transcript-"), "job");
  mkdirSync(dir);
  writeFileSync(join(dir, "stream.jsonl"), INIT + turnLines(7) + turnLines(8));
  const id = "11111111-2222-4333-8444-555555555555";
  const first = await readTranscriptPage(dir, "claude", { limit: 4 });
  const text = renderTranscriptPage(id, first);
  const lines = text.split("\n");
  assert.equal(lines[0], `transcript of job ${id} (claude engine): ${join(dir, "stream.jsonl")}`);
  assert.deepEqual(lines.slice(1, 7), [
    "[0] text",
    "  Step 7: checking the build",
    "[1] tool_call Bash (toolu_7)",
    '  {"command":"make step-7"}',
    "[2] tool_result Bash (toolu_7) error",
    `  ${resultText(7)}`,
  ]);
  assert.equal(
    lines.at(-1),
    `entries 0-3 shown. next: delegate_transcript({ job_id: "${id}", offset: 4 })`,
  );
  const last = await readTranscriptPage(dir, "claude", { offset: 4 });
  assert.match(
    renderTranscriptPage(id, last),
    /\nentries 4-5 shown\. end of transcript \(6 entries\)\.$/,
  );
  assert.match(
    renderTranscriptPage(id, last, { running: true }),
    /end of transcript \(6 entries\); the job is still running, more may follow\.$/,
  );
  const past = await readTranscriptPage(dir, "claude", { offset: 50 });
  assert.deepEqual(past.entries, []);
  assert.match(
    renderTranscriptPage(id, past),
    /offset 50 is past the end: the transcript has 6 entries\./,
  );
  const none = await readTranscriptPage(join(dir, "nothing"), "claude");
  assert.equal(none.missing, true);
  assert.match(renderTranscriptPage(id, none), /No transcript yet/);
  await assert.rejects(readTranscriptPage(dir, "claude", { limit: 0 }), RangeError);
  await assert.rejects(readTranscriptPage(dir, "claude", { offset: -1 }), RangeError);
  await assert.rejects(readTranscriptPage(dir, "claude", { maxBytes: 10 }), RangeError);
});

Deno.test("malformed, blank and eventless lines are skipped; entries keep their order", async () => {
  const dir = join(tempDir("od-transcript-"), "job");
  mkdirSync(dir);
  writeFileSync(
    join(dir, "stream.jsonl"),
    [
      INIT.trim(),
      "not json at all",
      "[1,2,3]",
      "",
      turnLines(1).trim(),
      '{"type":"user","message":{"content":"a plain prompt, not a tool result"}}',
      '{"type":"system","subtype":"api_retry","attempt":1}',
      '{"type":"assistant","message":{"content":[{"type":"text","text":"  "}]}}',
      turnLines(2).trim(),
      '{"truncated": ',
    ].join("\r\n") + "\r\n" + turnLines(3),
  );
  const page = await readTranscriptPage(dir, "claude", { limit: 200 });
  assert.deepEqual(page.entries.map((e) => e.index), [0, 1, 2, 3, 4, 5, 6, 7, 8]);
  page.entries.forEach((e, i) => assertShows(e, turnEntries(Math.floor(i / 3) + 1)[i % 3]!));
  assert.equal(page.skippedLines, 3);
  assert.match(renderTranscriptPage("j", page), /\(3 unreadable lines skipped\)/);
});

Deno.test("a running job's stream: appended entries appear, a half-written line does not count", async () => {
  const dir = join(tempDir("od-transcript-"), "job");
  mkdirSync(dir);
  const path = join(dir, "stream.jsonl");
  let text = INIT;
  for (let t = 0; t < 200; t++) text += turnLines(t);
  writeFileSync(path, text);
  const index = new TranscriptIndex();
  const half = turnLines(200);
  const cut = half.indexOf("tool_use");
  writeFileSync(path, text + half.slice(0, cut), { flag: "w" });
  const a = await readTranscriptPage(dir, "claude", { offset: 590 }, index);
  assert.deepEqual(a.entries.map((e) => e.index), [
    590,
    591,
    592,
    593,
    594,
    595,
    596,
    597,
    598,
    599,
  ]);
  assert.equal(a.total, 600);
  assert.equal(a.skippedLines, 0, "the unfinished last line is not reported as unreadable");
  // The delegate finishes the line and goes on.
  writeFileSync(path, half.slice(cut) + turnLines(201), { flag: "a" });
  const b = await readTranscriptPage(dir, "claude", { offset: 598 }, index);
  assert.deepEqual(b.entries.map((e) => e.index), [598, 599, 600, 601, 602, 603, 604, 605]);
  b.entries.forEach((e) => assertShows(e, expectedEntry(e.index)));
  // Replaced by another file (say, pruned and reused): old checkpoints must not be used.
  const replacement = join(dir, "new.jsonl");
  writeFileSync(replacement, INIT + turnLines(0) + turnLines(1));
  renameSync(replacement, path);
  const c = await readTranscriptPage(dir, "claude", { offset: 3 }, index);
  assert.deepEqual(c.entries.map((e) => e.index), [3, 4, 5]);
  assertShows(c.entries[0]!, expectedEntry(3));
  assert.ok(statSync(path).size < 10_000);
});

// ---- native transcripts ---------------------------------------------------------------

Deno.test("native transcript.jsonl pages the same way; bad lines are skipped", async () => {
  const dir = join(tempDir("od-transcript-"), "job");
  mkdirSync(dir);
  const entries: TranscriptEntry[] = [];
  for (let i = 0; i < 30; i++) {
    entries.push({
      kind: "tool_call",
      id: `call_${i}`,
      name: "Read",
      input: { file_path: `/w/${i}.ts` },
    });
    entries.push({
      kind: "tool_result",
      id: `call_${i}`,
      name: "Read",
      text: i === 4 ? "x".repeat(50_000) : `contents of ${i}`,
      isError: i === 9,
    });
    entries.push({ kind: "text", text: `Read file ${i}.` });
  }
  const lines = entries.map((e) => JSON.stringify(e));
  // Not entries: bad JSON, wrong shapes, an unknown kind.
  lines.splice(10, 0, "{oops", '{"kind":"tool_call","id":1}', '{"kind":"thinking","text":"x"}');
  writeFileSync(join(dir, "transcript.jsonl"), lines.join("\n") + "\n");
  const shown: PageEntry[] = [];
  let offset: number | undefined = 0;
  let skipped = 0;
  while (offset !== undefined) {
    const page = await readTranscriptPage(dir, "native", { offset, limit: 7 });
    assert.ok(page.entries.length <= 7);
    shown.push(...page.entries);
    skipped += page.skippedLines;
    offset = page.next;
  }
  assert.equal(shown.length, 90);
  shown.forEach((e, i) => {
    assert.equal(e.index, i);
    assertShows(e, entries[i]!);
  });
  assert.equal(skipped, 3);
  const long = shown[13]!;
  assert.equal(long.kind, "tool_result");
  assert.equal(long.cutChars, 50_000 - 4096);
  const page = await readTranscriptPage(dir, "native", { offset: 28, limit: 1 });
  assert.match(
    renderTranscriptPage("j", page),
    /^\[28\] tool_result Read \(call_9\) error\n {2}contents of 9$/m,
  );
});

// ---- the tool's reply, through the job manager ------------------------------------------

function record(id: string, over: Partial<JobRecord> = {}): JobRecord {
  return {
    format: 1,
    id,
    sessionId: "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee",
    turn: 1,
    engine: "claude",
    model: "qwen3-coder",
    cwd: "/tmp",
    state: "completed",
    createdAt: 1,
    startedAt: 2,
    endedAt: 3,
    promptPreview: "do it",
    options: { permissionMode: "acceptEdits", addDirs: [] },
    sessionCreated: true,
    toolCalls: 1,
    permissionDenials: [],
    ...over,
  };
}

Deno.test("transcriptReply: a job's transcript by id; unknown and malformed ids are refused", async () => {
  const store = new JobStore(join(tempDir("od-transcript-state-"), "state"));
  store.init();
  const manager = new JobManager(store, {}, { jobTimeoutMs: 60_000, maxConcurrent: 1 });
  const id = "11111111-2222-4333-8444-555555555555";
  await store.create(record(id), "do it");
  writeFileSync(join(store.dirOf(id), "stream.jsonl"), INIT + turnLines(5));
  const text = await transcriptReply(manager, { job_id: id.toUpperCase(), limit: 2 });
  assert.match(text, new RegExp(`^transcript of job ${id} \\(claude engine\\)`));
  assert.match(text, /\[1\] tool_call Bash \(toolu_5\)/);
  assert.match(
    text,
    new RegExp(`next: delegate_transcript\\(\\{ job_id: "${id}", offset: 2 \\}\\)$`),
  );

  const native = "22222222-2222-4333-8444-555555555555";
  await store.create(record(native, { engine: "native" }), "do it");
  writeFileSync(
    join(store.dirOf(native), "transcript.jsonl"),
    JSON.stringify({ kind: "text", text: "native says hi" }) + "\n",
  );
  assert.match(
    await transcriptReply(manager, { job_id: native }),
    /\[0\] text\n {2}native says hi\nentries 0-0 shown\. end of transcript \(1 entries\)\.$/,
  );

  for (const bad of ["33333333-2222-4333-8444-555555555555", "../evil", "nope"]) {
    await assert.rejects(transcriptReply(manager, { job_id: bad }), (e: Error) => {
      assert.match(e.message, /Unknown job id/);
      return true;
    });
  }
});

Deno.test("outputBody: a cut result names the whole file and points at delegate_transcript", () => {
  const id = "11111111-2222-4333-8444-555555555555";
  assert.equal(
    outputBody("0123456789", 25, 10, "/s/j/result.txt", id),
    "0123456789\n\n... [truncated at 10 of 25 chars; full output: /s/j/result.txt. To check " +
      `the tool calls and results behind it, page through delegate_transcript({ job_id: "${id}" })]`,
  );
  assert.equal(outputBody("short", 5, 10, "/s/j/result.txt", id), "short");
});

Deno.test("registerTranscriptTool: over MCP, pages by job id; bad input is an error result", async () => {
  const store = new JobStore(join(tempDir("od-transcript-state-"), "state"));
  store.init();
  const manager = new JobManager(store, {}, { jobTimeoutMs: 60_000, maxConcurrent: 1 });
  const id = "44444444-2222-4333-8444-555555555555";
  await store.create(record(id), "do it");
  writeFileSync(join(store.dirOf(id), "stream.jsonl"), INIT + turnLines(3) + turnLines(4));
  const server = new McpServer({ name: "t", version: "0" });
  registerTranscriptTool(server, () => Promise.resolve(manager), "Page through a job.");
  const [a, b] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "c", version: "0" });
  await Promise.all([server.connect(a), client.connect(b)]);
  try {
    const call = async (args: Record<string, unknown>) => {
      const r = await client.callTool({
        name: "delegate_transcript",
        arguments: args,
      }) as CallToolResult;
      const first = r.content[0];
      return { text: first?.type === "text" ? first.text : "", isError: r.isError === true };
    };
    const page = await call({ job_id: id, offset: 2, limit: 1, max_bytes: 1024 });
    assert.equal(page.isError, false, page.text);
    assert.ok(bytes(page.text) <= 1024, `${bytes(page.text)} bytes`);
    assert.match(page.text, /\[2\] tool_result Bash \(toolu_3\)\n {2}r3é€-/);
    assert.match(page.text, /… \[\d+ more chars cut\]/);
    assert.match(page.text, new RegExp(`offset: 3 \\}\\)$`));
    const unknown = await call({ job_id: "nope" });
    assert.equal(unknown.isError, true);
    assert.match(unknown.text, /Unknown job id "nope"/);
    for (
      const bad of [{ offset: -1 }, { limit: 201 }, { limit: 0 }, { max_bytes: 100 }, {
        offset: 1.5,
      }]
    ) {
      const r = await call({ job_id: id, ...bad });
      assert.equal(r.isError, true, JSON.stringify(bad));
    }
    const { tools } = await client.listTools();
    assert.deepEqual(Object.keys(tools[0]!.inputSchema.properties ?? {}), [
      "job_id",
      "offset",
      "limit",
      "max_bytes",
    ]);
    console.log(`  delegate_transcript in tools/list: ${JSON.stringify(tools[0]).length} chars`);
  } finally {
    await client.close();
    await server.close();
  }
});

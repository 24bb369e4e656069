/**
 * What the native engine sends a local Ollama, request by request: the first request's prompt
 * size, the prompt tokens of a 3-request scripted task, and how much of each request is an
 * exact prefix of the one before (Ollama reuses its KV cache for a shared prefix, so only the
 * rest is prefilled again). A longer job under a tight maxContext shows what shortening old
 * tool output costs in prefix reuse, against stubbing everything beyond the newest six on every
 * request. Real server over stdio, the Ollama emulator in contextMode "real".
 *
 *   deno run -A bench/native_context_bench.ts
 */
import "./support/help.ts";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ChatMessage } from "../src/backends/chat_types.ts";
import { nativeMessages } from "../src/backends/ollama/chat.ts";
import { type RecordedRequest, startOllamaEmulator } from "../tests/support/emulator/emulator.ts";
import { field, startServer, tempDir } from "../tests/support/harness.ts";

type Json = Record<string, unknown>;
interface Body {
  messages: Json[];
  tools?: unknown[];
  options?: { num_ctx?: number };
}

/** The prompt as a model sees it, in order: tools (rendered first by chat templates), then messages. */
const rendered = (b: Body) =>
  (b.tools ? JSON.stringify(b.tools) : "") + b.messages.map((m) => JSON.stringify(m)).join("");
const tokens = (chars: number) => Math.ceil(chars / 4);

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

interface Figures {
  prompts: number[];
  shares: number[];
  /** Share of the previous request found again at the start of the next. */
  reused: number[];
  /** Tokens Ollama prefills when it reuses the previous request's prefix. */
  prefill: number;
}

function figures(bodies: Body[]): Figures {
  const texts = bodies.map(rendered);
  const shares: number[] = [];
  const reused: number[] = [];
  let prefill = tokens(texts[0]?.length ?? 0);
  for (let i = 1; i < texts.length; i++) {
    const shared = commonPrefix(texts[i - 1]!, texts[i]!);
    shares.push(shared / texts[i]!.length);
    reused.push(shared / texts[i - 1]!.length);
    prefill += tokens(texts[i]!.length - shared);
  }
  return { prompts: texts.map((t) => tokens(t.length)), shares, reused, prefill };
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

function report(title: string, f: Figures, extra = ""): void {
  console.log(`\n${title}${extra}`);
  console.log(`  requests: ${f.prompts.length}`);
  console.log(`  prompt tokens per request (chars/4): ${f.prompts.join(", ")}`);
  console.log(`  prompt tokens sent in total: ${sum(f.prompts)}`);
  console.log(
    `  share of each request that is an exact prefix of the previous one: ${
      f.shares.map(pct).join(", ")
    }` +
      (f.shares.length > 0 ? ` (mean ${pct(sum(f.shares) / f.shares.length)})` : ""),
  );
  const whole = f.reused.filter((r) => r === 1).length;
  console.log(
    `  previous request found whole at the start of the next: ${whole} of ${f.reused.length}` +
      ` (the others rewrote earlier messages)`,
  );
  console.log(`  tokens to prefill with prefix reuse: ${f.prefill}`);
}

const bodiesOf = (requests: RecordedRequest[]) => requests.map((r) => r.json as Body);

/** The comparison: every request stubs all tool results beyond the newest six. */
function alwaysStubbed(bodies: Body[]): Body[] {
  return bodies.map((b) => {
    const tools = b.messages.flatMap((m, i) => (m.role === "tool" ? [i] : []));
    const old = new Set(tools.slice(0, Math.max(0, tools.length - 6)));
    return {
      ...b,
      messages: b.messages.map((m, i) =>
        old.has(i)
          ? {
            ...m,
            content: `[tool result of ${m.tool_name}: ${String(m.content).length} chars, ` +
              `shown earlier]`,
          }
          : m
      ),
    };
  });
}

const emu = await startOllamaEmulator({ contextMode: "real" });
try {
  // 1 and 2: the first request, and a 3-request task (two reads, then the answer).
  {
    const server = await startServer({ baseUrl: emu.url });
    try {
      const work = tempDir("od-bench-");
      writeFileSync(join(work, "a.txt"), "alpha line\n".repeat(300));
      writeFileSync(join(work, "b.txt"), "beta line\n".repeat(300));
      const before = emu.nativeChatRequests().length;
      const reply = await server.call("delegate_start", {
        engine: "native",
        model: "qwen3:8b",
        prompt: '@tool Read {"file_path":"a.txt"}\n@tool Read {"file_path":"b.txt"}\n' +
          "@reply read both\nRead a.txt and b.txt and say what they hold.",
        cwd: work,
        wait_seconds: 120,
      });
      if (field(reply.text, "state") !== "completed") throw new Error(reply.text);
      const requests = emu.nativeChatRequests().slice(before);
      const first = requests[0]!;
      const body = first.json as Body;
      console.log(
        `first request, native engine: ${first.bodyText.length} body chars ≈ ` +
          `${tokens(first.bodyText.length)} tokens; prompt (messages + ${
            body.tools?.length ?? 0
          } tools) ≈ ${tokens(rendered(body).length)} tokens; num_ctx ${body.options?.num_ctx}`,
      );
      const f = figures(bodiesOf(requests));
      report("3-request task (Read, Read, answer):", f);
      const records = emu.contextRecords.slice(-requests.length);
      console.log(
        `  num_ctx per request: ${bodiesOf(requests).map((b) => b.options?.num_ctx).join(", ")}; ` +
          `reloads: ${emu.reloadCount("qwen3:8b")}; cut by the server: ${
            records.filter((r) => r.truncated).length
          }`,
      );
      console.log(`  status tokens line: ${field(reply.text, "tokens")}`);
    } finally {
      await server.close();
    }
  }

  // 3: a longer job that outgrows a tight maxContext.
  {
    const server = await startServer({ baseUrl: emu.url, userConfig: { maxContext: 8192 } });
    try {
      const work = tempDir("od-bench-");
      const reads: string[] = [];
      for (let i = 1; i <= 20; i++) {
        writeFileSync(
          join(work, `f${i}.txt`),
          `file ${i} `.padEnd(49, "z").concat("\n").repeat(50),
        );
        reads.push(`@tool Read {"file_path":"f${i}.txt"}`);
      }
      const before = emu.nativeChatRequests().length;
      const reply = await server.call("delegate_start", {
        engine: "native",
        model: "qwen3:8b",
        prompt: `${reads.join("\n")}\n@reply finished\nread every file`,
        cwd: work,
        max_turns: 30,
        wait_seconds: 240,
      });
      if (field(reply.text, "state") !== "completed") throw new Error(reply.text);
      const bodies = bodiesOf(emu.nativeChatRequests().slice(before));
      report(
        "20 reads under maxContext 8192 (stub only when needed, in batches):",
        figures(bodies),
        `  [${field(reply.text, "context")}]`,
      );
      // The same requests rebuilt whole from the job's history, then stubbed on every request.
      const id = field(reply.text, "job_id")!;
      const history = readFileSync(join(server.stateDir, id, "messages.jsonl"), "utf8")
        .trim().split("\n").map((l) => JSON.parse(l) as ChatMessage);
      const whole = bodies.map((b) => ({
        ...b,
        messages: nativeMessages(history.slice(0, b.messages.length)),
      }));
      report(
        "same job, every result beyond the newest six stubbed on every request:",
        figures(alwaysStubbed(whole)),
      );
    } finally {
      await server.close();
    }
  }
} finally {
  await emu.close();
}

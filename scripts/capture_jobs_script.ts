/**
 * What scripts/capture_jobs.ts runs: a small project for the delegates, each task with the
 * steps the emulated model takes (a tool call, maybe with a sentence, or the answer), and the
 * emulator scripts that play them on `/api/chat` (native) and `/v1/messages` (Claude Code).
 * The tools really run, in the project, through each engine and its sandbox.
 */
import type {
  ChatReply,
  ChatRequestView,
  ChatToolCallSpec,
  MessagesRequestView,
  Reply,
} from "../tests/support/emulator/emulator.ts";
import { toolResultsOf } from "../tests/support/emulator/messages_script.ts";

export const PROJECT_FILES: Record<string, string> = {
  "src/duration.ts": `/** "90s", "5m" or "2h" in milliseconds. */
export function parseDuration(text: string): number {
  const m = /^(\\d+)(s|m|h)$/.exec(text.trim());
  if (!m) throw new RangeError(\`Cannot read duration "\${text}": use 90s, 5m or 2h\`);
  return Number(m[1]) * { s: 1_000, m: 60_000, h: 3_600_000 }[m[2] as "s" | "m" | "h"];
}
`,
  "src/retry.ts":
    `/** Runs \`work\` up to \`attempts\` times; each try is aborted after \`timeoutMs\`, if given. */
export async function withRetry<T>(
  work: (signal?: AbortSignal) => Promise<T>,
  options: { attempts?: number; timeoutMs?: number } = {},
): Promise<T> {
  const attempts = options.attempts ?? 3;
  for (let i = 1; ; i++) {
    const signal = options.timeoutMs ? AbortSignal.timeout(options.timeoutMs) : undefined;
    try {
      return await work(signal);
    } catch (e) {
      if (i >= attempts) throw e;
    }
  }
}
`,
  "src/config.ts": `import { parseDuration } from "./duration.ts";
import { withRetry } from "./retry.ts";

export interface Config {
  url: string;
  timeout: string;
}

export function loadRemoteConfig(config: Config): Promise<Response> {
  const timeoutMs = parseDuration(config.timeout);
  return withRetry((signal) => fetch(config.url, { signal }), { timeoutMs });
}
`,
  "src/sync.ts": `import { withRetry } from "./retry.ts";

export function pushChanges(url: string, body: string): Promise<Response> {
  return withRetry(() => fetch(url, { method: "POST", body }));
}
`,
  "tests/duration_test.ts": `import { assertEquals } from "jsr:@std/assert";
import { parseDuration } from "../src/duration.ts";

Deno.test("parseDuration reads seconds, minutes and hours", () => {
  assertEquals(parseDuration("90s"), 90_000);
  assertEquals(parseDuration("5m"), 300_000);
  assertEquals(parseDuration("2h"), 7_200_000);
});
`,
};

export interface Step {
  /** What the model says (before its tool call, or as its answer). */
  text?: string;
  call?: ChatToolCallSpec;
}

export interface Task {
  prompt: string;
  model: string;
  steps: Step[];
  /** The backend's error for every request (the job fails). */
  error?: string;
  /** The job that runs while the pictures are taken. */
  live?: boolean;
  /** Run by Claude Code (the claude engine) rather than the native engine. */
  claude?: boolean;
}

const call = (name: string, args: Record<string, unknown>): ChatToolCallSpec => ({
  name,
  arguments: args,
});

const ERROR_TESTS = `import { assertThrows } from "jsr:@std/assert";
import { parseDuration } from "../src/duration.ts";

Deno.test("parseDuration refuses what it cannot read", () => {
  assertThrows(() => parseDuration(""), RangeError);
  assertThrows(() => parseDuration("5d"), RangeError);
  assertThrows(() => parseDuration("-5m"), RangeError);
});
`;

/**
 * In the order capture_jobs.ts starts them: summary, its follow-up, branch, claude, failing,
 * live.
 */
export const TASKS: Task[] = [
  {
    prompt: "Summarise every exported function in src/, one line each.",
    model: "qwen3.5:397b-cloud",
    steps: [
      { call: call("Glob", { pattern: "src/**/*.ts" }) },
      { call: call("Read", { file_path: "src/duration.ts" }) },
      { call: call("Read", { file_path: "src/retry.ts" }) },
      { call: call("Read", { file_path: "src/config.ts" }) },
      {
        text: '- parseDuration (src/duration.ts): "90s", "5m" or "2h" in milliseconds; ' +
          "throws RangeError otherwise.\n" +
          "- withRetry (src/retry.ts): runs work up to 3 times, each try aborted after " +
          "timeoutMs if given.\n" +
          "- loadRemoteConfig (src/config.ts): fetches config.url with retries and the " +
          "config's timeout.\n" +
          "- pushChanges (src/sync.ts): POSTs a body with retries and no timeout.",
      },
    ],
  },
  {
    prompt: "Which of them have no test yet?",
    model: "qwen3.5:397b-cloud",
    steps: [
      { call: call("Grep", { pattern: "withRetry|loadRemoteConfig|pushChanges", path: "tests" }) },
      {
        text: "Only parseDuration is tested (tests/duration_test.ts). withRetry, " +
          "loadRemoteConfig and pushChanges have no test.",
      },
    ],
  },
  {
    prompt: "Add tests for the inputs parseDuration refuses.",
    model: "qwen3-coder:30b",
    steps: [
      { call: call("Read", { file_path: "src/duration.ts" }) },
      {
        call: call("Write", { file_path: "tests/duration_errors_test.ts", content: ERROR_TESTS }),
      },
      { call: call("Bash", { command: "grep -c assertThrows tests/duration_errors_test.ts" }) },
      {
        text: "Added tests/duration_errors_test.ts: an empty text, an unknown unit and a " +
          "negative number each throw RangeError.",
      },
    ],
  },
  {
    prompt: "Explain what withRetry does when every attempt fails.",
    model: "qwen3-coder:30b",
    claude: true,
    steps: [
      { call: call("Bash", { command: "grep -n -A2 catch src/retry.ts" }) },
      {
        text: "It throws the last attempt's error: once `attempts` tries (3 by default) have " +
          "failed, the catch block rethrows instead of trying again. Earlier errors are lost.",
      },
    ],
  },
  {
    prompt: "Rename Config.timeout to Config.timeoutMs everywhere.",
    model: "qwen3-coder:30b",
    steps: [],
    error: "model requires more system memory (21.4 GiB) than is available (15.2 GiB)",
  },
  {
    prompt: "Find every caller of withRetry and say which ones set no timeout.",
    model: "qwen3-coder:30b",
    live: true,
    steps: [
      { call: call("Grep", { pattern: "withRetry\\(", path: "src", output_mode: "content" }) },
      {
        text: "Two callers. Checking which of them pass a timeout.",
        call: call("Bash", { command: "grep -n timeoutMs src/config.ts src/sync.ts" }),
      },
      { call: call("Read", { file_path: "src/sync.ts" }) },
      {
        text: "withRetry has two callers:\n" +
          "- src/config.ts:11 loadRemoteConfig passes timeoutMs from the config.\n" +
          "- src/sync.ts:4 pushChanges passes none, so a stalled server keeps it waiting " +
          "forever. Give it one, e.g. { timeoutMs: 30_000 }.",
      },
    ],
  },
];

/** Releases the running job's steps once the moment it waits for has come. */
export class Gate {
  open!: () => void;
  readonly opened = new Promise<void>((resolve) => (this.open = resolve));
}

/** The text of the newest user message and the tool results after it: where a turn stands. */
function turnOf(view: ChatRequestView): { task: string; step: number } {
  let last = -1;
  view.messages.forEach((m, i) => {
    if ((m as { role?: string }).role === "user") last = i;
  });
  const user = view.messages[last] as { content?: unknown } | undefined;
  const task = typeof user?.content === "string" ? user.content : "";
  const step = view.messages.slice(last + 1)
    .filter((m) => (m as { role?: string }).role === "tool").length;
  return { task, step };
}

/**
 * The emulated model: each task's steps in order, one per request. The running job's second
 * step waits for `tableTaken` (so the table shows it running), its later steps for
 * `tailStarted` (so the tail shows them arrive).
 */
export function modelScript(gates: { reachedGate: Gate; tableTaken: Gate; tailStarted: Gate }) {
  return (view: ChatRequestView): ChatReply | undefined => {
    const { task, step } = turnOf(view);
    const plan = TASKS.find((t) => !t.claude && task.startsWith(t.prompt));
    if (!plan) return { kind: "text", text: `(no scripted answer for "${task.slice(0, 60)}")` };
    if (plan.error) return { kind: "error", status: 500, message: plan.error, retryAfter: "0" };
    const s = plan.steps[Math.min(step, plan.steps.length - 1)]!;
    const reply: ChatReply = s.call
      ? { kind: "tool_calls", calls: [s.call], ...(s.text ? { text: s.text } : {}) }
      : { kind: "text", text: s.text ?? "" };
    if (!plan.live || step === 0) return reply;
    if (step === 1) {
      gates.reachedGate.open();
      return { kind: "delay", ms: 0, until: gates.tableTaken.opened, then: reply };
    }
    // Far enough apart that the tail's live status line shows between them.
    return { kind: "delay", ms: 700, until: gates.tailStarted.opened, then: reply };
  };
}

/** The emulated model as Claude Code sees it (`/v1/messages`): the claude task's steps. */
export function claudeScript(view: MessagesRequestView): Reply | undefined {
  const plan = TASKS.find((t) => t.claude && view.firstUserText.includes(t.prompt));
  // Claude Code's side requests (titles and the like) carry no tools: the default answers.
  if (!plan || view.tools.length === 0) return undefined;
  const step = toolResultsOf(view.messages).length;
  const s = plan.steps[Math.min(step, plan.steps.length - 1)]!;
  return s.call
    ? { kind: "tool_use", name: s.call.name, input: s.call.arguments }
    : { kind: "text", text: s.text ?? "" };
}

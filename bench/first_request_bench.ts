/**
 * First-request prompt size of each engine, as the emulator receives it: the claude engine
 * (real Claude Code CLI) with Claude Code's whole tool set (as before `--tools`, here through
 * claudeTools "default") and with the default claudeTools, each with Claude Code's sandbox off
 * and on, and the native engine. Sizes are chars/4 of the whole request body, and of the part
 * a model reads (system prompt, messages and tool definitions, as the emulator counts it): the
 * "prompt" column, which the docs quote (docs/engines.md) and the constants behind `doctor`'s
 * estimates hold (CLAUDE_*PROMPT_TOKENS in engines/claude/context_check.ts,
 * NATIVE_PROMPT_TOKENS in models/prompt_sizes.ts).
 *
 *   deno run -A bench/first_request_bench.ts           the figure
 *   deno run -A bench/first_request_bench.ts --table   also the per-tool sizes behind
 *                                                      CLAUDE_PROMPT_TOKENS (context_check.ts)
 */
import "./support/help.ts";
import { type OllamaEmulator, startOllamaEmulator } from "../tests/support/emulator/emulator.ts";
import { field, startServer, tempDir } from "../tests/support/harness.ts";
import { DEFAULT_CLAUDE_TOOLS } from "../src/settings/types.ts";
import { QUICK } from "./support/common.ts";

const MODEL = "qwen3:8b";
const TASK = "@reply done";
const table = Deno.args.includes("--table");

interface Measured {
  bodyTokens: number;
  promptTokens: number;
  tools: string[];
}

const emu = await startOllamaEmulator({ models: [{ name: MODEL }] });

/** Runs one job per `calls` entry on a fresh server; returns each job's first request. */
async function measure(
  env: Record<string, string>,
  calls: Record<string, unknown>[],
): Promise<Measured[]> {
  const server = await startServer({ baseUrl: emu.url, env });
  const out: Measured[] = [];
  try {
    for (const call of calls) {
      const before = emu.requests.length;
      const reply = await server.call("delegate_start", {
        prompt: TASK,
        model: MODEL,
        cwd: tempDir("od-bench-"),
        wait_seconds: 180,
        ...call,
      }, { timeoutMs: 240_000 });
      if (field(reply.text, "state") !== "completed") throw new Error(reply.text);
      out.push(firstRequestSince(emu, before));
    }
  } finally {
    await server.close();
  }
  return out;
}

const INFERENCE = new Set(["/v1/messages", "/v1/chat/completions", "/api/chat"]);

function firstRequestSince(e: OllamaEmulator, index: number): Measured {
  const at = e.requests.findIndex((r, i) => i >= index && INFERENCE.has(r.path));
  const request = e.requests[at];
  if (!request) throw new Error("the job sent no inference request");
  // contextRecords holds one entry per inference request, in the same order.
  const nth = e.requests.slice(0, at).filter((r) => INFERENCE.has(r.path)).length;
  const record = e.contextRecords[nth];
  const body = request.json as { tools?: { name?: string; function?: { name?: string } }[] };
  return {
    bodyTokens: Math.ceil(request.bodyText.length / 4),
    promptTokens: record?.estimatedTokens ?? NaN,
    tools: (body.tools ?? []).map((t) => t.name ?? t.function?.name ?? "?"),
  };
}

const k = (n: number) => `${(n / 1000).toFixed(1)}k`;
function row(label: string, m: Measured): void {
  console.log(
    `${label.padEnd(56)} ${String(m.bodyTokens).padStart(6)} (${k(m.bodyTokens)})  ` +
      `${String(m.promptTokens).padStart(6)}  tools ${m.tools.length}`,
  );
}

try {
  console.log(`first request, chars/4 (${TASK.length}-character task, model ${MODEL})`);
  console.log(`${"".padEnd(56)} ${"body".padStart(6)}          ${"prompt".padStart(6)}`);
  // Quick mode (bench/support/common.ts): the default claude job and the native one.
  for (const sandbox of QUICK ? [] : ["off", "on"]) {
    const full = { OLLAMA_MCP_CLAUDE_HARNESS: "full", OLLAMA_MCP_SANDBOX: sandbox };
    const [whole] = await measure({ ...full, OLLAMA_MCP_CLAUDE_TOOLS: "default" }, [{}]);
    const [six] = await measure(full, [{}]);
    const [lean] = await measure({ OLLAMA_MCP_SANDBOX: sandbox }, [{}]);
    row(`claude full, Claude Code's whole set, sandbox ${sandbox}`, whole!);
    row(`claude full, --tools ${DEFAULT_CLAUDE_TOOLS.join(",")}, sandbox ${sandbox}`, six!);
    row(`claude lean (default: --bare, Bash,Read,Edit), sandbox ${sandbox}`, lean!);
  }
  if (QUICK) {
    const [lean] = await measure({}, [{}]);
    row("claude lean (default: --bare, Bash,Read,Edit), sandbox on", lean!);
  }
  const [native] = await measure({}, [{ engine: "native" }]);
  row("native", native!);

  if (table) {
    // Every tool Claude Code 2.1.332 sends in full when named, so that allowed_tools can pick
    // one per job; the sizes are differences between jobs that differ in one thing.
    const known = [
      ...DEFAULT_CLAUDE_TOOLS,
      "Agent",
      "ListAgents",
      "ReportFindings",
      "ScheduleWakeup",
      "Skill",
      "ToolSearch",
      "Workflow",
      "NotebookEdit",
      "WebFetch",
      "WebSearch",
    ];
    const env = {
      OLLAMA_MCP_CLAUDE_TOOLS: known.join(","),
      OLLAMA_MCP_SANDBOX: "off",
      OLLAMA_MCP_CLAUDE_HARNESS: "full",
    };
    const [none, pair, ...single] = await measure(env, [
      { allowed_tools: [] },
      { allowed_tools: ["Read", "Edit"] },
      ...known.map((t) => ({ allowed_tools: [t] })),
    ]);
    const fullEnv = { OLLAMA_MCP_CLAUDE_HARNESS: "full" };
    const [leanOff, plan] = await measure({ ...fullEnv, OLLAMA_MCP_SANDBOX: "off" }, [
      {},
      { permission_mode: "plan" },
    ]);
    const [leanOn] = await measure({ ...fullEnv, OLLAMA_MCP_SANDBOX: "on" }, [{}]);
    const [whole] = await measure(
      { ...fullEnv, OLLAMA_MCP_CLAUDE_TOOLS: "default", OLLAMA_MCP_SANDBOX: "off" },
      [{}],
    );
    const read = single[known.indexOf("Read")]!.promptTokens - none!.promptTokens;
    const edit = single[known.indexOf("Edit")]!.promptTokens - none!.promptTokens;
    // Two tools cost both definitions but the shared entry once.
    const anyTool = read + edit - (pair!.promptTokens - none!.promptTokens);
    console.log("\nCLAUDE_PROMPT_TOKENS (prompt tokens, sandbox off unless said):");
    console.log(`  base (no tools)       ${none!.promptTokens - Math.ceil(TASK.length / 4)}`);
    console.log(`  anyTool               ${anyTool}`);
    known.forEach((t, i) => {
      const size = single[i]!.promptTokens - none!.promptTokens - anyTool;
      console.log(`  ${t.padEnd(21)} ${Math.max(0, size)}`);
    });
    console.log(`  defaultSet            ${whole!.promptTokens}`);
    console.log(`  planMode              ${plan!.promptTokens - leanOff!.promptTokens}`);
    console.log(`  sandbox               ${leanOn!.promptTokens - leanOff!.promptTokens}`);
    console.log(`  (lean, sandbox off    ${leanOff!.promptTokens}; on ${leanOn!.promptTokens})`);

    // The lean harness: Claude Code's minimal mode offers Bash, Read and Edit.
    const leanTools = ["Bash", "Read", "Edit"];
    const [lNone, lPair, ...lSingle] = await measure({ OLLAMA_MCP_SANDBOX: "off" }, [
      { allowed_tools: [] },
      { allowed_tools: ["Read", "Edit"] },
      ...leanTools.map((t) => ({ allowed_tools: [t] })),
    ]);
    const [lAll, lPlan] = await measure({ OLLAMA_MCP_SANDBOX: "off" }, [
      {},
      { permission_mode: "plan" },
    ]);
    const [lOn] = await measure({ OLLAMA_MCP_SANDBOX: "on" }, [{}]);
    const lRead = lSingle[0 + 1]!.promptTokens - lNone!.promptTokens;
    const lEdit = lSingle[2]!.promptTokens - lNone!.promptTokens;
    const lAny = lRead + lEdit - (lPair!.promptTokens - lNone!.promptTokens);
    console.log("\nCLAUDE_LEAN_PROMPT_TOKENS (prompt tokens, sandbox off unless said):");
    console.log(`  base (no tools)       ${lNone!.promptTokens - Math.ceil(TASK.length / 4)}`);
    console.log(`  anyTool               ${lAny}`);
    leanTools.forEach((t, i) => {
      const size = lSingle[i]!.promptTokens - lNone!.promptTokens - lAny;
      console.log(`  ${t.padEnd(21)} ${Math.max(0, size)}`);
    });
    console.log(`  planMode              ${lPlan!.promptTokens - lAll!.promptTokens}`);
    console.log(`  sandbox               ${lOn!.promptTokens - lAll!.promptTokens}`);
    console.log(`  (lean, sandbox off    ${lAll!.promptTokens}; on ${lOn!.promptTokens})`);
  }
} finally {
  await emu.close();
}

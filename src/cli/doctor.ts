/**
 * `ollama-delegate doctor`: checks everything a delegation depends on and says how to fix
 * what fails. The exit code is 0 only when what the default engine needs works; the rest
 * is reported as a warning.
 */
import process from "node:process";
import { parseArgs } from "node:util";
import { currentEnv } from "../platform/runtime.ts";
import type { Settings } from "../settings/fields.ts";
import { loadSettings } from "../settings/load.ts";
import { backendChecks } from "./doctor_backends.ts";
import type { Check } from "./doctor_check.ts";
import { ClaudeEngine } from "../engines/claude/run.ts";
import {
  claudeCheck,
  claudeSandboxCheck,
  configCheck,
  sandboxCheck,
  stateDirCheck,
} from "./doctor_local.ts";
import { ollamaChecks } from "./doctor_ollama.ts";
import { type DoctorReport, renderJson, renderText } from "./doctor_render.ts";

export const DOCTOR_HELP = `Usage: ollama-delegate doctor [--json]

Checks the setup and prints one line per check (PASS, FAIL or WARN) with a fix:
  Settings          every layer (user file, project file, OLLAMA_MCP_* variables) valid
  State dir         writable
  Claude Code CLI   found on the delegate's PATH, and answers --version
  Ollama            reachable at baseUrl; its version
  Models            listed, which support tools
  Default model     available, allowed, not retired, supports tools
  Context length    of the default model, against the 64k coding agents need
  Retired models    cloud models Ollama has retired that settings still name
  Sandbox           bubblewrap runs a trivial command (native engine)
  Backend <name>    each configured backend answers

Exit code 0 when everything the default engine (defaultEngine) needs passes, 1 when
something it needs fails (other problems are warnings), 2 for a usage error.
Run it in the folder you use Claude Code in: ./ollama-mcp.config.json is read from there.

Options:
  --json       print the report as JSON: { ok, defaultEngine, checks: [{ id, status,
               required, summary, hint?, details? }] }
  -h, --help   show this help`;

/** Runs every check; the report says which ones the default engine needs. */
export async function runDoctor(
  env: Record<string, string>,
  cwd: string,
): Promise<DoctorReport> {
  const resolved = loadSettings({ env, cwd });
  const s = resolved.settings;
  const [claude, ollama, sandbox, backends] = await Promise.all([
    claudeCheck(resolved, env, cwd),
    ollamaChecks(s),
    sandboxCheck(s.sandbox),
    backendChecks(s.backends, env),
  ]);
  const childEnv = new ClaudeEngine({
    claudeBin: s.claudeBin,
    claudeConfigDir: s.claudeConfigDir,
    baseUrl: s.baseUrl,
    parentEnv: env,
  }).childEnv(s.defaultModel || "doctor");
  const checks = [
    configCheck(resolved),
    stateDirCheck(s.stateDir),
    claude,
    claudeSandboxCheck(s.sandbox, childEnv),
    ...ollama,
  ];
  checks.push(sandbox, ...backends);
  const needed = neededChecks(s);
  const reported = checks.map((c) => {
    const required = needed(c.id);
    // What the default engine can do without is a warning, whatever its own outcome.
    return {
      ...c,
      required,
      status: c.status === "fail" && !required ? "warn" as const : c.status,
    };
  });
  return {
    ok: reported.every((c) => c.status !== "fail"),
    defaultEngine: s.defaultEngine,
    checks: reported,
  };
}

/**
 * What the default engine cannot run without. claude: the CLI, Ollama and a usable default
 * model. native: its backends when any are named (else Ollama and its default model), and
 * the sandbox. Both: valid settings and a writable state dir.
 */
function neededChecks(s: Settings): (id: Check["id"]) => boolean {
  const always = ["config", "state"];
  if (s.defaultEngine === "claude") {
    const ids = new Set([...always, "claude", "claude.sandbox", "ollama", "model.default"]);
    return (id) => ids.has(id);
  }
  const hasBackends = Object.keys(s.backends).length > 0;
  const ids = new Set([...always, "sandbox", ...(hasBackends ? [] : ["ollama", "model.default"])]);
  return (id) => ids.has(id) || (hasBackends && id.startsWith("backend."));
}

/** Entry for main.ts. */
export async function doctorMain(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      allowPositionals: false,
      options: { json: { type: "boolean" }, help: { type: "boolean", short: "h" } },
    }));
  } catch (e) {
    console.error(`ollama-delegate doctor: ${(e as Error).message}. See doctor --help`);
    return 2;
  }
  if (values.help) {
    console.log(DOCTOR_HELP);
    return 0;
  }
  const env = currentEnv();
  const report = await runDoctor(env, process.cwd());
  if (values.json) {
    console.log(renderJson(report));
  } else {
    // https://no-color.org: any non-empty NO_COLOR turns colour off.
    const colour = process.stdout.isTTY === true && !env.NO_COLOR;
    console.log(renderText(report, colour));
  }
  return report.ok ? 0 : 1;
}

/**
 * `ollama-delegate doctor`: checks everything a delegation depends on and says how to fix
 * what fails. The exit code is 0 only when what the default engine needs works; the rest
 * is reported as a warning.
 */
import { parseArgs } from "node:util";
import type { Settings } from "../../settings/types.ts";
import { loadSettings } from "../../settings/load.ts";
import { backendChecks, ollamaPoolCheck, probeOllamaPool } from "./backends.ts";
import { messagesChecks } from "./messages.ts";
import { defaultBackendChecks, OLLAMA_DEFAULT_IDS } from "./default_backend.ts";
import { defaultBackendName } from "../../settings/backends.ts";
import { type Check, HTTP_TIMEOUT_MS } from "./check.ts";
import { probeEndpoint } from "../../backends/endpoint_health.ts";
import {
  bubblewrapVersion,
  claudeCheck,
  claudeSandboxCheck,
  configCheck,
  journalCheck,
  sandboxCheck,
  stateDirCheck,
} from "./local.ts";
import { ollamaChecks } from "./ollama.ts";
import { toolchainsCheck } from "./toolchains.ts";
import { doctorTry } from "./try.ts";
import { engineNeed, enginesFacts, requestSizeCheck } from "./engine_needs.ts";
import { type DoctorReport, renderJson, renderText } from "./render.ts";
import { DEFAULT_PROBE_TIMEOUT_S, runProbe } from "../probe/probe.ts";
import { renderProbeJson, renderProbeText } from "../probe/render.ts";
import { type CliIo, processIo } from "../jobs/common.ts";

export const DOCTOR_HELP = `Usage: ollama-delegate doctor [--json]
       ollama-delegate doctor --try "<command>"
       ollama-delegate doctor --probe [model...] [--timeout <seconds>] [--json]

Checks the setup and prints one line per check (PASS, FAIL or WARN) with a fix:
  Settings          every layer (user file, project file, OLLAMA_MCP_* variables) valid
  State dir         writable
  Claude Code CLI   found on the delegate's PATH, and answers --version
  claude sandbox    how claude delegates are confined under the sandbox setting (which
                    governs both engines): bubblewrap jail, Claude Code's sandbox (socat)
  Ollama            reachable at baseUrl (with baseUrls: the first endpoint that answers,
                    where the model checks below run); its version
  Request size      tokens one request of each engine carries (claude: by claudeHarness and
                    its sandbox), and whether Ollama's default 4,096-token context holds it
  Models            listed, which support tools
  Default backend   with defaultBackend: the backend of a job that names none; the
                    default model is then checked there (listed by it), not on Ollama,
                    and the Ollama checks are needed only by calls that name it
  Default model     available, allowed, not retired, supports tools
  Context length    of the default model: enough for the default engine's prompt, and
                    the 64k coding agents need; suggests models derive when it is short
  Retired models    cloud models Ollama has retired that settings still name
  Sandbox           bubblewrap runs a trivial command (native engine); without it,
                    commands run unconfined and replies say so (sandbox: required refuses)
  Change journal    whether turns learn what changed from inotify (Linux; under Node through
                    a helper run by the system's python3) or walk the tree (WARN: Node on
                    Linux without python3)
  Toolchains        what delegates' commands can read of your toolchains in this project
                    (both engines, and verify): each PATH folder opened read-only or why
                    not, the install roots and package caches opened with them, credential
                    files hidden inside, what stays hidden of your home folder, where builds
                    write their caches, and the PATH delegates get (WARN: a PATH folder not
                    opened)
  Ollama pool       with baseUrls: each endpoint of the default Ollama answers, and the
                    models it lacks that others have (warns for the default and allowed)
  Backend <name>    each configured backend answers (a pool: each of its endpoints); one of
                    kind anthropic also: the model it would run is listed, its context
                    holds the claude engine's request and the 64k agents need, and a
                    request with a tool is accepted

Exit code 0 when everything the default engine (defaultEngine) needs passes, 1 when
something it needs fails (other problems are warnings), 2 for a usage error.
Run it in the folder you use Claude Code in: ./ollama-mcp.config.json is read from there.

With --try "<command>", it runs the command in this folder on each engine exactly as a job's
verify would (the sandbox of the delegate's Bash: the native engine's bubblewrap, the claude
engine's jail without network) and prints what the command could read of your toolchains,
then its output and exit code per engine: "can my delegates run my tests?" in one line.
Exit code 0 when it exits 0 on every engine, 1 when not, 2 when this folder cannot be a
job's (your home folder, a system folder, outside workspaceRoots).

With --probe, it tries each model (default: the allowed ones Ollama has, cloud models
included) on one tiny tool-use task, through the path each engine uses: Ollama's /api/chat
(native engine) and the Anthropic-compatible /v1/messages (claude engine, as Claude Code
sends it). Per model: whether it made a structured tool call, wrote the call as text (the
native engine recovers it, Claude Code does not) or made none; prompt and generation speed
from Ollama's timings; the seconds a turn takes on each engine (its per-request prompt at
that prompt speed plus a typical reply); and the engines it works on. Models are tried one
at a time; each request gives up after --timeout seconds (default ${DEFAULT_PROBE_TIMEOUT_S}, a
cold local model takes a while to load). Exit code 0 when at least one model works on some
engine, 1 when none does or Ollama cannot be reached.

Options:
  --json              print the report as JSON: { ok, defaultEngine, checks: [{ id, status,
                      required, summary, hint?, details? }] }; with --probe: { ok, baseUrl,
                      assumptions, models: [{ model, native, claude, promptTokensPerSecond,
                      generationTokensPerSecond, secondsPerTurn, context, usableWith,
                      notes }] }
  --try "<command>"   run a command as each engine's delegates would (see above)
  --probe             try the models on a tool-use task (see above)
  --timeout <s>       with --probe: seconds each request may take
  -h, --help          show this help`;

/** Runs every check; the report says which ones the default engine needs. */
export async function runDoctor(
  env: Record<string, string>,
  cwd: string,
  home?: string,
): Promise<DoctorReport> {
  const resolved = loadSettings({ env, cwd, ...(home !== undefined ? { home } : {}) });
  const s = resolved.settings;
  // A pool of Ollamas is checked in depth at its first endpoint that answers, and each one
  // for an answer.
  const first = s.baseUrls.length > 0 ? { ...s, baseUrl: await firstAnswering(s.baseUrls) } : s;
  const facts = await enginesFacts(s, env, cwd);
  const jail = facts.claude.sandbox;
  const [
    claude,
    ollama,
    sandbox,
    backends,
    poolEndpoints,
    claudeLimits,
    toolchains,
    messages,
    bwrapVersion,
  ] = await Promise.all([
    claudeCheck(resolved, facts.claude, cwd),
    ollamaChecks(first, engineNeed(s.defaultEngine, facts)),
    sandboxCheck(s.sandbox, facts.native),
    backendChecks(s.backends, env),
    probeOllamaPool(s.baseUrls),
    facts.claude.limitsText?.(),
    toolchainsCheck(s, env, cwd, home, resolved.locations.userFile),
    messagesChecks(s, env, facts.claude.request.requiredContext),
    jail.kind === "on" && jail.tools.bwrap ? bubblewrapVersion(jail.tools.bwrap) : undefined,
  ]);
  // With a default backend of the user's, the Ollama's default-model checks are not about the
  // default: the default backend's take their place.
  const own = defaultBackendName(s);
  const ollamaShown = own ? ollama.filter((c) => !OLLAMA_DEFAULT_IDS.includes(c.id)) : ollama;
  const homeChecks = own
    ? defaultBackendChecks(s, own, backends.find((c) => c.id === `backend.${own}`))
    : [];
  // Every endpoint of a pool should hold the models jobs ask for: the default, the allowed.
  const defaultModel = ollamaShown.find((c) => c.id === "model.default" && c.status === "pass")
    ?.details?.model;
  const pool = ollamaPoolCheck(s.baseUrls, poolEndpoints, [
    ...(typeof defaultModel === "string" ? [defaultModel] : []),
    ...s.allowedModels,
  ]);
  const checks = [
    configCheck(resolved),
    stateDirCheck(s.stateDir),
    claude,
    claudeSandboxCheck(s.sandbox, jail, undefined, claudeLimits, bwrapVersion),
    requestSizeCheck(s, facts),
    ...homeChecks,
    ...ollamaShown,
    ...pool,
  ];
  checks.push(sandbox, journalCheck(), toolchains, ...backends, ...messages);
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

/** The first endpoint of a pool that answers its probe, else the first. */
async function firstAnswering(pool: Settings["baseUrls"]): Promise<string> {
  const down = await Promise.all(
    pool.map((e) => probeEndpoint({ url: e.url, kind: "ollama" }, HTTP_TIMEOUT_MS)),
  );
  return pool[Math.max(0, down.indexOf(undefined))]!.url;
}

/**
 * What the default engine cannot run without. claude: the CLI, the default backend (Ollama,
 * or the user's defaultBackend with its checks) and a usable default model. native: its
 * backends when any are named (else Ollama and its default model), and the sandbox. Both:
 * valid settings and a writable state dir.
 */
function neededChecks(s: Settings): (id: Check["id"]) => boolean {
  const always = ["config", "state"];
  const home = defaultBackendName(s);
  if (s.defaultEngine === "claude") {
    const ids = new Set([...always, "claude", "claude.sandbox", "model.default"]);
    if (!home) return (id) => ids.has(id) || id === "ollama";
    return (id) => ids.has(id) || id === `backend.${home}` || id.startsWith(`backend.${home}.`);
  }
  const hasBackends = Object.keys(s.backends).length > 0;
  const ids = new Set([
    ...always,
    "sandbox",
    ...(hasBackends ? [] : ["ollama"]),
    ...(hasBackends && !home ? [] : ["model.default"]),
  ]);
  return (id) => ids.has(id) || (hasBackends && id.startsWith("backend."));
}

/** Entry for main.ts. */
export async function doctorMain(argv: string[], io: CliIo = processIo()): Promise<number> {
  let values;
  let positionals: string[];
  const usage = (message: string) => {
    io.err(`ollama-delegate doctor: ${message}. See doctor --help`);
    return 2;
  };
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        json: { type: "boolean" },
        probe: { type: "boolean" },
        try: { type: "string" },
        timeout: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (e) {
    return usage((e as Error).message);
  }
  if (values.help) {
    io.out(DOCTOR_HELP);
    return 0;
  }
  if (!values.probe && (positionals.length > 0 || values.timeout !== undefined)) {
    return usage(
      positionals.length > 0
        ? `unexpected argument "${positionals[0]}" (models are named only with --probe)`
        : "--timeout goes with --probe",
    );
  }
  const { env, cwd, home } = io;
  if (values.try !== undefined) {
    if (values.probe || values.json || positionals.length > 0) {
      return usage("--try runs one command on its own: give it no other option or argument");
    }
    if (values.try.trim() === "") return usage("--try needs a command, such as --try 'npm test'");
    return await doctorTry(values.try, loadSettings({ env, cwd, home }), io);
  }
  if (values.probe) {
    let timeout = DEFAULT_PROBE_TIMEOUT_S;
    if (values.timeout !== undefined) {
      timeout = Number(values.timeout);
      if (!/^\s*\d+(\.\d+)?\s*$/.test(values.timeout) || !(timeout > 0) || timeout > 3600) {
        return usage(
          `Cannot use --timeout "${values.timeout}": write seconds, more than 0 and at most 3600`,
        );
      }
    }
    const settings = loadSettings({ env, cwd, home }).settings;
    const probe = await runProbe(settings, positionals, { timeoutSeconds: timeout, env, cwd });
    io.out(values.json ? renderProbeJson(probe) : renderProbeText(probe));
    return probe.ok ? 0 : 1;
  }
  const report = await runDoctor(env, cwd, home);
  io.out(values.json ? renderJson(report) : renderText(report, io.colour));
  return report.ok ? 0 : 1;
}

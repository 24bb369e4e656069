import { homedir } from "node:os";
import { parseArgs } from "node:util";
import process from "node:process";
import { writeFileAtomicSync } from "../platform/atomic_write.ts";
import { FIELDS } from "./fields.ts";
import { MAX_TIMER_MS, type SettingKey } from "./types.ts";
import { loadSettings, problemReason, readSettingsFile, type ResolvedSettings } from "./load.ts";
import { canonicalModelName } from "./model_names.ts";
import { applyMapEdit, mapChanges } from "./config_maps.ts";
import { ConfigUsageError } from "./config_errors.ts";
import {
  type ChangeFlag,
  FLAG_TO_KEY,
  joinNegativeValues,
  RESET,
  valueForFlag,
} from "./config_flags.ts";
import { renderJson, renderSettings } from "./config_view.ts";
import { LIST_FLAGS, type ListFlag, listFlagValue } from "./config_lists.ts";

export const CONFIG_HELP = `Usage: ollama-delegate config [options]

Shows the settings in force and where each comes from. With options, changes them in
the user file (default) or the project file, then shows the result. Settings are read
once when the server starts: restart your Claude Code session afterwards.

Options:
  --mode <off|ondemand|auto>       delegationMode: how eagerly delegation is used
  --allow <m1,m2|all>              allowedModels: models delegation may use (all = any)
  --default-model <model|auto>     defaultModel (auto = first allowed cloud model, a local
                                   one with residency local)
  --residency <any|local>          residency: local keeps work on this machine or a private
                                   network (no Ollama cloud model, no remote backend)
  --permission-mode <mode>         defaultPermissionMode: auto, acceptEdits,
                                   bypassPermissions, manual, dontAsk, plan
  --base-url <url>                 baseUrl: the Ollama endpoint (host, host:port or URL)
  --base-urls <url,url,...|none>   baseUrls: the default Ollama as a pool of endpoints (one
                                   per GPU or machine), for both engines (user scope only)
  --claude-bin <path>              claudeBin: the Claude Code CLI
  --state-dir <dir>                stateDir: where job records live
  --job-timeout <duration>         jobTimeoutMs: 90s, 30m, 2h, 7d, or milliseconds
  --max-concurrent <n>             maxConcurrent: delegates running at once per server, and on
                                   each endpoint of the default Ollama across your sessions
                                   (an endpoint's own limit in baseUrls wins there; 1-64)
  --engine <claude|native>         defaultEngine: which engine runs a task by default
  --isolation <none|worktree>      defaultIsolation: worktree = each task in its own git
                                   worktree and branch (delegate/<id>), merged by you
  --sandbox <on|required|off>      sandbox: both engines' commands in bubblewrap. on: where this
                                   machine can (Linux, bubblewrap; socat for claude), else they
                                   run unconfined and every reply says so; required: refuse
                                   instead; off: never (user scope only)
  --retain-days <n>                retainDays: prune finished jobs older than n days (0 = never)
  --workspace-root <dir>           workspaceRoots: jobs may only work inside these directories
                                   (repeat it, or a comma list; none = anywhere allowed; user
                                   scope only). $HOME and system directories stay refused
  --toolchain-path <dir>           toolchainPaths: folders delegates' commands may read besides
                                   the toolchains found on PATH (read-only; repeat it, or a comma
                                   list; none = just PATH's; user scope only)
  --allow-secret-file <name>       allowSecretFiles: secret-looking files (.env, *.pem...)
                                   delegates may read anyway, with file tools and commands (repeat
                                   it, or a comma list; none = no exceptions; user scope only)
  --sandbox-max-processes <n>      sandboxMaxProcesses: processes per sandboxed command
  --sandbox-max-memory <MiB>       sandboxMaxMemoryMb: memory for all processes of a sandboxed
                                   command (per process where no memory cgroup can be made)
  --sandbox-max-file <MiB>         sandboxMaxFileMb: largest file a sandboxed command writes
  --sandbox-tmp <MiB>              sandboxTmpMb: the sandbox's private /tmp (sandbox limits are
                                   user scope only)
  --max-context <tokens|64k|0>     maxContext: the largest context the native engine asks Ollama
                                   for (your GPU's limit); 0 = the model's own (user scope only)
  --keep-alive <duration|default>  keepAlive: how long Ollama keeps a native job's model loaded
                                   (30m, 1h, 0 = unload at once, -1 = forever; default = Ollama's;
                                   user scope only)
  --claude-tools <A,B,...|default> claudeTools: the Claude Code tools a claude delegate gets
                                   (default Bash,Read,Edit,Write,Glob,Grep; each tool's schema is
                                   resent on every request; user scope only)
  --claude-harness <lean|full>     claudeHarness: lean = Claude Code's minimal mode (--bare:
                                   Bash, Read, Edit, a short prompt, ~1.2k tokens a request);
                                   full = its whole harness and every claudeTools tool (~5-7k)
  --review-gate <on|off>           reviewGate: the plugin's Stop hook reviews uncommitted changes
                                   when Claude ends a turn, and blocks the stop for agreed findings
      --gate-severity <severity>         the least severity that blocks (default high),
      --gate-agreement <n>               how many reviewers must agree (default 1),
      --gate-rounds <n>                  blocks per Claude Code session at most (default 2),
      --gate-models <m1,m2|default>      its reviewers (2-5 = a panel; default = default model),
      --gate-timeout <seconds>           the stop goes through after this (default 300; user
                                         scope only, as are the other gate options)
  --backend <name=url[,url...]>    add or replace a backend, or a pool of endpoints of one
                                   kind (user scope only); with
      --backend-kind <kind>              ollama, openai or anthropic (default openai; the
                                         claude engine runs on ollama and anthropic ones),
      --api-key-env <VAR>                the server env variable holding its API key,
      --backend-max <n>                  its concurrency limit (per endpoint of a pool)
  --remove-backend <name>          remove a backend
  --default-backend <name>         defaultBackend: the backend of a job that names none, one of
                                   your backends (ollama = the Ollama at baseUrl; user scope only)
  --price <model=in/out>           pricing: cost per million input/output tokens
  --remove-price <model>           remove a model's price
  --agent-model <name=model>       claudeAgentModels: the model a Claude Code subagent
                                   (~/.claude/agents, .claude/agents) runs on as a delegate, by
                                   its name or its model: alias (sonnet, opus, haiku, inherit)
  --remove-agent-model <name>      remove one (user scope only, as is --agent-model)
  --orchestrator-price <p|default> orchestratorPrice: what your Claude model charges, for the
                                   savings estimate of stats and delegate_usage: opus (default),
                                   sonnet, haiku, fable (list prices) or <in>/<out> per million
  --scope <user|project>           which file to write (default user)
  --json                           print the settings in force as JSON
  -h, --help                       show this help

Files: user = $OLLAMA_MCP_CONFIG or ~/.ollama-mcp/config.json;
       project = ./ollama-mcp.config.json. Environment variables (OLLAMA_MCP_*) win over both.`;

export { ConfigUsageError };

export interface ConfigIo {
  env: Record<string, string | undefined>;
  cwd: string;
  home?: string;
  out: (line: string) => void;
}

/** Runs `ollama-delegate config`. Returns the exit code. */
export function runConfig(argv: string[], io: ConfigIo): number {
  let parsed;
  try {
    parsed = parseArgs({
      args: joinNegativeValues(argv),
      allowPositionals: false,
      options: {
        mode: { type: "string" },
        allow: { type: "string" },
        "default-model": { type: "string" },
        residency: { type: "string" },
        "permission-mode": { type: "string" },
        "base-url": { type: "string" },
        "base-urls": { type: "string" },
        "claude-bin": { type: "string" },
        "state-dir": { type: "string" },
        "job-timeout": { type: "string" },
        "max-concurrent": { type: "string" },
        engine: { type: "string" },
        isolation: { type: "string" },
        sandbox: { type: "string" },
        "retain-days": { type: "string" },
        "workspace-root": { type: "string", multiple: true },
        "toolchain-path": { type: "string", multiple: true },
        "allow-secret-file": { type: "string", multiple: true },
        "sandbox-max-processes": { type: "string" },
        "sandbox-max-memory": { type: "string" },
        "sandbox-max-file": { type: "string" },
        "sandbox-tmp": { type: "string" },
        "max-context": { type: "string" },
        "keep-alive": { type: "string" },
        "claude-tools": { type: "string" },
        "claude-harness": { type: "string" },
        "review-gate": { type: "string" },
        "gate-severity": { type: "string" },
        "gate-agreement": { type: "string" },
        "gate-rounds": { type: "string" },
        "gate-models": { type: "string" },
        "gate-timeout": { type: "string" },
        backend: { type: "string" },
        "backend-kind": { type: "string" },
        "api-key-env": { type: "string" },
        "backend-max": { type: "string" },
        "remove-backend": { type: "string" },
        "default-backend": { type: "string" },
        price: { type: "string" },
        "remove-price": { type: "string" },
        "agent-model": { type: "string" },
        "orchestrator-price": { type: "string" },
        "remove-agent-model": { type: "string" },
        scope: { type: "string" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (e) {
    throw new ConfigUsageError(`${(e as Error).message}. See ollama-delegate config --help`);
  }
  const { values } = parsed;
  if (values.help) {
    io.out(CONFIG_HELP);
    return 0;
  }
  const scope = values.scope ?? "user";
  if (scope !== "user" && scope !== "project") {
    throw new ConfigUsageError(`Cannot use scope "${scope}": choose user or project`);
  }
  const changes: Array<[SettingKey, unknown, string]> = [];
  for (const flag of Object.keys(FLAG_TO_KEY) as ChangeFlag[]) {
    const text = values[flag];
    if (text === undefined) continue;
    changes.push([FLAG_TO_KEY[flag], valueForFlag(flag, text), `--${flag}`]);
  }
  for (const flag of Object.keys(LIST_FLAGS) as ListFlag[]) {
    const texts = values[flag];
    if (texts === undefined) continue;
    const value = listFlagValue(flag, texts, io.cwd, io.home ?? homedir());
    changes.push([LIST_FLAGS[flag], value, `--${flag}`]);
  }
  const load = () =>
    loadSettings({ env: io.env, cwd: io.cwd, ...(io.home ? { home: io.home } : {}) });
  const mapEdits = mapChanges(values);
  const userOnly = [
    ...changes.filter(([key, value]) => {
      const spec = FIELDS.find((f) => f.key === key);
      return spec?.userOnly || spec?.projectRefuses?.includes(value);
    }).map(([key]) => key),
    ...mapEdits.map((m) => m.key).filter((key) => FIELDS.find((f) => f.key === key)?.userOnly),
  ];
  if (scope === "project" && userOnly.length > 0) {
    throw new ConfigUsageError(
      `Cannot set ${userOnly[0]} in the project file: delegates can write there, so it is ` +
        `only read from the user file or the environment. Drop --scope project`,
    );
  }
  if (changes.length === 0 && mapEdits.length === 0) {
    const resolved = load();
    if (values.json) io.out(JSON.stringify(renderJson(resolved), null, 2));
    else for (const line of renderSettings(resolved)) io.out(line);
    return 0;
  }
  const before = load();
  const file = scope === "user" ? before.locations.userFile : before.locations.projectFile;
  const current = readSettingsFile(file);
  if (current.kind === "invalid") {
    throw new ConfigUsageError(
      `Cannot change ${file} (${current.error}). Fix or remove it first; nothing was written`,
    );
  }
  const next: Record<string, unknown> = current.kind === "object" ? { ...current.value } : {};
  for (const [key, value, flag] of changes) {
    if (value === RESET) {
      delete next[key];
      continue;
    }
    const spec = FIELDS.find((f) => f.key === key)!;
    const check = spec.schema.safeParse(value);
    if (!check.success) {
      const reason = check.error.issues[0]?.message ?? "is not valid";
      const hint = key === "jobTimeoutMs" ? ` (1s to ${MAX_TIMER_MS} ms)` : "";
      throw new ConfigUsageError(
        `Cannot set ${key} from ${flag} ${JSON.stringify(value)}: ${reason}${hint}`,
      );
    }
    // Keep what the user typed (e.g. "~/jobs", "host:port"); the loader normalises it.
    next[key] = value;
  }
  for (const edit of mapEdits) next[edit.key] = applyMapEdit(next[edit.key], edit);
  const after = loadSettings({
    env: io.env,
    cwd: io.cwd,
    ...(io.home ? { home: io.home } : {}),
    overrides: { [scope]: next },
  });
  if (scope === "project") {
    const changed = new Set<string>(changes.map(([key]) => key));
    const dropped = after.problems.find((p) => p.layer === "project" && changed.has(p.key));
    if (dropped) {
      throw new ConfigUsageError(
        `Cannot set ${dropped.key} in the project file: ${problemReason(dropped)}. Nothing was ` +
          "written; set it in the user file (drop --scope project)",
      );
    }
  }
  // A default backend that names no backend would quietly leave jobs on Ollama: refused, as a
  // value its schema refuses is, whether the change names it or removes the backend it names.
  const strandedBackend = after.problems.find((p) => p.key === "defaultBackend");
  if (
    strandedBackend && (changes.some(([key]) => key === "defaultBackend") ||
      mapEdits.some((m) => m.key === "backends"))
  ) {
    throw new ConfigUsageError(
      `Cannot leave defaultBackend on a backend that is not there: ${strandedBackend.reason}. ` +
        "Nothing was written",
    );
  }
  const touchesPolicy = changes.some(([key]) => key === "allowedModels" || key === "defaultModel");
  const stranded = touchesPolicy
    ? strandedDefault(after, { scope, setsDefault: changes.some(([k]) => k === "defaultModel") })
    : undefined;
  if (stranded) throw new ConfigUsageError(stranded);
  writeFileAtomicSync(file, JSON.stringify(next, null, 2) + "\n");
  io.out(`Wrote ${file}`);
  for (const key of [...changes.map(([k]) => k), ...mapEdits.map((m) => m.key)]) {
    if (after.sources[key] === "env") {
      const spec = FIELDS.find((f) => f.key === key)!;
      const name = spec.env.find((n) => io.env[n]);
      io.out(`Note: ${name} in the environment overrides ${key}; the file value is not in force.`);
    } else if (scope === "user" && after.sources[key] === "project") {
      io.out(`Note: ${after.locations.projectFile} sets ${key} too and wins over the user file.`);
    }
  }
  io.out("");
  for (const line of renderSettings(after)) io.out(line);
  io.out("");
  io.out("Restart your Claude Code session so the server re-reads its settings.");
  return 0;
}

/**
 * The stranding rule: a change may not leave defaultModel outside the allowlist, where every
 * call that names no model would be refused. The refusal says how to allow the model, in the layer whose list is in
 * force, or pick another.
 */
export function strandedDefault(
  resolved: ResolvedSettings,
  change: { scope: "user" | "project"; setsDefault: boolean },
): string | undefined {
  const { allowedModels, defaultModel } = resolved.settings;
  if (allowedModels.length === 0 || defaultModel === "") return undefined;
  const allowed = new Set(allowedModels.map(canonicalModelName));
  if (allowed.has(canonicalModelName(defaultModel))) return undefined;
  const widened = [...allowedModels, defaultModel].join(",");
  const source = resolved.sources.allowedModels;
  let where = "";
  let allow: string;
  if (source === "env") {
    const name = FIELDS.find((f) => f.key === "allowedModels")!.env[0]!;
    where = `, which ${name} sets`;
    allow = `add "${defaultModel}" to ${name}`;
  } else {
    const scopeFlag = source === "project" ? " --scope project" : "";
    const sameFile = source === change.scope;
    if (source === "project") where = `, which ${resolved.locations.projectFile} sets`;
    allow = `allow it too: ollama-delegate config${scopeFlag} --allow ${widened}` +
      (sameFile && change.setsDefault ? ` --default-model ${defaultModel}` : "") +
      (source === "project" ? " (a project file may only narrow the user file's list)" : "") +
      (sameFile ? "" : ", then run this command again");
  }
  return `Cannot save: default model "${defaultModel}" is not in the allowed list ` +
    `(${allowedModels.join(", ")})${where}. To ${change.setsDefault ? "use" : "keep"} it, ` +
    `${allow}. Or pick an allowed model (--default-model ${allowedModels[0]}), or ` +
    "--default-model auto";
}

/** Entry for main.ts: prints usage errors as one line and exits 2. */
export function configMain(argv: string[]): number {
  try {
    return runConfig(argv, {
      env: process.env,
      cwd: process.cwd(),
      out: (line) => console.log(line),
    });
  } catch (e) {
    if (e instanceof ConfigUsageError) {
      console.error(`ollama-delegate config: ${e.message}`);
      return 2;
    }
    throw e;
  }
}

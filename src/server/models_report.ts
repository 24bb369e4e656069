import { backendClient } from "../backends/kinds.ts";
import type { ModelChoice, ResolvedBackend } from "../jobs/model_choice.ts";
import { KEEP_LOCAL_HINT, placeReason, workPlace } from "../settings/residency.ts";
import type { Residency } from "../settings/types.ts";
import type { ModelCatalog } from "../models/catalog.ts";
import type { SandboxPlan } from "../engines/facts.ts";
import { errorMessage } from "../errors.ts";
import { escapeLine } from "../platform/plain_text.ts";
import type { JobManager } from "../jobs/manager.ts";
import { engineLines } from "./engines_report.ts";
import { endpointRows } from "./pool_report.ts";
import { formatProblems } from "../settings/load.ts";
import type { ToolDeps } from "./tool_deps.ts";

/** Names of injected variables worth showing (values of the rest come from the allowlist). */
const SHOWN = /^(ANTHROPIC_|CLAUDE_|DISABLE_)/;

/** The `ollama_models` report: endpoint, policy, models, delegate env, layers, problems. */
export async function renderModels(deps: ToolDeps): Promise<{ text: string; isError: boolean }> {
  const s = deps.resolved.settings;
  const out: string[] = [];
  let isError = false;
  let version = "";
  let rows: string[] = [];
  const { catalog, facts, models, manager } = await deps.runtime();
  try {
    const view = await catalog.view();
    version = `  (Ollama ${view.version})`;
    // Names and errors come from the backend: escaped, so none can add lines to the report.
    const width = Math.max(8, ...view.entries.map((e) => escapeLine(e.name).length));
    rows = view.entries.map((e) => {
      const notLocal = s.residency === "local" && e.cloud;
      const blocked = !e.allowed || notLocal;
      const notes: string[] = [];
      if (e.capabilities) notes.push(e.capabilities.includes("tools") ? "tools" : "NO tools");
      if (e.contextLength) notes.push(`ctx ${e.contextLength}`);
      if (e.retired) notes.push(`RETIRED: ${escapeLine(e.retired)}`);
      if (!e.allowed) notes.push("BLOCKED by allowedModels");
      if (notLocal) notes.push('BLOCKED by residency "local"');
      return `  ${blocked || e.retired ? "x" : " "} ${escapeLine(e.name).padEnd(width)}  ${
        e.cloud ? "[cloud]" : "[local]"
      }` +
        (notes.length > 0 ? `  ${notes.join(", ")}` : "");
    });
    if (rows.length === 0) rows = ["  (none: pull one, e.g. ollama pull qwen3.5:397b-cloud)"];
  } catch (e) {
    isError = true;
    rows = [`  ${escapeLine(errorMessage(e))}`];
  }
  const own = models.defaultBackend();
  // On the user's default backend a job's model is the defaultModel: no automatic pick there.
  const defaultModel =
    (own
      ? s.defaultModel || `(none: a job on backend "${own}" must name one)`
      : await catalog.describeDefault()) + projectDefaultText(deps);
  const [claude, native] = await Promise.all([facts("claude"), facts("native")]);
  const claudeBinary = claude.binary?.path;
  const shell = native.sandbox;
  out.push(
    `Ollama endpoint:  ${s.baseUrl}${version}`,
    `Delegation mode:  ${s.delegationMode}`,
    `Allowed models:   ${s.allowedModels.length > 0 ? s.allowedModels.join(", ") : "(all)"}`,
    `Default backend:  ${escapeLine(defaultBackendText(models))}`,
    `Default model:    ${escapeLine(defaultModel)}`,
    `Residency:        ${
      escapeLine(await residencyText(s.residency, catalog, models, s.defaultModel))
    }`,
    `Permission mode:  ${s.defaultPermissionMode}`,
    `Claude Code:      ${claudeBinary ?? `NOT FOUND ("${s.claudeBin}"); set claudeBin`}`,
    `State dir:        ${s.stateDir}`,
    `Default engine:   ${s.defaultEngine}   (native Bash sandbox: ${sandboxText(shell)})`,
    ...(await defaultPoolLines(models.backend(undefined)!, manager)),
    "",
    "Available models:",
    ...rows,
    "",
    ...(await backendLines(models.configuredBackends(), catalog, manager)),
    "",
    ...(await engineLines(facts)),
    "",
    ...(await agentLines(deps)),
    "",
    "Environment injected into delegates (everything else is dropped except a small allowlist):",
  );
  const env = claude.childEnv?.("<model>") ?? {};
  for (const [k, v] of Object.entries(env).filter(([k]) => SHOWN.test(k)).sort()) {
    out.push(`  ${k}=${v}`);
  }
  out.push("", "Config layers (later wins):");
  for (const layer of deps.resolved.layers) {
    const where = layer.path ? ` ${layer.path}` : "";
    const keys = layer.keys.length > 0 ? `: ${layer.keys.join(", ")}` : "";
    out.push(
      `  ${layer.name.padEnd(8)}${layer.status}${where}${
        layer.error ? ` (${layer.error})` : ""
      }${keys}`,
    );
  }
  const problems = formatProblems(deps.resolved.problems);
  if (problems.length > 0) {
    out.push(
      "",
      "Invalid settings (ignored):",
      ...problems.map((p) => `  ${p}`),
    );
  }
  out.push(
    "",
    "These settings are the user's. To change them, the user runs ollama-delegate config in a " +
      "terminal (e.g. ollama-delegate config --allow <models> --mode auto) and restarts the " +
      "Claude Code session.",
  );
  return { text: out.join("\n"), isError };
}

/** Where a job that names no backend runs: the Ollama above, or the user's defaultBackend. */
function defaultBackendText(models: ModelChoice): string {
  const name = models.defaultBackend();
  const backend = name === undefined ? undefined : models.backend(name);
  if (!backend) return "ollama (the Ollama endpoint above; set another with defaultBackend)";
  const where = backend.endpoints.length > 1 ? `pool of ${backend.endpoints.length}` : backend.url;
  return `${backend.name}  ${where}  [${backend.kind}]  (defaultBackend: jobs that name no ` +
    "backend run there)";
}

/** One line per agent in force, and one per agent file that cannot be used. */
async function agentLines(deps: ToolDeps): Promise<string[]> {
  const [
    { listAgents, placeLabel },
    { agentPlaces, agentPolicy },
    { projectFallback, projectWidening, wideningNote },
  ] = await Promise.all([
    import("../agents/lookup.ts"),
    import("./intake_host.ts"),
    import("../agents/project_limits.ts"),
  ]);
  const policy = await agentPolicy(deps);
  let listed;
  try {
    listed = await listAgents(agentPlaces(deps));
  } catch (e) {
    return [`Agents: cannot list them (${escapeLine(errorMessage(e))})`];
  }
  const width = Math.max(8, ...listed.agents.map((a) => a.name.length));
  const agents = listed.agents.flatMap((a) => {
    const note = wideningNote(
      a,
      projectWidening(a, policy),
      policy.userMode,
      policy.userAgentsDir,
    );
    // A project agent's fallbacks, judged as for a job on the default model.
    const fallback = projectFallback(a, policy.defaultModel ?? "", policy.userModels).note;
    // A Claude Code subagent says where it is and which model its `model:` became.
    const label = a.origin === "claude-code" ? placeLabel(a) : a.source;
    const model = a.model ?? "default model";
    return [
      `  ${a.name.padEnd(width)}  ${`[${label}]`.padEnd(10)}  ` +
      `${a.engine ?? "default engine"}/${model}` +
      (a.claudeModel ? ` (model: ${a.claudeModel})` : "") +
      (a.origin === "claude-code" && a.tools ? ` tools: ${a.tools.join(", ") || "none"}` : "") +
      `${a.description ? `  ${a.description}` : ""}`,
      ...(a.notes ?? []).map((n) => `    - ${n}`),
      ...(note ? [`    ! ${note}`] : []),
      ...(fallback ? [`    ! ${fallback}`] : []),
    ];
  });
  const problems = listed.problems.map((p) =>
    p.ignored
      ? `  - ${p.name}  [${p.source}]  ${p.reason}`
      : `  x ${p.name || "(folder)"}  [${p.source}]  INVALID: ${p.reason}`
  );
  return [
    "Agents (delegate_start agent: <name>; files: ~/.ollama-mcp/agents/, .ollama-delegate/agents/, " +
    "and your Claude Code subagents in ~/.claude/agents/ and .claude/agents/, models by " +
    "claudeAgentModels):",
    // A project's agent files may be a delegate's: their names and words are escaped.
    ...[...agents, ...problems].map(escapeLine),
  ];
}

/**
 * After the default model: that the project file chose it, or that the project file asked for
 * one it may not choose (settings/load.ts), so the orchestrator sees who moved the work.
 */
function projectDefaultText(deps: ToolDeps): string {
  const { sources, problems, userModels } = deps.resolved;
  if (sources.defaultModel === "project") {
    return `  (set by the project file, among the models you chose; yours: ${
      userModels.defaultModel || "auto"
    })`;
  }
  const refused = problems.find((p) => p.layer === "project" && p.key === "defaultModel");
  if (!refused) return "";
  // The reason without its rule, which the settings problems below say.
  return `  (! the project file's defaultModel ${refused.reason})`;
}

/**
 * The `Residency:` line: the setting, and where a call without a model (or backend) runs, e.g.
 * `any (the default model qwen3.5:397b-cloud runs on ollama.com, through http://...; ...)`.
 */
async function residencyText(
  residency: Residency,
  catalog: ModelCatalog,
  models: ModelChoice,
  defaultModel: string,
): Promise<string> {
  const setting = residency === "local"
    ? "local: only this machine or a private network (no Ollama cloud model, no remote backend)"
    : "any";
  // On the user's default backend the default model is defaultModel itself (no automatic pick).
  const home = models.defaultBackend();
  const model = home ? defaultModel || undefined : await catalog.defaultModel();
  if (model === undefined) return setting;
  const urls = models.backend(home)!.endpoints.map((e) => e.url);
  const where = workPlace(
    [{ name: model, cloud: await models.runsOnCloud(model, home) }],
    urls,
  );
  const reason = placeReason(where);
  if (where.place === "local") {
    return `${setting}; the default model ${model} runs locally (${reason})`;
  }
  if (residency === "local") {
    return `${setting}; the default model ${model} is refused (${reason}): calls must name a ` +
      "local model, or the user sets one (ollama-delegate config --default-model)";
  }
  return `${setting}; the default model ${model} is ${where.place}: ${reason}. ${KEEP_LOCAL_HINT}`;
}

function sandboxText(plan: SandboxPlan): string {
  if (plan.kind === "on") return `bubblewrap (${plan.tools.bwrap})`;
  if (plan.kind === "off") return "OFF, commands run unconfined (user setting)";
  return "unavailable, Bash is refused";
}

/**
 * Native-engine backends other than the default Ollama: each one's models from
 * `/v1/models` (with its own key only), or why it cannot be reached. Asked in parallel,
 * with a short timeout, so one dead backend does not stall the report.
 */
/** The default Ollama's endpoints when it is a pool; nothing when it is baseUrl alone. */
async function defaultPoolLines(backend: ResolvedBackend, manager: JobManager): Promise<string[]> {
  if (backend.endpoints.length < 2) return [];
  const { rows } = await endpointRows(
    backend,
    manager.endpointStates(undefined),
    "  ",
  );
  return [
    `Ollama pool:      ${backend.endpoints.length} endpoints, for both engines (a session keeps ` +
    "to one while it is up; a new one goes to the least busy)",
    ...rows,
  ];
}

async function backendLines(
  backends: readonly ResolvedBackend[],
  catalog: ModelCatalog,
  manager: JobManager,
): Promise<string[]> {
  if (backends.length === 0) {
    return ["Backends:  only the Ollama above (add more: ollama-delegate config --backend)"];
  }
  const rows = await Promise.all(backends.map(async (backend) => {
    const name = backend.name;
    const pooled = backend.endpoints.length > 1;
    const head = pooled
      ? `  ${name}  pool of ${backend.endpoints.length}  [${backend.kind}]`
      : `  ${name}  ${backend.url}  [${backend.kind}]`;
    if (backend.apiKeyEnv && !backend.apiKey) {
      return `${head}  NOT USABLE: $${backend.apiKeyEnv} is not set in the server's environment`;
    }
    let at = backend;
    let endpoints = "";
    if (pooled) {
      const { rows, up } = await endpointRows(
        backend,
        manager.endpointStates(name),
        "      ",
      );
      endpoints = `\n${rows.join("\n")}`;
      if (up.length === 0) return `${head}  UNREACHABLE: no endpoint is up${endpoints}`;
      // The models of the first endpoint that is up: a pool serves the same ones everywhere.
      at = { ...backend, url: up[0]! };
    }
    try {
      const models = await listedModels(at);
      const shown = models.slice(0, 30).map((m) =>
        catalog.isAllowed(m) ? escapeLine(m) : `${escapeLine(m)} (BLOCKED by allowedModels)`
      );
      return `${head}  reachable, ${models.length} model(s)` +
        (shown.length > 0 ? `: ${shown.join(", ")}${models.length > 30 ? ", ..." : ""}` : "") +
        endpoints;
    } catch (e) {
      return `${head}  UNREACHABLE: ${escapeLine(errorMessage(e))}${endpoints}`;
    }
  }));
  return [
    "Backends (backend: <name>; the claude engine runs on kinds ollama and anthropic):",
    ...rows,
  ];
}

/** A backend's models, as its kind lists them; each kind's client is loaded when needed. */
async function listedModels(backend: ResolvedBackend): Promise<string[]> {
  const client = await backendClient(backend.kind, {
    url: backend.url,
    label: `backend "${backend.name}"`,
    ...(backend.apiKey ? { apiKey: backend.apiKey } : {}),
  });
  return await client.models(3000);
}

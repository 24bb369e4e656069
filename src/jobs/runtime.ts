/**
 * The job layer and the model policy that running delegates needs, built at the first call
 * that needs them (or a moment after start-up): the server answers `initialize` without
 * loading them, nor the engines they drive. The terminal's `review` builds the same.
 */
import { join } from "node:path";
import type { EngineFacts } from "../engines/facts.ts";
import type { EngineSetup } from "../engines/types.ts";
import type { JobManager } from "./manager.ts";
import type { ModelChoice } from "./model_choice.ts";
import type { JobStore } from "./store.ts";
import type { PermissionAsker } from "./permission_asks.ts";
import type { ModelCatalog } from "../models/catalog.ts";
import { backendTable, defaultOllamaUrls } from "../settings/backends.ts";
import { startTelemetry } from "../telemetry/telemetry.ts";
import type { Settings } from "../settings/types.ts";

export interface Runtime {
  settings: Settings;
  store: JobStore;
  manager: JobManager;
  catalog: ModelCatalog;
  /** The engine, backend and model of new jobs, after every policy check. */
  models: ModelChoice;
  /** What an engine says about itself here (`ollama_models`: the binary, env and sandbox). */
  facts(engine: string): Promise<EngineFacts>;
}

export interface RuntimeLoader {
  /** The runtime, built at the first call. */
  get(): Promise<Runtime>;
  /** The runtime if it was asked for, once built; undefined when nobody asked. */
  started(): Promise<Runtime> | undefined;
}

/** What only a server has to give the job layer. */
export interface RuntimeExtras {
  /** How a person is asked for permissions a delegate was not given (MCP elicitation). */
  asker?: PermissionAsker;
}

/** A runtime for `setup`, built at the first `get`. */
export function runtimeLoader(
  setup: EngineSetup,
  log: (line: string) => void,
  extras: RuntimeExtras = {},
): RuntimeLoader {
  let runtime: Promise<Runtime> | undefined;
  return {
    get: () => runtime ??= build(setup, log, extras),
    started: () => runtime,
  };
}

async function build(
  setup: EngineSetup,
  log: (line: string) => void,
  extras: RuntimeExtras,
): Promise<Runtime> {
  const [
    { OllamaClient },
    { createEngines, engineFacts },
    { JobManager },
    { ModelChoice },
    { JobStore },
    { ModelCatalog },
    { RetiredModels },
  ] = await Promise.all([
    import("../backends/ollama/api.ts"),
    import("../engines/registry.ts"),
    import("./manager.ts"),
    import("./model_choice.ts"),
    import("./store.ts"),
    import("../models/catalog.ts"),
    import("../models/retired.ts"),
  ]);
  const s = setup.settings;
  // Off, and nothing of OpenTelemetry loaded, unless the environment configures it.
  const telemetry = await startTelemetry(setup.env, log);
  const store = new JobStore(s.stateDir);
  // One table of backends for the whole job layer: model choice and turn placement.
  const backends = backendTable(s, setup.env);
  const retired = new RetiredModels(s.stateDir);
  const manager = new JobManager(store, createEngines(setup), {
    jobTimeoutMs: s.jobTimeoutMs,
    maxConcurrent: s.maxConcurrent,
    pools: backends,
    // Every server of the user shares each endpoint's limit through the state dir.
    slotsDir: join(s.stateDir, ".slots"),
    log,
    pricing: s.pricing,
    dailyBudgets: { usd: s.dailyBudgetUsd, tokens: s.dailyBudgetTokens },
    onFinished: (record, outcome) => retired.noteEnd(record.model, outcome),
    telemetry,
    ...(extras.asker ? { asker: extras.asker } : {}),
  });
  const catalog = new ModelCatalog(
    defaultOllamaUrls(s).map((url) => new OllamaClient(url)),
    { allowedModels: s.allowedModels, defaultModel: s.defaultModel, residency: s.residency },
    retired,
  );
  return {
    settings: s,
    store,
    manager,
    catalog,
    models: new ModelChoice(s, catalog, backends),
    facts: (engine) => engineFacts(engine, setup),
  };
}

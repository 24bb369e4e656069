/**
 * The engines, by name: the one place that knows which folder holds which engine. Each entry
 * gives its traits (what the job layer must know before it runs) and three modules, all
 * loaded at first use so that the server answers `initialize` without them: its job-folder
 * reader (light: how its files are read back), the engine itself (its loop, tools, sandbox)
 * and its facts (what the doctor, the probe and `ollama_models` show of it). The product's
 * engines are registered below through `registerEngine`, as any other engine would be.
 */
import { errorMessage } from "../errors.ts";
import type { EngineName, Settings } from "../settings/types.ts";
import type { EngineFacts, FactsSetup } from "./facts.ts";
import type {
  Activity,
  CheckResult,
  Engine,
  EngineSetup,
  JobFolderReader,
  RunningTurn,
  TurnFacts,
  TurnSink,
  TurnSpec,
  VerifySpec,
} from "./types.ts";

/**
 * What the job layer and the replies must know of an engine before it runs, fixed and known
 * without loading it.
 */
export interface EngineTraits {
  /**
   * It runs on configured backends (delegate_start's `backend`); without it the engine always
   * runs on the default Ollama (baseUrl or its pool).
   */
  backends: boolean;
  /**
   * The API a backend must serve for it: "messages", Anthropic's Messages API (a kind whose
   * facts say `messages`, backends/kinds.ts); absent: any kind.
   */
  backendApi?: "messages";
  /** It takes `files` (a one-shot with files read into the prompt). */
  files: boolean;
  /** The files it reports changed are all the turn changed: it compares the folders itself. */
  completeChanges: boolean;
}

/** One engine's entry in the table. */
export interface EngineEntry {
  traits: EngineTraits;
  folder(): Promise<JobFolderReader>;
  engine(setup: EngineSetup): Promise<Engine>;
  facts(setup: FactsSetup): Promise<EngineFacts>;
  /**
   * Removes what the engine keeps of a conversation outside its job folders (Claude Code's
   * transcript in claudeConfigDir) when the job layer prunes the conversation, every turn of
   * it; with `dryRun` only finds it. Gives the paths removed (or that would be); throws when
   * it could not remove them, and the job layer then keeps the conversation's jobs.
   */
  forgetSession?(settings: Settings, sessionId: string, dryRun: boolean): Promise<string[]>;
  /**
   * Work a server does for this engine once it has started, after `after` (the recovery of
   * dead servers' jobs, which stops what they still ran).
   */
  serverStart?(
    settings: Settings,
    log: (line: string) => void,
    after: Promise<unknown>,
  ): Promise<void>;
}

const TABLE = new Map<string, EngineEntry>();

/** Adds an engine to the table; a name is registered once. */
export function registerEngine(name: string, entry: EngineEntry): void {
  if (!/^[a-z][a-z0-9_-]{0,31}$/.test(name)) {
    throw new TypeError(`Cannot register engine "${name}": use a-z, 0-9, _ or - (32 at most)`);
  }
  if (TABLE.has(name)) {
    throw new TypeError(`Cannot register engine "${name}": an engine of that name is registered`);
  }
  TABLE.set(name, entry);
}

/** Every registered engine's name, the product's first. */
export function engineNames(): string[] {
  return [...TABLE.keys()];
}

/** Whether `name` is a registered engine. */
export function isEngine(name: string): boolean {
  return TABLE.has(name);
}

function entry(name: string): EngineEntry {
  const found = TABLE.get(name);
  if (!found) {
    throw new TypeError(`"${name}" is not an engine (${engineNames().join(", ")})`);
  }
  return found;
}

/** What `engine` is, before it runs (EngineTraits). */
export function engineTraits(engine: string): EngineTraits {
  return entry(engine).traits;
}

/** How the files an engine wrote in a job folder are read back. */
export function folderReader(engine: string): Promise<JobFolderReader> {
  return entry(engine).folder();
}

/** What `engine` says about itself on this machine (facts.ts). */
export function engineFacts(engine: string, setup: FactsSetup): Promise<EngineFacts> {
  return entry(engine).facts(setup);
}

/**
 * Removes what `engine` keeps of conversation `sessionId` outside its job folders
 * (EngineEntry.forgetSession); [] for an engine that keeps nothing there, or is not registered.
 */
export async function forgetSession(
  engine: string,
  settings: Settings,
  sessionId: string,
  dryRun: boolean,
): Promise<string[]> {
  return (await TABLE.get(engine)?.forgetSession?.(settings, sessionId, dryRun)) ?? [];
}

/** Every engine, configured from `setup`; each loads its module at its first turn. */
export function createEngines(setup: EngineSetup): Record<string, Engine> {
  const out: Record<string, Engine> = {};
  for (const [name, modules] of TABLE) out[name] = new LazyEngine(name, modules, setup);
  return out;
}

/**
 * Starts the engines' work for a server that has started: the sweep of sandbox placeholders
 * that dead servers left (both engines mount them), and each engine's own
 * (EngineEntry.serverStart). One that fails is logged, and neither stops the others nor the
 * server.
 */
export async function startEngineWork(
  settings: Settings,
  log: (line: string) => void,
  after: Promise<unknown>,
): Promise<void> {
  const sweep = (async () => {
    const { placeholderRunDir, startPlaceholderSweep } = await import("./placeholder_sweep.ts");
    await startPlaceholderSweep(placeholderRunDir(settings.stateDir), log, after);
  })().catch((cause) => log(`the sweep of sandbox placeholders failed: ${errorMessage(cause)}`));
  await Promise.all([
    sweep,
    ...[...TABLE].map(([name, e]) =>
      e.serverStart?.(settings, log, after).catch((cause) =>
        log(`the ${name} engine's start-up work failed: ${errorMessage(cause)}`)
      )
    ),
  ]);
}

class LazyEngine implements Engine {
  #engine: Promise<Engine> | undefined;

  constructor(
    readonly name: string,
    private readonly modules: EngineEntry,
    private readonly setup: EngineSetup,
  ) {}

  async start(spec: TurnSpec, sink: TurnSink): Promise<RunningTurn> {
    this.#engine ??= this.modules.engine(this.setup);
    return await (await this.#engine).start(spec, sink);
  }

  async verify(spec: VerifySpec): Promise<CheckResult> {
    this.#engine ??= this.modules.engine(this.setup);
    return await (await this.#engine).verify(spec);
  }

  async recentActivity(dir: string, limit: number): Promise<Activity[]> {
    return await (await this.modules.folder()).recentActivity(dir, limit);
  }

  async turnFacts(dir: string): Promise<TurnFacts> {
    return await (await this.modules.folder()).turnFacts(dir);
  }
}

/** The product's engines; deno check asks for an entry for every name in settings' ENGINES. */
const PRODUCT: Record<EngineName, EngineEntry> = {
  claude: {
    // Claude Code speaks the Messages API: Ollama's, or any Anthropic-compatible server's.
    traits: { backends: true, backendApi: "messages", files: false, completeChanges: false },
    folder: async () => (await import("./claude/folder.ts")).claudeFolder,
    engine: async (setup) => (await import("./claude/run.ts")).createEngine(setup),
    facts: async (setup) => (await import("./claude/facts.ts")).claudeFacts(setup),
    forgetSession: async (s, id, dryRun) =>
      (await import("./claude/session_files.ts")).forgetSession(s.claudeConfigDir, id, dryRun),
  },
  native: {
    traits: { backends: true, files: true, completeChanges: true },
    folder: async () => (await import("./native/folder.ts")).nativeFolder,
    engine: async (setup) => (await import("./native/run.ts")).createEngine(setup),
    facts: async (setup) => (await import("./native/facts.ts")).nativeFacts(setup),
  },
};
for (const [name, modules] of Object.entries(PRODUCT)) registerEngine(name, modules);

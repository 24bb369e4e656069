/**
 * The engines, by name. Each registers two modules, both loaded at first use so that the
 * server answers `initialize` without them: its job-folder reader (light: how its files are
 * read back) and the engine itself (its loop, tools, sandbox). Adding an engine takes its
 * folder under src/engines/, its name in settings' ENGINES, and its entry here.
 */
import type { EngineName } from "../settings/types.ts";
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

interface EngineModules {
  folder(): Promise<JobFolderReader>;
  engine(setup: EngineSetup): Promise<Engine>;
}

const ENGINES: Record<EngineName, EngineModules> = {
  claude: {
    folder: async () => (await import("./claude/folder.ts")).claudeFolder,
    engine: async (setup) => (await import("./claude/run.ts")).createEngine(setup),
  },
  native: {
    folder: async () => (await import("./native/folder.ts")).nativeFolder,
    engine: async (setup) => (await import("./native/run.ts")).createEngine(setup),
  },
};

/** How the files an engine wrote in a job folder are read back. */
export function folderReader(engine: EngineName): Promise<JobFolderReader> {
  return ENGINES[engine].folder();
}

/** Every engine, configured from `setup`; each loads its module at its first turn. */
export function createEngines(setup: EngineSetup): Record<EngineName, Engine> {
  const out = {} as Record<EngineName, Engine>;
  for (const name of Object.keys(ENGINES) as EngineName[]) {
    out[name] = new LazyEngine(name, ENGINES[name], setup);
  }
  return out;
}

class LazyEngine implements Engine {
  #engine: Promise<Engine> | undefined;

  constructor(
    readonly name: EngineName,
    private readonly modules: EngineModules,
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

  async facts(dir: string): Promise<TurnFacts> {
    return await (await this.modules.folder()).facts(dir);
  }
}

/** How the native engine's Bash runs on this machine. */
export type ShellSandbox =
  | { kind: "bwrap"; bwrap: string }
  | { kind: "unconfined" }
  | { kind: "refused" };

/** What `ollama_models` shows about how delegates run; each asks its engine at first use. */
export interface DelegateFacts {
  /** Where the claude engine's binary resolves for a child; undefined when not found. */
  claudeBinary(): Promise<string | undefined>;
  /** The environment a claude delegate of `model` gets. */
  claudeEnv(model: string): Promise<Record<string, string>>;
  /** How the native engine's Bash runs here. */
  nativeShell(): Promise<ShellSandbox>;
}

export function delegateFacts(setup: EngineSetup): DelegateFacts {
  const claude = async () => (await import("./claude/run.ts")).createEngine(setup);
  return {
    claudeBinary: async () => (await claude()).resolveBinary(setup.serverCwd),
    claudeEnv: async (model) => (await claude()).childEnv(model),
    async nativeShell() {
      const runner = (await import("./native/sandbox/shell_runner.ts")).shellRunner(
        setup.settings.sandbox,
      );
      return runner.kind === "bwrap"
        ? { kind: "bwrap", bwrap: runner.bwrap }
        : { kind: runner.kind };
    },
  };
}

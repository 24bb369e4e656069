/**
 * Which engine, backend and model a new job runs on, after every policy check: the
 * allowlist binds every backend; a model on the default Ollama must also be listed there and,
 * unless the job is a one-shot without tools, support tools (the catalog checks both); with
 * `residency: local` the model and every endpoint of its backend stay on this machine or a
 * private network (jobs/residency.ts).
 */
import {
  backendNames,
  type BackendTable,
  defaultBackendName,
  resolveBackend,
  type ResolvedBackend,
} from "../settings/backends.ts";
import { engineTraits } from "../engines/registry.ts";
import { kindFacts } from "../backends/kinds.ts";
import { BACKEND_KINDS } from "../settings/types.ts";
import type { ModelCatalog } from "../models/catalog.ts";
import { hasCloudSuffix } from "../settings/model_names.ts";
import type { Settings } from "../settings/types.ts";
import { JobError, type ModelRole } from "./errors.ts";
import { residencyProblem } from "./residency.ts";

export type { ResolvedBackend };

/** What a call asks for. */
export interface ModelRequest {
  engine: string;
  model?: string | undefined;
  backend?: string | undefined;
  /** Files the native engine reads into the prompt. */
  files?: readonly string[] | undefined;
  /** An empty list makes a one-shot without tools. */
  allowedTools?: readonly string[] | undefined;
  /** Whose model a named one is, for a refusal; "call" when absent. */
  role?: ModelRole | undefined;
}

/** What a new job runs on. */
export interface ModelTarget {
  model: string;
  /** A named backend of the native engine; absent = the default Ollama. */
  backend?: string;
  /** The model runs on Ollama's cloud (its name, or its Ollama lists it so). */
  cloud: boolean;
}

export class ModelChoice {
  readonly #backends: BackendTable;

  constructor(
    private readonly settings:
      & Pick<Settings, "baseUrl" | "defaultModel" | "allowedModels">
      & Partial<Pick<Settings, "residency">>,
    private readonly catalog: ModelCatalog,
    /** The job layer's one table (backendTable), which the endpoint placer resolves in too. */
    backends: BackendTable,
  ) {
    this.#backends = backends;
  }

  /** A native backend by name, its key looked up; undefined = the Ollama at baseUrl. */
  backend(name: string | undefined): ResolvedBackend | undefined {
    return resolveBackend(this.#backends, name);
  }

  /** The user's backend a job that names none runs on; undefined = the Ollama at baseUrl. */
  defaultBackend(): string | undefined {
    return defaultBackendName(this.#backends);
  }

  /** The backends the user configured (the default Ollama not among them unless named). */
  configuredBackends(): ResolvedBackend[] {
    return backendNames(this.#backends).filter((n) => Object.hasOwn(this.#backends.backends, n))
      .map((n) => this.backend(n)!);
  }

  /** Whether a job of `engine` can run on the backend named `name` (it exists and speaks its API). */
  runsOn(engine: string, name: string): boolean {
    const traits = engineTraits(engine);
    const backend = traits.backends ? this.backend(name) : undefined;
    if (!backend) return false;
    return traits.backendApi !== "messages" || kindFacts(backend.kind).messages;
  }

  /** The model (and backend) of a new job; throws a JobError or the catalog's DelegateError. */
  async choose(request: ModelRequest): Promise<ModelTarget> {
    const s = this.settings;
    const role: ModelRole = request.model?.trim() ? request.role ?? "call" : "default";
    const traits = engineTraits(request.engine);
    if (!traits.files && request.files !== undefined) {
      throw new JobError({ kind: "needs-native", what: "files", baseUrl: s.baseUrl });
    }
    if (!traits.backends) {
      if (request.backend !== undefined) {
        throw new JobError({ kind: "needs-native", what: "backend", baseUrl: s.baseUrl });
      }
      return await this.#resident(role, await this.catalog.resolve(request.model), undefined);
    }
    // A one-shot without tools needs no tool support, on an engine that runs it without any
    // (the native one); Claude Code's requests always carry its tools.
    const oneShot = traits.files && request.allowedTools !== undefined &&
      request.allowedTools.length === 0;
    // A call that names no backend runs on the user's default one (defaultBackend) when set:
    // from here on it is as if the call had named it (its kind checked, its record naming it).
    const named = request.backend ?? this.defaultBackend();
    const backend = this.backend(named);
    if (!backend) {
      throw new JobError({
        kind: "unknown-backend",
        name: named,
        configured: backendNames(this.#backends),
      });
    }
    if (traits.backendApi === "messages" && !kindFacts(backend.kind).messages) {
      throw new JobError({
        kind: "backend-api",
        engine: request.engine,
        backend: backend.name,
        backendKind: backend.kind,
        needs: "messages",
        kinds: BACKEND_KINDS.filter((k) => kindFacts(k).messages),
      });
    }
    if (backend.builtIn && named === undefined) {
      const model = await this.catalog.resolve(request.model, { needsTools: !oneShot });
      return await this.#resident(role, model, undefined);
    }
    const model = request.model?.trim() || s.defaultModel;
    if (!model) throw new JobError({ kind: "no-model-for-backend", backend: backend.name });
    if (!this.catalog.isAllowed(model)) {
      throw new JobError({ kind: "model-not-allowed", model, allowed: s.allowedModels });
    }
    return await this.#resident(role, model, backend.name);
  }

  /**
   * Whether `model` runs on Ollama's cloud: on the default Ollama as it lists the model too,
   * on a named backend by the name (a cloud model's name says so wherever it is served).
   */
  async runsOnCloud(model: string, backend: string | undefined): Promise<boolean> {
    return backend === undefined ? await this.catalog.runsOnCloud(model) : hasCloudSuffix(model);
  }

  /**
   * Throws the JobError of a turn of `model` on `backend` (undefined = the default Ollama)
   * that `residency: local` refuses.
   */
  async checkResidency(role: ModelRole, model: string, backend: string | undefined) {
    if (this.#residency !== "local") return;
    this.#refuse(role, model, await this.runsOnCloud(model, backend), backend);
  }

  /** Whether a turn of `model` on `backend` stays local, or residency lets it go anywhere. */
  async staysLocal(model: string, backend: string | undefined): Promise<boolean> {
    if (this.#residency !== "local") return true;
    const resolved = this.backend(backend);
    if (!resolved) return false;
    const cloud = await this.runsOnCloud(model, backend);
    return residencyProblem("local", "call", { name: model, cloud }, resolved) === undefined;
  }

  get #residency() {
    return this.settings.residency ?? "any";
  }

  #refuse(role: ModelRole, model: string, cloud: boolean, backend: string | undefined): void {
    const resolved = this.backend(backend);
    const problem = resolved &&
      residencyProblem(this.#residency, role, { name: model, cloud }, resolved);
    if (problem) throw new JobError(problem);
  }

  /** The target, once residency allows it, with where its model runs for the job's record. */
  async #resident(
    role: ModelRole,
    model: string,
    backend: string | undefined,
  ): Promise<ModelTarget> {
    const cloud = await this.runsOnCloud(model, backend);
    this.#refuse(role, model, cloud, backend);
    return { model, ...(backend !== undefined ? { backend } : {}), cloud };
  }
}

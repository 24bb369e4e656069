import { DelegateError } from "../errors.ts";
import { OllamaClient, type OllamaModel } from "../backends/ollama/api.ts";
import { canonicalModelName, hasCloudSuffix, sameModel } from "../settings/model_names.ts";
import type { RetiredModels } from "./retired.ts";
import type { Residency } from "../settings/types.ts";

/** A model as `ollama_models` shows it. */
export interface CatalogEntry {
  name: string;
  cloud: boolean;
  allowed: boolean;
  capabilities?: string[];
  contextLength?: number;
  retired?: string;
}

export interface CatalogView {
  version: string;
  entries: CatalogEntry[];
}

export interface CatalogPolicy {
  allowedModels: readonly string[];
  defaultModel: string;
  /** "local": the model picked when none is set is never a cloud one. Absent = "any". */
  residency?: Residency;
}

/** Cloud when Ollama says so (`remote_host`) or the name carries a cloud suffix. */
export function isCloud(model: OllamaModel): boolean {
  return model.remoteHost !== undefined || hasCloudSuffix(model.name);
}

/** Ollama's model list checked against the user's policy and the retired marks. */
export class ModelCatalog {
  #cache: { at: number; view: Promise<{ version: string; models: OllamaModel[] }> } | undefined;
  readonly #clients: readonly OllamaClient[];
  /** The endpoint that answered last: a pool of Ollamas serves the same models everywhere. */
  #current = 0;

  constructor(
    /** One Ollama, or each endpoint of a pool of them (asked in order until one answers). */
    clients: OllamaClient | readonly OllamaClient[],
    private readonly policy: CatalogPolicy,
    private readonly retired: RetiredModels,
    private readonly cacheMs = 3000,
  ) {
    this.#clients = Array.isArray(clients) ? clients : [clients as OllamaClient];
    if (this.#clients.length === 0) throw new TypeError("ModelCatalog needs an Ollama client");
  }

  /** The Ollama the catalog reads from now. */
  get client(): OllamaClient {
    return this.#clients[this.#current]!;
  }

  #fetch(): Promise<{ version: string; models: OllamaModel[] }> {
    const now = Date.now();
    if (this.#cache && now - this.#cache.at < this.cacheMs) return this.#cache.view;
    const view = (async () => {
      let failure: unknown;
      for (let i = 0; i < this.#clients.length; i++) {
        const at = (this.#current + i) % this.#clients.length;
        const client = this.#clients[at]!;
        try {
          const version = await client.version();
          const models = await client.tags();
          this.#current = at;
          return { version, models };
        } catch (e) {
          failure ??= e;
        }
      }
      throw failure;
    })();
    this.#cache = { at: now, view };
    view.catch(() => (this.#cache = undefined));
    return view;
  }

  isAllowed(model: string): boolean {
    const list = this.policy.allowedModels;
    return list.length === 0 || list.some((m) => sameModel(m, model));
  }

  async view(): Promise<CatalogView> {
    const { version, models } = await this.#fetch();
    const entries = models.map((m): CatalogEntry => {
      const entry: CatalogEntry = {
        name: m.name,
        cloud: isCloud(m),
        allowed: this.isAllowed(m.name),
      };
      if (m.capabilities) entry.capabilities = m.capabilities;
      if (m.contextLength) entry.contextLength = m.contextLength;
      const mark = this.retired.get(m.name);
      if (mark) entry.retired = mark.text;
      return entry;
    });
    return { version, entries };
  }

  /**
   * The model a new job runs on, after every check: allowlist, retirement, Ollama's list
   * and tool support. Throws a DelegateError that says what to do instead.
   */
  async resolve(
    requested: string | undefined,
    options: { needsTools?: boolean } = {},
  ): Promise<string> {
    const { models } = await this.#fetch();
    const model = requested?.trim() || this.policy.defaultModel || this.#pickDefault(models);
    if (!this.isAllowed(model)) {
      throw new DelegateError({
        action: "Cannot start job",
        facts: `model "${model}" is not in the allowed list ` +
          `(${this.policy.allowedModels.join(", ")})`,
        advice: "Use one of those; only the user can change the list, from a terminal " +
          "(ollama-delegate config --allow ...)",
      });
    }
    const mark = this.retired.get(model);
    if (mark) {
      throw new DelegateError({
        action: "Cannot start job",
        facts: `model "${model}" was retired by Ollama (${mark.text})`,
        advice: "Pick another model; see ollama_models",
      });
    }
    const listed = models.find((m) => sameModel(m.name, model));
    if (!listed && !hasCloudSuffix(model)) {
      const names = models.map((m) => m.name);
      throw new DelegateError({
        action: "Cannot start job",
        facts: `Ollama at ${this.client.baseUrl} has no model "${model}". ` +
          (names.length > 0 ? `Available: ${names.join(", ")}` : "It lists no models"),
        advice: `Pull it with "ollama pull ${model}"`,
      });
    }
    const capabilities = listed?.capabilities ?? (await this.#showCapabilities(model));
    if (options.needsTools !== false && capabilities && !capabilities.includes("tools")) {
      throw new DelegateError({
        action: "Cannot start job",
        facts: `model "${model}" does not support tools (Ollama lists ${
          capabilities.join(", ") || "no capabilities"
        }), and a delegate that uses tools needs them`,
        advice: "Pick a model with the tools capability (see ollama_models), or, on the native " +
          "engine, make it a one-shot with allowed_tools: []",
      });
    }
    return listed?.name ?? model;
  }

  /**
   * Whether `model` runs on Ollama's cloud: by its name, or because this Ollama lists it as a
   * cloud model (`remote_host`: a model made `FROM` a cloud one keeps the cloud's place under
   * a name of its own). By the name alone when Ollama cannot be asked.
   */
  async runsOnCloud(model: string): Promise<boolean> {
    if (hasCloudSuffix(model)) return true;
    try {
      const { models } = await this.#fetch();
      const listed = models.find((m) => sameModel(m.name, model));
      return listed !== undefined && isCloud(listed);
    } catch {
      return false;
    }
  }

  async #showCapabilities(model: string): Promise<string[] | undefined> {
    try {
      return (await this.client.show(model))?.capabilities;
    } catch {
      // Cloud details come from ollama.com through Ollama; when that fails the inference
      // call will report the real problem, so do not block on it here.
      return undefined;
    }
  }

  #pickDefault(models: OllamaModel[]): string {
    const usable = (name: string) => !this.retired.get(name);
    const allowed = this.policy.allowedModels;
    const pool = allowed.length > 0
      ? allowed.filter((a) => hasCloudSuffix(a) || models.some((m) => sameModel(m.name, a)))
        .map((a) => ({
          name: a,
          cloud: hasCloudSuffix(a) || models.some((m) => sameModel(m.name, a) && isCloud(m)),
        }))
      : models.map((m) => ({ name: m.name, cloud: isCloud(m) }));
    // Cloud first, as the seed picks (docs/settings.md); never cloud when work stays local.
    const local = this.policy.residency === "local";
    const pick = local
      ? pool.find((m) => !m.cloud && usable(m.name))
      : pool.find((m) => m.cloud && usable(m.name)) ?? pool.find((m) => usable(m.name));
    if (!pick && local) {
      throw new DelegateError({
        action: "Cannot pick a model",
        facts: `residency is "local" and none of the ${
          allowed.length > 0 ? `allowed models (${allowed.join(", ")})` : "models"
        } of Ollama at ${this.client.baseUrl} runs locally`,
        advice: `Pull a local model (e.g. "ollama pull qwen3-coder:30b")${
          allowed.length > 0 ? " and allow it" : ""
        }, or name one`,
      });
    }
    if (!pick) {
      throw new DelegateError(
        allowed.length > 0
          ? {
            action: "Cannot pick a model",
            facts: `none of the allowed models (${allowed.join(", ")}) is available from ` +
              `Ollama at ${this.client.baseUrl}`,
            advice: "Pull one, or name a model",
          }
          : {
            action: "Cannot pick a model",
            facts: `Ollama at ${this.client.baseUrl} lists no usable models`,
            advice: 'Pull one (e.g. "ollama pull qwen3.5:397b-cloud") or name a model',
          },
      );
    }
    return pick.name;
  }

  /** The model a call without one gets, or undefined when none is available now. */
  async defaultModel(): Promise<string | undefined> {
    if (this.policy.defaultModel) return this.policy.defaultModel;
    try {
      return this.#pickDefault((await this.#fetch()).models);
    } catch {
      return undefined;
    }
  }

  /** The default model as `ollama_models` reports it, without failing. */
  async describeDefault(): Promise<string> {
    if (this.policy.defaultModel) return this.policy.defaultModel;
    const model = await this.defaultModel();
    return model ? `${model} (auto)` : "(auto: none available)";
  }
}

export { canonicalModelName };

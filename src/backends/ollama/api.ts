import { errorDetail } from "../http_util.ts";
import { isObject } from "../../platform/json_object.ts";
import { DelegateError, errorMessage } from "../../errors.ts";
import { readBounded, REPLY_LIMITS, sizeText } from "../bounded.ts";
import type { LoadedModel } from "../backend_client.ts";

/** One entry of `GET /api/tags`, reduced to what we use. */
export interface OllamaModel {
  name: string;
  /** Set for cloud stubs (`remote_host`), the reliable cloud marker besides the suffix. */
  remoteHost?: string;
  /** Present on Ollama 0.30+ (`capabilities`, `details.context_length`). */
  capabilities?: string[];
  contextLength?: number;
}

export interface ShowInfo {
  capabilities?: string[];
  contextLength?: number;
  /** The Modelfile's `PARAMETER num_ctx`, when it sets one. */
  numCtx?: number;
  /** The model this one was created `from` (`details.parent_model`), when Ollama says. */
  parentModel?: string;
  /** A cloud stub: `remote_host` is set. */
  remote?: boolean;
}

/** A non-2xx answer from Ollama, with its `error` text. */
export class OllamaHttpError extends DelegateError {
  override name = "OllamaHttpError";
  constructor(readonly status: number, readonly detail: string, message: string) {
    super(message);
  }
}

type Json = Record<string, unknown>;

/** A small client for Ollama's native `/api/*` endpoints. */
export class OllamaClient {
  constructor(readonly baseUrl: string, private readonly timeoutMs = 5000) {}

  /** The server version; proves that an Ollama (not just any HTTP server) answers. */
  async version(): Promise<string> {
    const body = await this.#get("/api/version");
    if (!isObject(body) || typeof body.version !== "string") {
      throw new DelegateError({
        action: `Cannot use ${this.baseUrl}`,
        facts: "it answered /api/version without a version, so it is not Ollama",
        advice: "Point baseUrl at Ollama: ollama-delegate config --base-url <url>",
      });
    }
    return body.version;
  }

  async tags(): Promise<OllamaModel[]> {
    const body = await this.#get("/api/tags");
    if (!isObject(body) || !Array.isArray(body.models)) {
      throw new DelegateError(`Cannot list models: ${this.baseUrl}/api/tags gave no model list`);
    }
    const out: OllamaModel[] = [];
    for (const m of body.models) {
      if (!isObject(m) || typeof m.name !== "string") continue;
      const model: OllamaModel = { name: m.name };
      if (typeof m.remote_host === "string" && m.remote_host !== "") {
        model.remoteHost = m.remote_host;
      }
      if (Array.isArray(m.capabilities)) model.capabilities = m.capabilities.map(String);
      const details = isObject(m.details) ? m.details : {};
      if (typeof details.context_length === "number") model.contextLength = details.context_length;
      out.push(model);
    }
    return out;
  }

  /**
   * `GET /api/ps`: the models in memory. A model that is not listed is not loaded, and its
   * next request loads it with whatever context Ollama picks then.
   */
  async ps(): Promise<LoadedModel[]> {
    const body = await this.#get("/api/ps");
    if (!isObject(body) || !Array.isArray(body.models)) {
      throw new DelegateError(`Cannot list loaded models: ${this.baseUrl}/api/ps gave no list`);
    }
    const out: LoadedModel[] = [];
    for (const m of body.models) {
      if (!isObject(m)) continue;
      const name = typeof m.name === "string" && m.name !== ""
        ? m.name
        : typeof m.model === "string"
        ? m.model
        : "";
      if (name === "") continue;
      const loaded: LoadedModel = { name };
      if (typeof m.context_length === "number" && m.context_length > 0) {
        loaded.contextLength = m.context_length;
      }
      out.push(loaded);
    }
    return out;
  }

  /** `POST /api/show`; undefined when Ollama does not know the model (404). */
  async show(model: string): Promise<ShowInfo | undefined> {
    let body: unknown;
    try {
      body = await this.#request("/api/show", { method: "POST", body: JSON.stringify({ model }) });
    } catch (e) {
      if (e instanceof OllamaHttpError && e.status === 404) return undefined;
      throw e;
    }
    return parseShow(body);
  }

  /**
   * `POST /api/create` deriving `model` from `from` with Modelfile `parameters` (e.g.
   * `{num_ctx: 65536}`); a model of that name is replaced. Without streaming, Ollama answers
   * once the model is written, or with an HTTP error.
   */
  async create(
    model: string,
    from: string,
    parameters: Record<string, unknown>,
    timeoutMs = this.timeoutMs,
  ): Promise<void> {
    const body = await this.#request("/api/create", {
      method: "POST",
      body: JSON.stringify({ model, from, parameters, stream: false }),
    }, timeoutMs);
    // A create that fails after it started can still answer 200 with an error object.
    if (isObject(body) && typeof body.error === "string") {
      throw new OllamaHttpError(
        200,
        body.error.slice(0, 300),
        `Ollama at ${this.baseUrl} could not create "${model}": ${body.error.slice(0, 300)}`,
      );
    }
  }

  #get(path: string): Promise<unknown> {
    return this.#request(path, { method: "GET" });
  }

  async #request(path: string, init: RequestInit, timeoutMs = this.timeoutMs): Promise<unknown> {
    let response: Response;
    try {
      response = await fetch(this.baseUrl + path, {
        ...init,
        headers: { "content-type": "application/json" },
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (cause) {
      const inner = (cause as { cause?: { code?: string; message?: string } }).cause;
      const why = (cause as Error).name === "TimeoutError"
        ? `no answer within ${timeoutMs / 1000}s`
        : inner?.code ?? inner?.message ?? (cause as Error).message;
      throw new DelegateError({
        facts: `Cannot reach Ollama at ${this.baseUrl} (${why})`,
        advice: `Start it with "ollama serve" or the Ollama app; if it listens elsewhere, run ` +
          `ollama-delegate config --base-url <url> or set OLLAMA_MCP_BASE_URL`,
      }, { cause });
    }
    // An error needs only its message; a listing or model card is far below the JSON cap.
    const max = response.ok ? REPLY_LIMITS.jsonBodyBytes : REPLY_LIMITS.errorBodyBytes;
    let read: { bytes: Uint8Array; complete: boolean };
    try {
      read = await readBounded(response.body, max);
    } catch (cause) {
      // The timeout covers the body too: a body that trickles in is stopped by it.
      const why = (cause as Error).name === "TimeoutError"
        ? `it was not done within ${timeoutMs / 1000}s`
        : errorMessage(cause);
      throw new DelegateError(
        `Ollama at ${this.baseUrl} broke off its answer to ${path} (${why}). ` +
          `It may have crashed or restarted: check its log, then try again`,
        { cause },
      );
    }
    if (response.ok && !read.complete) {
      throw new DelegateError(
        `Cannot use the answer of ${this.baseUrl} to ${path}: it is over ` +
          `${sizeText(max)} (the cap), so reading stopped. Check that baseUrl points at Ollama`,
      );
    }
    const text = new TextDecoder().decode(read.bytes);
    let body: unknown = undefined;
    try {
      body = JSON.parse(text);
    } catch {
      // Not JSON (or an error body cut at the cap): keep the text for the error below.
    }
    if (!response.ok) {
      const detail = errorDetail(body, text).slice(0, 300) +
        (read.complete ? "" : ` [error body over ${sizeText(max)}, not read]`);
      throw new OllamaHttpError(
        response.status,
        detail,
        `Ollama at ${this.baseUrl} answered ${path} with HTTP ${response.status}: ${detail}`,
      );
    }
    return body;
  }
}

/**
 * What a `POST /api/show` reply says of a model; the one reader of that reply (the client and
 * the doctor's context check both use it). Fields Ollama leaves out stay undefined.
 */
export function parseShow(body: unknown): ShowInfo {
  if (!isObject(body)) return {};
  const info: ShowInfo = {};
  if (Array.isArray(body.capabilities)) info.capabilities = body.capabilities.map(String);
  if (isObject(body.model_info)) {
    for (const [key, value] of Object.entries(body.model_info)) {
      if (key.endsWith(".context_length") && typeof value === "number") {
        info.contextLength ??= value;
      }
    }
    // The model's own architecture wins over other `.context_length` keys (projectors...).
    const arch = body.model_info["general.architecture"];
    const own = typeof arch === "string" ? body.model_info[`${arch}.context_length`] : undefined;
    if (typeof own === "number") info.contextLength = own;
  }
  // `parameters` is the Modelfile's PARAMETER lines, one per line: "num_ctx   65536".
  const parameters = typeof body.parameters === "string" ? body.parameters : "";
  const numCtx = Number(/^\s*num_ctx\s+(\d+)\s*$/m.exec(parameters)?.[1] ?? NaN);
  if (Number.isInteger(numCtx) && numCtx > 0) info.numCtx = numCtx;
  const details = isObject(body.details) ? body.details : {};
  if (typeof details.parent_model === "string" && details.parent_model !== "") {
    info.parentModel = details.parent_model;
  }
  if (typeof body.remote_host === "string" && body.remote_host !== "") info.remote = true;
  return info;
}

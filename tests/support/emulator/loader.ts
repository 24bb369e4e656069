/**
 * The models an emulated Ollama keeps in memory: the context each was loaded with, until when
 * (`keep_alive`, default 5m; 0 unloads after the request, a negative value keeps it forever),
 * how often it was loaded and reloaded, and what `GET /api/ps` lists
 * (server/routes.go PsHandler: latest expiry first, with `context_length`).
 */

import { detailsOf, type ModelEntry } from "./models.ts";
import type { ContextOptions } from "./context.ts";

export interface LoadedModel {
  entry: ModelEntry;
  contextLength: number;
  /** Epoch ms; Infinity for keep_alive < 0. */
  expiresAt: number;
}

const DEFAULT_KEEP_ALIVE_MS = 5 * 60_000;
/** Roughly the KV cache of an 8B model per token (fp16), so a longer context looks bigger. */
const KV_BYTES_PER_TOKEN = 131_072;

const GO_UNITS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  "µs": 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** A keep_alive value in ms (Infinity = forever), as api.Duration reads it; throws a
 * RangeError with Go's wording for what Go would refuse. */
export function keepAliveMs(value: unknown, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value === "number") return value < 0 ? Infinity : value * 1000;
  if (typeof value !== "string") {
    throw new RangeError(`Unsupported type: '${typeof value}'`);
  }
  const s = value.trim();
  if (s === "0") return 0;
  const m = /^([-+]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h))+$/.exec(s);
  if (!m) {
    throw new RangeError(
      /^[-+]?\d+(\.\d*)?$/.test(s)
        ? `time: missing unit in duration ${JSON.stringify(s)}`
        : `time: invalid duration ${JSON.stringify(s)}`,
    );
  }
  let ms = 0;
  for (const part of s.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/g)) {
    ms += Number(part[1]) * (GO_UNITS[part[2] ?? "ms"] ?? 1);
  }
  return m[1] === "-" && ms > 0 ? Infinity : ms;
}

/** Models in memory, with load and reload counts per model. */
export class ModelLoader {
  #loaded = new Map<string, LoadedModel>();
  #loads = new Map<string, number>();
  #reloads = new Map<string, number>();
  #defaultKeepAliveMs: number;

  constructor(opts: ContextOptions) {
    this.#defaultKeepAliveMs = keepAliveMs(opts.keepAlive, DEFAULT_KEEP_ALIVE_MS);
  }

  get defaultKeepAliveMs(): number {
    return this.#defaultKeepAliveMs;
  }

  #current(key: string, now: number): LoadedModel | undefined {
    const m = this.#loaded.get(key);
    if (m && m.expiresAt <= now) {
      this.#loaded.delete(key);
      return undefined;
    }
    return m;
  }

  /** Loads the model with `contextLength` (a reload if it is loaded with another one) and
   * restarts its keep-alive timer. Cloud models are never loaded here. */
  use(
    entry: ModelEntry,
    contextLength: number,
    keepAlive: number,
    now = Date.now(),
  ): { load: boolean; reload: boolean } {
    if (entry.remote) return { load: false, reload: false };
    const current = this.#current(entry.key, now);
    const reload = current !== undefined && current.contextLength !== contextLength;
    if (!current || reload) this.#loads.set(entry.key, (this.#loads.get(entry.key) ?? 0) + 1);
    if (reload) this.#reloads.set(entry.key, (this.#reloads.get(entry.key) ?? 0) + 1);
    this.#loaded.set(entry.key, { entry, contextLength, expiresAt: now + keepAlive });
    return { load: !current || reload, reload };
  }

  /** Forgets models that are no longer listed. */
  retain(keys: Set<string>): void {
    for (const k of [...this.#loaded.keys()]) if (!keys.has(k)) this.#loaded.delete(k);
  }

  /** Ends a request: keep_alive 0 unloads the model now. */
  release(entry: ModelEntry, keepAlive: number): void {
    if (keepAlive <= 0) this.#loaded.delete(entry.key);
  }

  unload(entry: ModelEntry): void {
    this.#loaded.delete(entry.key);
  }

  isLoaded(entry: ModelEntry): boolean {
    return this.#current(entry.key, Date.now()) !== undefined;
  }

  loads(entry: ModelEntry): number {
    return this.#loads.get(entry.key) ?? 0;
  }

  reloads(entry: ModelEntry): number {
    return this.#reloads.get(entry.key) ?? 0;
  }

  /** The `/api/ps` body: loaded models, latest expiry first (server/routes.go PsHandler). */
  psBody(now = Date.now()): { models: Record<string, unknown>[] } {
    const list = [...this.#loaded.keys()]
      .map((k) => this.#current(k, now))
      .filter((m): m is LoadedModel => m !== undefined)
      .sort((a, b) => b.expiresAt - a.expiresAt);
    return {
      models: list.map((m) => {
        const size = m.entry.size + m.contextLength * KV_BYTES_PER_TOKEN;
        // Go's time.Now().Add(MaxInt64) for "forever": about 292 years ahead.
        const expires = Number.isFinite(m.expiresAt) ? m.expiresAt : now + 9_223_372_036_854;
        return {
          name: m.entry.display,
          model: m.entry.display,
          size,
          digest: m.entry.digest,
          details: detailsOf(m.entry),
          expires_at: new Date(expires).toISOString(),
          size_vram: size,
          context_length: m.contextLength,
        };
      }),
    };
  }
}

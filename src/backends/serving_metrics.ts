/**
 * What serving engines say of their own queue, for placing new sessions where the least work
 * waits. They expose it in Prometheus text at `/metrics`:
 *
 *   vLLM ("Production Metrics")   vllm:num_requests_waiting, vllm:num_requests_running,
 *                                 vllm:kv_cache_usage_perc (vllm:gpu_cache_usage_perc before
 *                                 its v1 engine), one series per engine or model
 *   llama-server (`--metrics`)    llamacpp:requests_deferred (waiting for a slot),
 *                                 llamacpp:requests_processing
 *
 * A server that exposes none of them (Ollama, LiteLLM, a gateway) has no reading, and its pool
 * is placed as it always was. Readings are kept per endpoint and read again when older than
 * the freshness asked for; one read at a time per endpoint, under a cap on the body.
 */
import { readBounded } from "./bounded.ts";
import { kindFacts } from "./kinds.ts";
import type { ProbeTarget } from "./endpoint_health.ts";

/** One endpoint's queue as it last said it. */
export interface QueueReading {
  /** Requests the server holds that have not started (summed over its engines). */
  waiting: number;
  running: number;
  /** vLLM's KV-cache usage, 0 to 1 (the fullest engine); absent when it does not say. */
  kvUsage?: number;
}

/** Metrics pages with histograms run to hundreds of KiB; more than this is not read. */
const MAX_METRICS_BYTES = 4 * 1024 * 1024;

const WAITING = new Set(["vllm:num_requests_waiting", "llamacpp:requests_deferred"]);
const RUNNING = new Set(["vllm:num_requests_running", "llamacpp:requests_processing"]);
const KV = new Set(["vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"]);

/**
 * The queue in a Prometheus text exposition (its "Text-based format": `name{labels} value`
 * lines, `#` comments); undefined when it names no waiting requests.
 */
export function parseQueue(text: string): QueueReading | undefined {
  let waiting: number | undefined;
  let running = 0;
  let kvUsage: number | undefined;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const value = Number(m[3]);
    if (!Number.isFinite(value) || value < 0) continue;
    const name = m[1]!;
    if (WAITING.has(name)) waiting = (waiting ?? 0) + value;
    else if (RUNNING.has(name)) running += value;
    else if (KV.has(name)) kvUsage = Math.max(kvUsage ?? 0, Math.min(1, value));
  }
  if (waiting === undefined) return undefined;
  return { waiting, running, ...(kvUsage !== undefined ? { kvUsage } : {}) };
}

/** This process's last reading of each endpoint's queue. */
export class ServingMetrics {
  readonly #readings = new Map<string, { at: number; reading: QueueReading | undefined }>();
  readonly #reading = new Map<string, Promise<void>>();

  constructor(private readonly timeoutMs = 1000) {}

  /** The last reading of `url`; undefined when it exposes no queue or was never read. */
  reading(url: string): QueueReading | undefined {
    return this.#readings.get(url)?.reading;
  }

  /**
   * Reads the queues of `targets` not read within `maxAgeMs`, in parallel; settles when all
   * did. A kind without a metrics path is never asked.
   */
  async refresh(targets: readonly ProbeTarget[], maxAgeMs: number): Promise<void> {
    const now = Date.now();
    await Promise.all(
      targets.filter((t) =>
        kindFacts(t.kind).metricsPath !== undefined &&
        now - (this.#readings.get(t.url)?.at ?? -Infinity) >= maxAgeMs
      ).map((t) => this.#readOnce(t)),
    );
  }

  #readOnce(target: ProbeTarget): Promise<void> {
    let running = this.#reading.get(target.url);
    if (running) return running;
    running = readQueue(target, this.timeoutMs)
      .then((reading) => void this.#readings.set(target.url, { at: Date.now(), reading }))
      .finally(() => this.#reading.delete(target.url));
    this.#reading.set(target.url, running);
    return running;
  }
}

/** One read of an endpoint's metrics; undefined when it has none or did not answer. */
async function readQueue(
  target: ProbeTarget,
  timeoutMs: number,
): Promise<QueueReading | undefined> {
  const path = kindFacts(target.kind).metricsPath;
  if (path === undefined) return undefined;
  try {
    const response = await fetch(target.url + path, {
      headers: target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {},
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!response.ok) {
      await response.body?.cancel();
      return undefined;
    }
    const read = await readBounded(response.body, MAX_METRICS_BYTES);
    return parseQueue(new TextDecoder().decode(read.bytes));
  } catch {
    return undefined;
  }
}

/**
 * Which endpoint of its backend's pool a turn runs on. A session keeps to the endpoint that
 * served its previous turn while that one is up, so the prefix the endpoint cached for it (a
 * coding delegate resends the same long prefix every turn) is reused; a new session goes to
 * the least busy endpoint that is up, counting the jobs of every server of the user that hold
 * or wait for its slots; a session whose endpoint is down moves, and says so. A backend with
 * one endpoint is never probed: its turns run there, as they always did.
 *
 * Where every endpoint that is up says how many requests it holds waiting (vLLM's and
 * llama-server's `/metrics`, backends/serving_metrics.ts), a new session goes to the one with
 * the least waiting work, and a session leaves its endpoint for another only when its own is
 * far busier (queueYield): a prefix cache is worth a few requests' wait, not a long queue.
 */
import {
  EndpointHealth,
  type EndpointState,
  type ProbeTarget,
} from "../../backends/endpoint_health.ts";
import { type QueueReading, ServingMetrics } from "../../backends/serving_metrics.ts";
import { tagFailure } from "../../engines/backend_failures.ts";
import { engineTraits } from "../../engines/registry.ts";
import {
  backendNames,
  type BackendTable,
  resolveBackend,
  type ResolvedBackend,
} from "../../settings/backends.ts";
import type { EndpointQueue, EndpointQueues } from "../queue/endpoint_queues.ts";

/** Where a turn goes, and where its session was before when it had to leave that endpoint. */
export interface Placement {
  backend: ResolvedBackend;
  queue: EndpointQueue;
  /** The session's previous endpoint, which this turn left, and why. */
  moved?: { from: string; reason: string };
}

/** What the placer needs of the settings: the default Ollama (pool) and the named backends. */
export type PoolTable = BackendTable;

/**
 * How much busier, in requests waiting, a session's endpoint must be than another before the
 * session leaves it: at least YIELD_MORE_WAITING more, and at least YIELD_TIMES as many. A
 * waiting request starts only when running ones free their room in the batch, each after a
 * whole generation (seconds, for a coding turn); leaving costs one prefill of the session's
 * prefix elsewhere, which a GPU does at thousands of tokens a second: a few seconds for a
 * long coding conversation, about one request's wait. Four requests ahead cost more than
 * that; fewer do not, and the ratio keeps two busy endpoints from trading sessions on noise.
 */
export const YIELD_MORE_WAITING = 4;
export const YIELD_TIMES = 2;

/** Whether a session on `own` should leave it for `other`, by their queues. */
export function queueYield(own: QueueReading, other: QueueReading): boolean {
  return own.waiting - other.waiting >= YIELD_MORE_WAITING &&
    own.waiting >= YIELD_TIMES * other.waiting;
}

export class EndpointPlacer {
  /** Jobs of this process placed on each endpoint (queued or running there). */
  readonly #local = new Map<string, number>();

  constructor(
    private readonly table: PoolTable,
    private readonly queues: EndpointQueues,
    readonly health: EndpointHealth = new EndpointHealth(),
    readonly metrics: ServingMetrics = new ServingMetrics(),
  ) {}

  /**
   * The backend a job of `engine` runs on: its named backend for an engine that runs on
   * configured backends (both of the product's), else the default Ollama; undefined for a name
   * the settings do not have (the job then fails with the list of names).
   */
  backendOf(engine: string, backend: string | undefined): ResolvedBackend | undefined {
    return this.backendNamed(engineTraits(engine).backends ? backend : undefined);
  }

  /** The backend of that name; undefined = the default Ollama. */
  backendNamed(backend: string | undefined): ResolvedBackend | undefined {
    return resolveBackend(this.table, backend);
  }

  /** Names of every backend a job may name. */
  backendNames(): string[] {
    return backendNames(this.table);
  }

  /** The queue of `url` in `backend`, or undefined when the backend has no such endpoint. */
  queueOf(backend: ResolvedBackend, url: string): EndpointQueue | undefined {
    const endpoint = backend.endpoints.find((e) => e.url === url);
    if (!endpoint) return undefined;
    return {
      url,
      backend: backend.name,
      ...(endpoint.limit !== undefined ? { limit: endpoint.limit } : {}),
      ...(backend.endpoints.length > 1 ? { pooled: true } : {}),
    };
  }

  /** How to probe each endpoint of `backend`. */
  targets(backend: ResolvedBackend): ProbeTarget[] {
    return backend.endpoints.map((e) => ({
      url: e.url,
      kind: backend.kind,
      ...(backend.apiKey ? { apiKey: backend.apiKey } : {}),
    }));
  }

  /**
   * Places a turn of `backend`: on `affinity` (the endpoint of the session's previous turn)
   * while it is up, else on the least busy endpoint that is up and not in `avoid`. The
   * endpoint counts as taken by this process until `release` is called for it.
   */
  async place(
    backend: ResolvedBackend,
    options: { affinity?: string; avoid?: ReadonlySet<string> } = {},
  ): Promise<Placement | { refused: string }> {
    const avoid = options.avoid ?? new Set<string>();
    if (backend.endpoints.length === 1) {
      const url = backend.url;
      if (avoid.has(url)) return { refused: this.allDown(backend) };
      return this.#taken(backend, url, undefined);
    }
    const targets = this.targets(backend);
    await Promise.all([
      this.health.refresh(targets),
      this.metrics.refresh(targets, this.health.timing.freshMs),
    ]);
    const up = backend.endpoints.filter((e) => !avoid.has(e.url) && !this.health.isDown(e.url));
    if (up.length === 0) return { refused: this.allDown(backend) };
    // The servers' own queues, when every endpoint that is up says it; else none is used.
    const readings = up.map((e) => this.metrics.reading(e.url));
    const queued = readings.every((r) => r !== undefined) ? readings as QueueReading[] : undefined;
    const affinity = options.affinity;
    const at = up.findIndex((e) => e.url === affinity);
    if (affinity !== undefined && at >= 0) {
      const least = queued && leastWaiting(queued);
      if (!queued || least === undefined || !queueYield(queued[at]!, queued[least]!)) {
        return this.#taken(backend, affinity, undefined);
      }
      return this.#taken(backend, up[least]!.url, {
        from: affinity,
        reason: `it had ${queued[at]!.waiting} requests waiting, ${up[least]!.url} ` +
          `${queued[least]!.waiting}`,
      });
    }
    // Counted before the choice, which then runs without a pause: turns placed at once by this
    // process see each other's choices.
    const others = await Promise.all(
      up.map((e) => this.queues.others(this.queueOf(backend, e.url)!)),
    );
    const now = Date.now();
    const load = up.map((e, i) => {
      const busy = (this.#local.get(e.url) ?? 0) + others[i]!;
      return {
        url: e.url,
        // A 429 sends new sessions elsewhere while its wait lasts.
        throttled: this.health.isThrottled(e.url, now) ? 1 : 0,
        // The work the server itself holds waiting, other clients' included; 0 for all
        // when not every endpoint says it.
        waiting: queued?.[i]?.waiting ?? 0,
        share: busy / (e.limit ?? 1),
        busy,
        kv: queued?.[i]?.kvUsage ?? 0,
        order: i,
      };
    });
    load.sort((a, b) =>
      a.throttled - b.throttled || a.waiting - b.waiting || a.share - b.share ||
      a.busy - b.busy || a.kv - b.kv || a.order - b.order
    );
    const chosen = load[0]!.url;
    const moved = affinity !== undefined && affinity !== chosen
      ? { from: affinity, reason: this.#whyLeft(backend, affinity, avoid) }
      : undefined;
    return this.#taken(backend, chosen, moved);
  }

  /**
   * Whether an endpoint of `backend` other than `url` is up and has a free slot that nobody
   * waits for (counting every server's jobs).
   */
  async idleElsewhere(backend: ResolvedBackend, url: string): Promise<boolean> {
    const now = Date.now();
    for (const e of backend.endpoints) {
      if (e.url === url || e.limit === undefined) continue;
      if (this.health.isDown(e.url) || this.health.isThrottled(e.url, now)) continue;
      const busy = (this.#local.get(e.url) ?? 0) +
        await this.queues.others(this.queueOf(backend, e.url)!);
      if (busy < e.limit) return true;
    }
    return false;
  }

  /** The job placed on `url` ended or moved away. */
  release(url: string): void {
    const n = (this.#local.get(url) ?? 0) - 1;
    if (n > 0) this.#local.set(url, n);
    else this.#local.delete(url);
  }

  /** What this process knows of each endpoint of `backend`, for status reports. */
  states(backend: ResolvedBackend): Array<{ url: string; state: EndpointState; jobsHere: number }> {
    return backend.endpoints.map((e) => ({
      url: e.url,
      state: this.health.state(e.url),
      jobsHere: this.#local.get(e.url) ?? 0,
    }));
  }

  #taken(
    backend: ResolvedBackend,
    url: string,
    moved: Placement["moved"],
  ): Placement {
    this.#local.set(url, (this.#local.get(url) ?? 0) + 1);
    return { backend, queue: this.queueOf(backend, url)!, ...(moved ? { moved } : {}) };
  }

  #whyLeft(backend: ResolvedBackend, url: string, avoid: ReadonlySet<string>): string {
    if (!backend.endpoints.some((e) => e.url === url)) return "it is no longer in the pool";
    const state = this.health.state(url);
    if (!state.up) return `it is down: ${state.reason ?? "its health check failed"}`;
    return avoid.has(url) ? "it failed this job" : "it was not usable";
  }

  /** The job error when no endpoint of `backend` can take the job. */
  allDown(backend: ResolvedBackend): string {
    const list = backend.endpoints.map((e) => {
      const state = this.health.state(e.url);
      return `${e.url} (${state.up ? "failed this job" : state.reason ?? "down"})`;
    });
    const what = backend.endpoints.length === 1
      ? `the endpoint of backend "${backend.name}" is down`
      : `every endpoint of backend "${backend.name}" is down`;
    return tagFailure(
      "backend_unreachable",
      `Cannot run job: ${what}: ${list.join(", ")}. Start them, or fix the URLs ` +
        "(ollama-delegate doctor checks each one)",
    );
  }
}

/** The index of the reading with the fewest requests waiting (the first of equals). */
function leastWaiting(readings: readonly QueueReading[]): number {
  let best = 0;
  readings.forEach((r, i) => {
    if (r.waiting < readings[best]!.waiting) best = i;
  });
  return best;
}

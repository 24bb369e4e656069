/**
 * A turn's seat: the endpoint of its backend it was placed on (endpoint_pool.ts) with that
 * endpoint's slot and the global place (queue/job_queues.ts), and what the engine is handed to report
 * failures there and move off it. The record says where the turn ran, and every move.
 */
import type { ResolvedBackend } from "../../settings/backends.ts";
import type { TurnBackend, TurnEndpoint } from "../../engines/types.ts";
import type { EndpointPlacer, Placement } from "./endpoint_pool.ts";
import type { LiveJob } from "../live_job.ts";
import type { EndpointQueue } from "../queue/endpoint_queues.ts";
import type { JobQueues } from "../queue/job_queues.ts";
import type { JobRecord } from "../record.ts";
import type { SessionOrder } from "../session_order.ts";
import type { JobStore } from "../store.ts";

export interface SeatDeps {
  store: JobStore;
  queues: JobQueues;
  sessions: SessionOrder;
  /** Absent: jobs run on their backend's own URL, limited by this process alone. */
  placer?: EndpointPlacer;
}

/**
 * What taking a seat came to: a seat; "left" when a cancel took the job out of a queue (the
 * canceller records its end); "stopped" when it was stopped before it got into one (the
 * caller records it); or the job's error when no endpoint of its pool is up.
 */
export type SeatResult = Seat | "left" | "stopped" | { refused: string };

/** Places the job on an endpoint and waits for its slots there. */
export async function takeSeat(
  live: LiveJob,
  deps: SeatDeps,
  lost: (reason: string) => void,
): Promise<SeatResult> {
  const record = live.record;
  const placer = deps.placer;
  const backend = placer?.backendOf(record.engine, record.backend);
  if (!placer || !backend) {
    if (!(await deps.queues.take(record.id, undefined, live.placed, lost))) return "left";
    // A name the settings no longer have: the engine refuses the turn with the names they have.
    const unknown = placer && { unknown: record.backend!, configured: placer.backendNames() };
    return new Seat(live, deps, lost, undefined, unknown);
  }
  const affinity = (await deps.sessions.records(record.sessionId))
    .filter((r) => r.turn < record.turn && r.endpoint !== undefined).at(-1)?.endpoint?.url;
  // Each pass places the job again: its endpoint went down while it waited there, or (a new
  // session) another endpoint became idle meanwhile.
  for (let downs = 0; downs <= backend.endpoints.length;) {
    const placement = await placer.place(backend, affinity !== undefined ? { affinity } : {});
    if ("refused" in placement) return placement;
    const url = placement.queue.url;
    const seat = new Seat(live, deps, lost, { placer, backend, placement });
    record.endpoint = {
      url,
      poolSize: backend.endpoints.length,
      ...(placement.moved
        ? { moves: [{ from: placement.moved.from, to: url, reason: placement.moved.reason }] }
        : {}),
    };
    // Other servers' status of this queued job then names the endpoint it waits for.
    await deps.store.write(record).catch(() => {});
    // Checked right before the queue: a cancel that came while the job was being placed found
    // it in no queue, and left its end to this caller.
    if (live.stopReason) {
      seat.free();
      return "stopped";
    }
    const taken = await takePlaces(live, deps, placement, lost, affinity === undefined);
    if (taken !== "held") {
      seat.free();
      if (taken === "left") return "left";
      continue;
    }
    if (backend.endpoints.length === 1 || !placer.health.isDown(url)) return seat;
    deps.queues.giveBack(record.id);
    seat.free();
    downs++;
  }
  return { refused: placer.allDown(backend) };
}

/** How often a new session waiting for a busy endpoint looks for an idle one. */
const REBALANCE_MS = 500;

/**
 * Takes the job's places in the placement's queues. A new session (`mayMove`: no endpoint of its own yet) that
 * waits for its endpoint's slot while another endpoint of the pool has a free one and nobody
 * waiting leaves the queue to be placed again ("moved"), so that no GPU idles while a job waits:
 * servers that placed jobs at the same moment may not have seen each other's. A session with
 * an endpoint waits there, for its cache.
 */
async function takePlaces(
  live: LiveJob,
  deps: SeatDeps,
  placement: Placement,
  lost: (reason: string) => void,
  mayMove: boolean,
): Promise<"held" | "left" | "moved"> {
  const id = live.record.id;
  const taking = deps.queues.take(id, placement.queue, live.placed, lost);
  if (!mayMove || !placement.queue.pooled || !deps.placer) {
    return (await taking) ? "held" : "left";
  }
  const placer = deps.placer;
  let moving = false;
  let looking = false;
  const timer = setInterval(async () => {
    if (moving || looking || deps.queues.endpoints.position(id) === 0) return;
    looking = true;
    try {
      const idle = await placer.idleElsewhere(placement.backend, placement.queue.url);
      // Only the endpoint's own queue: a job that meanwhile got the slot stays.
      if (idle && !live.stopReason && deps.queues.endpoints.leave(id)) moving = true;
    } finally {
      looking = false;
    }
  }, REBALANCE_MS);
  try {
    return (await taking) ? "held" : moving ? "moved" : "left";
  } finally {
    clearInterval(timer);
  }
}

/** The slots a job holds, on the endpoint where it runs now. */
export class Seat {
  #url: string | undefined;
  #unwatch: (() => void) | undefined;
  #freed = false;

  constructor(
    private readonly live: LiveJob,
    private readonly deps: SeatDeps,
    private readonly lost: (reason: string) => void,
    private readonly pool?: {
      placer: EndpointPlacer;
      backend: ResolvedBackend;
      placement: Placement;
    },
    private readonly unknown?: Exclude<TurnBackend, ResolvedBackend>,
  ) {
    this.#url = pool?.placement.queue.url;
    if (pool && pool.backend.endpoints.length > 1) {
      // While the job runs, its pool is probed in the background: a probe that fails moves
      // its next request.
      this.#unwatch = pool.placer.health.watch(pool.placer.targets(pool.backend));
    }
  }

  /**
   * The backend the engine is handed, resolved once when the job was placed; undefined when the
   * job layer has no backends (a manager without pools).
   */
  get backend(): TurnBackend | undefined {
    return this.pool?.backend ?? this.unknown;
  }

  /** What the engine is handed; undefined when the job was not placed by a pool. */
  endpoint(): TurnEndpoint | undefined {
    const pool = this.pool;
    if (!pool || this.#url === undefined) return undefined;
    const health = pool.placer.health;
    const now = () => this.#url!;
    return {
      get url() {
        return now();
      },
      pooled: pool.backend.endpoints.length > 1,
      isDown: () => health.isDown(now()),
      move: (reason) => this.#move(reason),
      throttled: (ms) => health.throttle(now(), ms),
      down: (reason) => health.markDown(now(), reason),
    };
  }

  /** Gives back both places of a job that took them. */
  giveBack(): void {
    this.deps.queues.giveBack(this.live.record.id);
    this.free();
  }

  /** Forgets the placement (its slots are already given back, or were never taken). */
  free(): void {
    if (this.#freed) return;
    this.#freed = true;
    if (this.#url !== undefined) this.pool?.placer.release(this.#url);
    this.#unwatch?.();
  }

  async #move(
    reason: string,
  ): Promise<{ url: string } | { errorText: string; failure?: "backend_unreachable" }> {
    const pool = this.pool!;
    const from = this.#url!;
    const record = this.live.record;
    pool.placer.health.markDown(from, reason);
    const placement = await pool.placer.place(pool.backend, { avoid: new Set([from]) });
    // Every endpoint of the pool is down (EndpointPlacer.allDown): a fallback model may be
    // served elsewhere (jobs/turn_attempts.ts).
    if ("refused" in placement) {
      return { errorText: placement.refused, failure: "backend_unreachable" };
    }
    const to = placement.queue.url;
    pool.placer.release(from);
    this.#url = to;
    const held = await this.deps.queues.move(record.id, placement.queue, this.lost);
    if (!held) return { errorText: "Stopped while waiting for a slot on another endpoint" };
    const moves = [...(record.endpoint?.moves ?? []), { from, to, reason }];
    record.endpoint = { url: to, poolSize: pool.backend.endpoints.length, moves };
    await this.deps.store.write(record).catch(() => {});
    return { url: to };
  }
}

/** The queue a queued job of another process waits in, from its record. */
export function queueOfRecord(
  placer: EndpointPlacer | undefined,
  record: JobRecord,
): EndpointQueue | undefined {
  const backend = placer?.backendOf(record.engine, record.backend);
  const url = record.endpoint?.url;
  return backend && url !== undefined ? placer!.queueOf(backend, url) : undefined;
}

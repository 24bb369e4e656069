/**
 * A turn's seat: the endpoint of its backend it was placed on (endpoint_pool.ts) with that
 * endpoint's slot and the global one (queue.ts), and what the engine is handed to report
 * failures there and move off it. The record says where the turn ran, and every move.
 */
import type { ResolvedBackend } from "../engines/native/backend.ts";
import type { TurnEndpoint } from "../engines/types.ts";
import type { EndpointPlacer, Placement } from "./endpoint_pool.ts";
import type { LiveJob } from "./live_job.ts";
import type { Lane, QueueLanes } from "./queue.ts";
import type { JobRecord } from "./record.ts";
import type { SessionOrder } from "./session_order.ts";
import type { JobStore } from "./store.ts";

export interface SeatDeps {
  store: JobStore;
  lanes: QueueLanes;
  sessions: SessionOrder;
  /** Absent: jobs run on their backend's own URL, limited by this process alone. */
  placer?: EndpointPlacer;
}

/**
 * What taking a seat came to: a seat; "left" when a cancel took the job out of a line (the
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
    if (!(await deps.lanes.enter(record.id, undefined, live.placed, lost))) return "left";
    return new Seat(live, deps, lost);
  }
  const affinity = (await deps.sessions.records(record.sessionId))
    .filter((r) => r.turn < record.turn && r.endpoint !== undefined).at(-1)?.endpoint?.url;
  // Each pass places the job again after its endpoint went down while it waited there.
  for (let pass = 0; pass <= backend.endpoints.length; pass++) {
    const placement = await placer.place(backend, affinity !== undefined ? { affinity } : {});
    if ("refused" in placement) return placement;
    const url = placement.lane.url;
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
    // Checked right before the line: a cancel that came while the job was being placed found
    // it in no line, and left its end to this caller.
    if (live.stopReason) {
      seat.free();
      return "stopped";
    }
    if (!(await deps.lanes.enter(record.id, placement.lane, live.placed, lost))) {
      seat.free();
      return "left";
    }
    if (backend.endpoints.length === 1 || !placer.health.isDown(url)) return seat;
    deps.lanes.exit(record.id);
    seat.free();
  }
  return { refused: placer.allDown(backend) };
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
  ) {
    this.#url = pool?.placement.lane.url;
    if (pool && pool.backend.endpoints.length > 1) {
      // While the job runs, its pool is probed in the background: a probe that fails moves
      // its next request.
      this.#unwatch = pool.placer.health.watch(pool.placer.targets(pool.backend));
    }
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

  /** Gives back both slots of a job that entered. */
  leave(): void {
    this.deps.lanes.exit(this.live.record.id);
    this.free();
  }

  /** Forgets the placement (its slots are already given back, or were never taken). */
  free(): void {
    if (this.#freed) return;
    this.#freed = true;
    if (this.#url !== undefined) this.pool?.placer.release(this.#url);
    this.#unwatch?.();
  }

  async #move(reason: string): Promise<{ url: string } | { errorText: string }> {
    const pool = this.pool!;
    const from = this.#url!;
    const record = this.live.record;
    pool.placer.health.markDown(from, reason);
    const placement = await pool.placer.place(pool.backend, { avoid: new Set([from]) });
    if ("refused" in placement) return { errorText: placement.refused };
    const to = placement.lane.url;
    pool.placer.release(from);
    this.#url = to;
    const entered = await this.deps.lanes.move(record.id, placement.lane, this.lost);
    if (!entered) return { errorText: "Stopped while waiting for a slot on another endpoint" };
    const moves = [...(record.endpoint?.moves ?? []), { from, to, reason }];
    record.endpoint = { url: to, poolSize: pool.backend.endpoints.length, moves };
    await this.deps.store.write(record).catch(() => {});
    return { url: to };
  }
}

/** The lane a queued job of another process waits in, from its record. */
export function laneOfRecord(
  placer: EndpointPlacer | undefined,
  record: JobRecord,
): Lane | undefined {
  const backend = placer?.backendOf(record.engine, record.backend);
  const url = record.endpoint?.url;
  return backend && url !== undefined ? placer!.laneOf(backend, url) : undefined;
}

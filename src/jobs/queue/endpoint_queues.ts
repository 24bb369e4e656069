/**
 * Endpoints' queues as the job layer uses them: a job waits in the queue of the endpoint it was
 * placed on (endpoint_pool.ts) before the global one (job_queues.ts). The queues are kept in
 * this process only (LocalEndpointQueues: the `jobs` commands, tests), or shared by every
 * server of the user through the state dir (SharedEndpointQueues, shared_endpoint_queues.ts).
 */
import { LocalQueue } from "./local_queue.ts";

/** Who holds one of an endpoint's slots, as a job's status shows it. */
export interface SlotHolder {
  jobId: string;
  /** The server process that runs the job. */
  pid: number;
  /** Whether that is the process asking. */
  here: boolean;
}

/** Where a job waiting for an endpoint stands: its place in the queue and who holds the slots. */
export interface QueueDetail {
  backend: string;
  /** The endpoint's URL, when the backend is a pool of them. */
  endpoint?: string;
  /** 1-based place in the endpoint's queue. */
  position: number;
  limit: number;
  holders: SlotHolder[];
}

/**
 * One endpoint's queue as a job of one backend sees it. The queue is the endpoint's URL: every
 * backend that names the URL shares its count, each job holding to its own backend's limit.
 */
export interface EndpointQueue {
  url: string;
  /** The backend the job runs on, for status lines. */
  backend: string;
  /** Jobs at once on the endpoint; undefined = no shared limit, so no queue. */
  limit?: number;
  /** Whether the backend is a pool: status lines then name the endpoint. */
  pooled?: boolean;
}

/** The queues of every endpoint, as jobs of this process wait in them. */
export interface EndpointQueues {
  /**
   * Resolves true once the job holds a slot of its endpoint; false when it left the queue.
   * `placed` runs once it has to wait; `lost` if the slot goes to another job while this one
   * holds it (this process stopped running for longer than its lease).
   */
  take(
    id: string,
    queue: EndpointQueue | undefined,
    placed: () => void,
    lost?: (reason: string) => void,
  ): Promise<boolean>;
  /** Whether job `id` still holds its slot; asked before it starts more work. */
  stillHolds(id: string): Promise<boolean>;
  /** Gives back the slot job `id` holds, wherever it is. */
  giveBack(id: string): void;
  /** Takes a waiting job out of the queue; true when it was waiting. */
  leave(id: string): boolean;
  /** 1-based place in the endpoint's queue, 0 when not waiting there. */
  position(id: string): number;
  /** What a waiting job of this process last saw of its endpoint's queue. */
  detail(id: string): QueueDetail | undefined;
  /** The same for a job of any process, read from where the queue is kept. */
  describe(id: string, queue: EndpointQueue | undefined): Promise<QueueDetail | undefined>;
  /** Jobs of other processes that hold or wait for the endpoint's slots. */
  others(queue: EndpointQueue): Promise<number>;
}

/** Endpoints' queues kept in this process only. */
export class LocalEndpointQueues implements EndpointQueues {
  readonly #queues = new Map<string, LocalQueue>();
  /** The queue each job is in (holding or waiting). */
  readonly #of = new Map<string, LocalQueue>();

  async take(
    id: string,
    endpoint: EndpointQueue | undefined,
    placed: () => void,
  ): Promise<boolean> {
    const queue = this.#queue(endpoint);
    if (!queue) return true;
    this.#of.set(id, queue);
    const granted = await queue.take(id, placed);
    if (!granted) this.#of.delete(id);
    return granted;
  }

  giveBack(id: string): void {
    const queue = this.#of.get(id);
    this.#of.delete(id);
    queue?.giveBack();
  }

  stillHolds(): Promise<boolean> {
    // One process's own count cannot be taken from it.
    return Promise.resolve(true);
  }

  leave(id: string): boolean {
    return this.#of.get(id)?.leave(id) ?? false;
  }

  position(id: string): number {
    return this.#of.get(id)?.position(id) ?? 0;
  }

  detail(): QueueDetail | undefined {
    return undefined;
  }

  describe(): Promise<QueueDetail | undefined> {
    return Promise.resolve(undefined);
  }

  others(): Promise<number> {
    return Promise.resolve(0);
  }

  #queue(endpoint: EndpointQueue | undefined): LocalQueue | undefined {
    if (endpoint?.limit === undefined) return undefined;
    let queue = this.#queues.get(endpoint.url);
    if (!queue) this.#queues.set(endpoint.url, queue = new LocalQueue(endpoint.limit));
    return queue;
  }
}

/**
 * The queues a job waits in before it runs: its endpoint's (EndpointQueues), then the global one
 * (maxConcurrent, this process). The endpoint's slot comes first, so a job waiting for its
 * endpoint holds no global place. The price: a job that got its endpoint's slot while this
 * process's global places are all taken (by jobs on other endpoints) holds that slot idle
 * until one of them ends.
 */
import { type EndpointQueue, type EndpointQueues, LocalEndpointQueues } from "./endpoint_queues.ts";
import { LocalQueue } from "./local_queue.ts";

export class JobQueues {
  readonly #global: LocalQueue;

  constructor(
    maxConcurrent: number,
    readonly endpoints: EndpointQueues = new LocalEndpointQueues(),
  ) {
    this.#global = new LocalQueue(maxConcurrent);
  }

  /**
   * Takes the job's places; `placed` runs once it has to wait for one, `lost` if its
   * endpoint's shared slot goes to another job later (EndpointQueues). False when the job
   * left the queue (`leave`), and then it holds no place.
   */
  async take(
    id: string,
    endpoint: EndpointQueue | undefined,
    placed: () => void,
    lost?: (reason: string) => void,
  ): Promise<boolean> {
    if (!(await this.endpoints.take(id, endpoint, placed, lost))) return false;
    if (!(await this.#global.take(id, placed))) {
      this.endpoints.giveBack(id);
      return false;
    }
    return true;
  }

  /**
   * Moves a running job to another endpoint's queue: its slot where it was goes back first
   * (that endpoint failed), then it waits for one on `endpoint`, keeping its global place.
   * False when it left the queue meanwhile (cancelled).
   */
  async move(
    id: string,
    endpoint: EndpointQueue | undefined,
    lost?: (reason: string) => void,
  ): Promise<boolean> {
    this.endpoints.giveBack(id);
    return await this.endpoints.take(id, endpoint, () => {}, lost);
  }

  /** Gives back the places of job `id`, which took them. */
  giveBack(id: string): void {
    this.#global.giveBack();
    this.endpoints.giveBack(id);
  }

  /** Takes a waiting job out of its queue; true when it was waiting. */
  leave(id: string): boolean {
    return this.endpoints.leave(id) || this.#global.leave(id);
  }

  /** 1-based place in whichever queue the job waits in, 0 when it waits in none. */
  position(id: string): number {
    return this.endpoints.position(id) || this.#global.position(id);
  }
}

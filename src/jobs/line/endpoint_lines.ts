/**
 * Endpoints' lines as the job layer uses them: a job waits in the line of the endpoint it was
 * placed on (endpoint_pool.ts) before the global one (job_lines.ts). The lines are kept in
 * this process only (LocalEndpointLines: the `jobs` commands, tests), or shared by every
 * server of the user through the state dir (SharedEndpointLines, shared_endpoint_lines.ts).
 */
import { LocalLine } from "./local_line.ts";

/** Who holds one of an endpoint's slots, as a job's status shows it. */
export interface SlotHolder {
  jobId: string;
  /** The server process that runs the job. */
  pid: number;
  /** Whether that is the process asking. */
  here: boolean;
}

/** Where a job waiting for an endpoint stands: its place in line and who holds the slots. */
export interface QueueDetail {
  backend: string;
  /** The endpoint's URL, when the backend is a pool of them. */
  endpoint?: string;
  /** 1-based place in the endpoint's line. */
  position: number;
  limit: number;
  holders: SlotHolder[];
}

/**
 * One endpoint's line as a job of one backend sees it. The line is the endpoint's URL: every
 * backend that names the URL shares its count, each job holding to its own backend's limit.
 */
export interface EndpointLine {
  url: string;
  /** The backend the job runs on, for status lines. */
  backend: string;
  /** Jobs at once on the endpoint; undefined = no shared limit, so no line. */
  limit?: number;
  /** Whether the backend is a pool: status lines then name the endpoint. */
  pooled?: boolean;
}

/** The lines of every endpoint, as jobs of this process wait in them. */
export interface EndpointLines {
  /**
   * Resolves true once the job holds a slot of its endpoint; false when it left the line.
   * `placed` runs once it has to wait; `lost` if the slot goes to another job while this one
   * holds it (this process stopped running for longer than its lease).
   */
  take(
    id: string,
    line: EndpointLine | undefined,
    placed: () => void,
    lost?: (reason: string) => void,
  ): Promise<boolean>;
  /** Whether job `id` still holds its slot; asked before it starts more work. */
  stillHolds(id: string): Promise<boolean>;
  /** Gives back the slot job `id` holds, wherever it is. */
  giveBack(id: string): void;
  /** Takes a waiting job out of the line; true when it was waiting. */
  leave(id: string): boolean;
  /** 1-based place in the endpoint's line, 0 when not waiting there. */
  position(id: string): number;
  /** What a waiting job of this process last saw of its endpoint's line. */
  detail(id: string): QueueDetail | undefined;
  /** The same for a job of any process, read from where the line is kept. */
  describe(id: string, line: EndpointLine | undefined): Promise<QueueDetail | undefined>;
  /** Jobs of other processes that hold or wait for the endpoint's slots. */
  others(line: EndpointLine): Promise<number>;
}

/** Endpoints' lines kept in this process only. */
export class LocalEndpointLines implements EndpointLines {
  readonly #lines = new Map<string, LocalLine>();
  /** The line each job is in (holding or waiting). */
  readonly #of = new Map<string, LocalLine>();

  async take(id: string, endpoint: EndpointLine | undefined, placed: () => void): Promise<boolean> {
    const line = this.#line(endpoint);
    if (!line) return true;
    this.#of.set(id, line);
    const granted = await line.take(id, placed);
    if (!granted) this.#of.delete(id);
    return granted;
  }

  giveBack(id: string): void {
    const line = this.#of.get(id);
    this.#of.delete(id);
    line?.giveBack();
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

  #line(endpoint: EndpointLine | undefined): LocalLine | undefined {
    if (endpoint?.limit === undefined) return undefined;
    let line = this.#lines.get(endpoint.url);
    if (!line) this.#lines.set(endpoint.url, line = new LocalLine(endpoint.limit));
    return line;
  }
}

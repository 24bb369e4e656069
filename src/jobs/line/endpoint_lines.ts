/**
 * A FIFO concurrency limit: at most `limit` holders at once, the rest wait in order.
 * A waiter can leave the line (a queued job that is cancelled).
 */
export class SlotQueue {
  #active = 0;
  #waiting: Array<{ key: string; grant: (granted: boolean) => void }> = [];

  constructor(readonly limit: number) {}

  /**
   * Resolves true when a slot is granted (the caller must `release()` it later), or false
   * when the waiter was removed with `leave`.
   */
  acquire(key: string): Promise<boolean> {
    if (this.#active < this.limit) {
      this.#active++;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => this.#waiting.push({ key, grant: resolve }));
  }

  release(): void {
    const next = this.#waiting.shift();
    if (next) next.grant(true);
    else this.#active = Math.max(0, this.#active - 1);
  }

  /** Removes a waiter; true if it was waiting. */
  leave(key: string): boolean {
    const i = this.#waiting.findIndex((w) => w.key === key);
    if (i === -1) return false;
    const [waiter] = this.#waiting.splice(i, 1);
    waiter?.grant(false);
    return true;
  }

  /** 1-based place in line, or 0 when not waiting. */
  position(key: string): number {
    return this.#waiting.findIndex((w) => w.key === key) + 1;
  }

  get waiting(): number {
    return this.#waiting.length;
  }
}

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
export interface Lane {
  url: string;
  /** The backend the job runs on, for status lines. */
  backend: string;
  /** Jobs at once on the endpoint; undefined = no shared limit, so no line. */
  limit?: number;
  /** Whether the backend is a pool: status lines then name the endpoint. */
  pooled?: boolean;
}

/**
 * The per-endpoint limit a job passes before the global one: in this process only
 * (LocalGate), or shared by every server of the user through the state dir (admission.ts).
 */
export interface BackendGate {
  /**
   * Resolves true once the job holds a slot of its endpoint; false when it left the line.
   * `lost` is called if the slot goes to another job while this one holds it (this process
   * stopped running for longer than its lease).
   */
  enter(
    id: string,
    lane: Lane | undefined,
    placed: () => void,
    lost?: (reason: string) => void,
  ): Promise<boolean>;
  /** Whether job `id` still holds its slot; asked before it starts more work. */
  stillHolds(id: string): Promise<boolean>;
  /** Gives back the slot job `id` holds, wherever it is. */
  exit(id: string): void;
  /** Takes a waiting job out of the line; true when it was waiting. */
  leave(id: string): boolean;
  /** 1-based place in the endpoint's line, 0 when not waiting there. */
  position(id: string): number;
  /** What a waiting job of this process last saw of its endpoint's line. */
  detail(id: string): QueueDetail | undefined;
  /** The same for a job of any process, read from where the line is kept. */
  describe(id: string, lane: Lane | undefined): Promise<QueueDetail | undefined>;
  /** Jobs of other processes that hold or wait for the endpoint's slots. */
  others(lane: Lane): Promise<number>;
}

/** Per-endpoint limits kept in this process only (the `jobs` commands, tests). */
export class LocalGate implements BackendGate {
  readonly #lanes = new Map<string, SlotQueue>();
  /** The line each job entered (held or waiting). */
  readonly #of = new Map<string, SlotQueue>();

  async enter(id: string, lane: Lane | undefined, placed: () => void): Promise<boolean> {
    const queue = this.#lane(lane);
    if (!queue) return true;
    this.#of.set(id, queue);
    const granted = await take(queue, id, placed);
    if (!granted) this.#of.delete(id);
    return granted;
  }

  exit(id: string): void {
    const queue = this.#of.get(id);
    this.#of.delete(id);
    queue?.release();
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

  #lane(lane: Lane | undefined): SlotQueue | undefined {
    if (lane?.limit === undefined) return undefined;
    let queue = this.#lanes.get(lane.url);
    if (!queue) this.#lanes.set(lane.url, queue = new SlotQueue(lane.limit));
    return queue;
  }
}

/**
 * The lines a job waits in before it runs: its endpoint's (the gate), then the global one
 * (maxConcurrent, this process). The endpoint's slot comes first, so a job waiting for its
 * endpoint holds no global slot. The price: a job that got its endpoint's slot while this
 * process's global slots are all taken (by jobs on other endpoints) holds that slot idle
 * until one of them ends.
 */
export class QueueLanes {
  readonly #global: SlotQueue;

  constructor(maxConcurrent: number, readonly gate: BackendGate = new LocalGate()) {
    this.#global = new SlotQueue(maxConcurrent);
  }

  /**
   * Takes the job's slots; `placed` runs once it has to wait for one, `lost` if its endpoint's
   * shared slot goes to another job later (BackendGate). False when the job left the line
   * (`leave`), and then it holds no slot.
   */
  async enter(
    id: string,
    lane: Lane | undefined,
    placed: () => void,
    lost?: (reason: string) => void,
  ): Promise<boolean> {
    if (!(await this.gate.enter(id, lane, placed, lost))) return false;
    if (!(await take(this.#global, id, placed))) {
      this.gate.exit(id);
      return false;
    }
    return true;
  }

  /**
   * Moves a running job to another endpoint's line: its slot where it was goes back first
   * (that endpoint failed), then it waits for one on `lane`, keeping its global slot. False
   * when it left the line meanwhile (cancelled).
   */
  async move(
    id: string,
    lane: Lane | undefined,
    lost?: (reason: string) => void,
  ): Promise<boolean> {
    this.gate.exit(id);
    return await this.gate.enter(id, lane, () => {}, lost);
  }

  /** Gives back the slots of job `id`, which entered. */
  exit(id: string): void {
    this.#global.release();
    this.gate.exit(id);
  }

  /** Takes a waiting job out of its line; true when it was waiting. */
  leave(id: string): boolean {
    return this.gate.leave(id) || this.#global.leave(id);
  }

  /** 1-based place in whichever line the job waits in, 0 when it waits in none. */
  position(id: string): number {
    return this.gate.position(id) || this.#global.position(id);
  }
}

function take(queue: SlotQueue, id: string, placed: () => void): Promise<boolean> {
  const granted = queue.acquire(id);
  if (queue.position(id) > 0) placed();
  return granted;
}

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

/** Who holds one of a backend's slots, as a job's status shows it. */
export interface SlotHolder {
  jobId: string;
  /** The server process that runs the job. */
  pid: number;
  /** Whether that is the process asking. */
  here: boolean;
}

/** Where a job waiting for a backend stands: its place in line and who holds the slots. */
export interface QueueDetail {
  backend: string;
  /** 1-based place in the backend's line. */
  position: number;
  limit: number;
  holders: SlotHolder[];
}

/**
 * The per-backend limit a job passes before the global one: in this process only
 * (LocalGate), or shared by every server of the user through the state dir (admission.ts).
 */
export interface BackendGate {
  /**
   * Resolves true once the job holds a slot of its backend; false when it left the line.
   * `lost` is called if the slot goes to another job while this one holds it (this process
   * stopped running for longer than its lease).
   */
  enter(
    id: string,
    backend: string | undefined,
    placed: () => void,
    lost?: (reason: string) => void,
  ): Promise<boolean>;
  /** Whether job `id` still holds its slot; asked before it starts more work. */
  stillHolds(id: string): Promise<boolean>;
  /** Gives back the slot job `id` holds. */
  exit(id: string, backend: string | undefined): void;
  /** Takes a waiting job out of the line; true when it was waiting. */
  leave(id: string, backend: string | undefined): boolean;
  /** 1-based place in the backend's line, 0 when not waiting there. */
  position(id: string, backend: string | undefined): number;
  /** What a waiting job of this process last saw of its backend's line. */
  detail(id: string): QueueDetail | undefined;
  /** The same for a job of any process, read from where the line is kept. */
  describe(id: string, backend: string | undefined): Promise<QueueDetail | undefined>;
}

/** Per-backend limits kept in this process only (the `jobs` commands, tests). */
export class LocalGate implements BackendGate {
  readonly #backends = new Map<string, SlotQueue>();

  constructor(backendLimits: Record<string, number> = {}) {
    for (const [name, limit] of Object.entries(backendLimits)) {
      this.#backends.set(name, new SlotQueue(limit));
    }
  }

  async enter(id: string, backend: string | undefined, placed: () => void): Promise<boolean> {
    const lane = this.#lane(backend);
    return lane ? await take(lane, id, placed) : true;
  }

  exit(_id: string, backend: string | undefined): void {
    this.#lane(backend)?.release();
  }

  stillHolds(): Promise<boolean> {
    // One process's own count cannot be taken from it.
    return Promise.resolve(true);
  }

  leave(id: string, backend: string | undefined): boolean {
    return this.#lane(backend)?.leave(id) ?? false;
  }

  position(id: string, backend: string | undefined): number {
    return this.#lane(backend)?.position(id) ?? 0;
  }

  detail(): QueueDetail | undefined {
    return undefined;
  }

  describe(): Promise<QueueDetail | undefined> {
    return Promise.resolve(undefined);
  }

  #lane(backend: string | undefined): SlotQueue | undefined {
    return backend ? this.#backends.get(backend) : undefined;
  }
}

/**
 * The lines a job waits in before it runs: its backend's (the gate), then the global one
 * (maxConcurrent, this process). The backend's slot comes first, so a job waiting for its
 * backend holds no global slot. The price: a job that got its backend's slot while this
 * process's global slots are all taken (by jobs on other backends) holds that slot idle
 * until one of them ends.
 */
export class QueueLanes {
  readonly #global: SlotQueue;

  constructor(maxConcurrent: number, readonly gate: BackendGate = new LocalGate()) {
    this.#global = new SlotQueue(maxConcurrent);
  }

  /**
   * Takes the job's slots; `placed` runs once it has to wait for one, `lost` if its backend's
   * shared slot goes to another job later (BackendGate). False when the job left the line
   * (`leave`), and then it holds no slot.
   */
  async enter(
    id: string,
    backend: string | undefined,
    placed: () => void,
    lost?: (reason: string) => void,
  ): Promise<boolean> {
    if (!(await this.gate.enter(id, backend, placed, lost))) return false;
    if (!(await take(this.#global, id, placed))) {
      this.gate.exit(id, backend);
      return false;
    }
    return true;
  }

  /** Gives back the slots of job `id`, which entered. */
  exit(backend: string | undefined, id: string): void {
    this.#global.release();
    this.gate.exit(id, backend);
  }

  /** Takes a waiting job out of its line; true when it was waiting. */
  leave(id: string, backend: string | undefined): boolean {
    return this.gate.leave(id, backend) || this.#global.leave(id);
  }

  /** 1-based place in whichever line the job waits in, 0 when it waits in none. */
  position(id: string, backend: string | undefined): number {
    return this.gate.position(id, backend) || this.#global.position(id);
  }
}

function take(queue: SlotQueue, id: string, placed: () => void): Promise<boolean> {
  const granted = queue.acquire(id);
  if (queue.position(id) > 0) placed();
  return granted;
}

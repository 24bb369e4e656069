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

/**
 * The lines a job waits in before it runs: its backend's own lane (a per-backend limit),
 * then the global one (maxConcurrent). The backend's slot comes first, so a job waiting for
 * its backend holds no global slot.
 */
export class QueueLanes {
  readonly #global: SlotQueue;
  readonly #backends = new Map<string, SlotQueue>();

  constructor(maxConcurrent: number, backendLimits: Record<string, number> = {}) {
    this.#global = new SlotQueue(maxConcurrent);
    for (const [name, limit] of Object.entries(backendLimits)) {
      this.#backends.set(name, new SlotQueue(limit));
    }
  }

  /**
   * Takes the job's slots; `placed` runs once it has to wait for one. False when the job
   * left the line (`leave`), and then it holds no slot.
   */
  async enter(id: string, backend: string | undefined, placed: () => void): Promise<boolean> {
    const lane = this.#lane(backend);
    if (lane && !(await take(lane, id, placed))) return false;
    if (!(await take(this.#global, id, placed))) {
      lane?.release();
      return false;
    }
    return true;
  }

  /** Gives back the slots of a job that entered. */
  exit(backend: string | undefined): void {
    this.#global.release();
    this.#lane(backend)?.release();
  }

  /** Takes a waiting job out of its line; true when it was waiting. */
  leave(id: string, backend: string | undefined): boolean {
    return (this.#lane(backend)?.leave(id) ?? false) || this.#global.leave(id);
  }

  /** 1-based place in whichever line the job waits in, 0 when it waits in none. */
  position(id: string, backend: string | undefined): number {
    return (backend ? this.#lane(backend)?.position(id) : 0) || this.#global.position(id);
  }

  #lane(backend: string | undefined): SlotQueue | undefined {
    return backend ? this.#backends.get(backend) : undefined;
  }
}

function take(queue: SlotQueue, id: string, placed: () => void): Promise<boolean> {
  const granted = queue.acquire(id);
  if (queue.position(id) > 0) placed();
  return granted;
}

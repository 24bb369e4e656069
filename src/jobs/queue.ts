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

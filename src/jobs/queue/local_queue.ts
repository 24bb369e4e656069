/**
 * A queue within this process: at most `limit` holders at once, the rest wait first come
 * first served. Nothing outside the process shares it, so it keeps no files: its tickets are
 * the waiting promises. A waiter can leave the queue (a queued job that is cancelled).
 */
export class LocalQueue {
  #holders = 0;
  #waiting: Array<{ key: string; grant: (granted: boolean) => void }> = [];

  constructor(readonly limit: number) {}

  /**
   * Resolves true once `key` holds a place (the caller must `giveBack()` it later), or false
   * when it left the queue with `leave`. `waiting` runs at once when it has to wait.
   */
  take(key: string, waiting?: () => void): Promise<boolean> {
    if (this.#holders < this.limit) {
      this.#holders++;
      return Promise.resolve(true);
    }
    const granted = new Promise<boolean>((resolve) => this.#waiting.push({ key, grant: resolve }));
    waiting?.();
    return granted;
  }

  /** A holder is done: its place goes to the first waiter, or is free. */
  giveBack(): void {
    const next = this.#waiting.shift();
    if (next) next.grant(true);
    else this.#holders = Math.max(0, this.#holders - 1);
  }

  /** Takes a waiter out of the queue; true if it was waiting. */
  leave(key: string): boolean {
    const i = this.#waiting.findIndex((w) => w.key === key);
    if (i === -1) return false;
    const [waiter] = this.#waiting.splice(i, 1);
    waiter?.grant(false);
    return true;
  }

  /** 1-based place in the queue, or 0 when not waiting. */
  position(key: string): number {
    return this.#waiting.findIndex((w) => w.key === key) + 1;
  }

  get waiting(): number {
    return this.#waiting.length;
  }
}

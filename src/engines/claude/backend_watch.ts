/**
 * Whether a Claude Code turn's backend is gone. Claude Code retries a failing endpoint up to
 * 10 times with backoff over minutes (its `api_retry` events), reporting a refused connection
 * only as "unknown", so a turn whose Ollama died would sit `running` that long. Each retry
 * it reports makes us ask the backend ourselves (backends/reachability.ts): one that answers
 * anything (busy, overloaded, 429, 503) is left to Claude Code's retries; one that answers
 * nothing for DOWN_FOR_MS ends the turn with the native engine's `backend_unreachable` words.
 * Waiting that long first lets a backend that restarts (a service manager bringing Ollama
 * back) keep the turn.
 */
import { probePath } from "../../backends/kinds.ts";
import { probeBackend } from "../../backends/reachability.ts";
import { sleep } from "../../platform/sleep.ts";
import type { BackendKind } from "../../settings/types.ts";
import { ollamaAt, tagFailure, unreachableText } from "../backend_failures.ts";

/** The endpoint a turn's Claude Code talks to, as the watch probes and names it. */
export interface WatchedEndpoint {
  url: string;
  kind: BackendKind;
  /** How a job error names it: "Ollama at <url>", `backend "vllm" at <url>`. */
  where: string;
}

/** The default Ollama at `url`, as the watch names it. */
export const ollamaEndpoint = (url: string): WatchedEndpoint => ({
  url,
  kind: "ollama",
  where: ollamaAt(url),
});

export interface WatchTiming {
  /** How long one probe waits for an answer. */
  probeTimeoutMs: number;
  /** The pause between probes while the backend does not answer. */
  probeEveryMs: number;
  /** How long the backend must go unanswering, from the first failed probe, to be gone. */
  downForMs: number;
}

/**
 * The defaults end a dead backend's turn about 5 s after Claude Code's first failed request: 5 s
 * of probes a second apart (a probe of a host that does not answer at all adds its timeout),
 * then the stop's grace. `bench/backend_death_bench.ts` prints the figure the docs give.
 */
export const WATCH_TIMING: WatchTiming = {
  probeTimeoutMs: 2000,
  probeEveryMs: 1000,
  downForMs: 5000,
};

/**
 * Watches one turn's backend; `onGone` gets the job error once, when it is gone, and how the
 * last probe failed.
 */
export class BackendWatch {
  readonly #stopped = new AbortController();
  #checking: Promise<void> | undefined;

  constructor(
    private readonly endpoint: WatchedEndpoint,
    private readonly onGone: (errorText: string, reason: string) => void,
    private readonly timing: WatchTiming = WATCH_TIMING,
  ) {}

  /** Claude Code reported a failed request that it will retry: is anyone still there? */
  retried(): void {
    if (this.#checking || this.#stopped.signal.aborted) return;
    this.#checking = this.#check().finally(() => {
      this.#checking = undefined;
    });
  }

  /** The turn is over: no more probes; settles once a probe under way has ended. */
  async close(): Promise<void> {
    this.#stopped.abort();
    await this.#checking;
  }

  async #check(): Promise<void> {
    const signal = this.#stopped.signal;
    const { probeTimeoutMs, probeEveryMs, downForMs } = this.timing;
    let downSince: number | undefined;
    while (!signal.aborted) {
      const started = performance.now();
      const { url, kind, where } = this.endpoint;
      const failure = await probeBackend(url, {
        timeoutMs: probeTimeoutMs,
        signal,
        path: probePath(kind),
      });
      // It answered: Claude Code's next attempt may well get through.
      if (!failure || signal.aborted) return;
      downSince ??= started;
      if (performance.now() - downSince >= downForMs) {
        this.#stopped.abort();
        this.onGone(
          tagFailure("backend_unreachable", unreachableText(where, failure.reason, kind)),
          failure.reason,
        );
        return;
      }
      await sleep(probeEveryMs, signal);
    }
  }
}

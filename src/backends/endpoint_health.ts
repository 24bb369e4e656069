/**
 * Whether each endpoint of a pool is up, as this process believes: what its probes found and
 * what jobs ran into. A probe is one cheap GET for the endpoint's kind (Ollama's
 * `/api/version`, an OpenAI-compatible server's `/v1/models` with its key), made in the
 * background while jobs use a pool and when a turn is placed on stale knowledge, never per
 * chat request. A failure a job meets (no connection, a 5xx) marks the endpoint down at once
 * and holds it down for a while even if probes answer, since a server can answer a GET and
 * still fail every chat (a model that crashes on load); a 429 only makes new sessions avoid
 * it until its wait is over.
 */
import type { BackendKind } from "../settings/types.ts";
import { fetchFailure } from "./http_util.ts";
import { probePath } from "./kinds.ts";

/** What a probe needs to know about an endpoint. */
export interface ProbeTarget {
  url: string;
  kind: BackendKind;
  /** Sent to this endpoint only, as its jobs send it. */
  apiKey?: string;
}

export interface HealthTiming {
  /** How long one probe waits for an answer. */
  probeTimeoutMs: number;
  /** How often watched endpoints are probed in the background. */
  everyMs: number;
  /** Knowledge older than this is probed again before a turn is placed on it. */
  freshMs: number;
  /** How long a failure a job met keeps an endpoint down, whatever probes say meanwhile. */
  holdDownMs: number;
}

export const HEALTH_TIMING: HealthTiming = {
  probeTimeoutMs: 2000,
  everyMs: 5000,
  freshMs: 2000,
  holdDownMs: 10_000,
};

/** What this process knows of one endpoint. */
export interface EndpointState {
  up: boolean;
  /** Why it is down (or why it was last found down). */
  reason?: string;
  /** Date.now() of the last probe or failure; undefined = never looked at. */
  checkedAt?: number;
  /** A failure a job met keeps it down until then. */
  heldUntil?: number;
  /** It answered 429: new sessions avoid it until then. */
  throttledUntil?: number;
}

/** Why an endpoint is down, from one probe; undefined when it answered. */
export type Probe = (target: ProbeTarget, timeoutMs: number) => Promise<string | undefined>;

/**
 * One probe: up when the server answers with any status below 500 (a 401 is a server that
 * runs; the job then says the key is wrong), down when it does not answer in time, refuses
 * the connection, or answers 5xx.
 */
export const probeEndpoint: Probe = async (target, timeoutMs) => {
  const path = probePath(target.kind);
  try {
    const response = await fetch(target.url + path, {
      headers: target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {},
      signal: AbortSignal.timeout(timeoutMs),
    });
    // The status line is the answer; the body is not read.
    await response.body?.cancel();
    return response.status >= 500 ? `${path} answered HTTP ${response.status}` : undefined;
  } catch (cause) {
    return `connection failed (${fetchFailure(cause)})`;
  }
};

/** This process's view of every endpoint it was asked about, kept fresh while in use. */
export class EndpointHealth {
  readonly #states = new Map<string, EndpointState>();
  readonly #probing = new Map<string, Promise<void>>();
  readonly #watched = new Map<string, { target: ProbeTarget; users: number }>();
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    readonly timing: HealthTiming = HEALTH_TIMING,
    private readonly probe: Probe = probeEndpoint,
  ) {}

  /** What is known of `url`; an endpoint never looked at counts as up. */
  state(url: string): EndpointState {
    return this.#states.get(url) ?? { up: true };
  }

  isDown(url: string): boolean {
    return !this.state(url).up;
  }

  isThrottled(url: string, now = Date.now()): boolean {
    return (this.state(url).throttledUntil ?? 0) > now;
  }

  /** A job met a failure there (no connection, a 5xx): down, and held down for a while. */
  markDown(url: string, reason: string, holdMs = this.timing.holdDownMs): void {
    const now = Date.now();
    this.#states.set(url, {
      ...this.state(url),
      up: false,
      reason,
      checkedAt: now,
      heldUntil: now + holdMs,
    });
  }

  /** It answered 429: new sessions go elsewhere for `ms`; its own jobs wait there. */
  throttle(url: string, ms: number): void {
    const until = Date.now() + Math.max(0, ms);
    const state = this.state(url);
    this.#states.set(url, { ...state, throttledUntil: Math.max(until, state.throttledUntil ?? 0) });
  }

  /** Probes the targets not looked at within `maxAgeMs`, in parallel; settles when all did. */
  async refresh(targets: readonly ProbeTarget[], maxAgeMs = this.timing.freshMs): Promise<void> {
    const now = Date.now();
    await Promise.all(
      targets.filter((t) => now - (this.state(t.url).checkedAt ?? -Infinity) >= maxAgeMs)
        .map((t) => this.#probeOnce(t)),
    );
  }

  /**
   * Probes `targets` in the background until the returned function is called (by every
   * caller that watches them): a job's endpoints while it runs.
   */
  watch(targets: readonly ProbeTarget[]): () => void {
    for (const target of targets) {
      const known = this.#watched.get(target.url);
      if (known) known.users++;
      else this.#watched.set(target.url, { target, users: 1 });
    }
    if (this.#timer === undefined && this.#watched.size > 0) {
      this.#timer = setInterval(() => {
        for (const { target } of this.#watched.values()) void this.#probeOnce(target);
      }, this.timing.everyMs);
      // Probing is for the jobs that keep the server running, never a reason to stay up.
      (this.#timer as { unref?: () => void }).unref?.();
    }
    let done = false;
    return () => {
      if (done) return;
      done = true;
      for (const target of targets) {
        const known = this.#watched.get(target.url);
        if (known && --known.users <= 0) this.#watched.delete(target.url);
      }
      if (this.#watched.size === 0 && this.#timer !== undefined) {
        clearInterval(this.#timer);
        this.#timer = undefined;
      }
    };
  }

  /** One probe of `target` at a time; callers asking meanwhile share it. */
  #probeOnce(target: ProbeTarget): Promise<void> {
    let running = this.#probing.get(target.url);
    if (running) return running;
    running = this.probe(target, this.timing.probeTimeoutMs)
      .catch((e) => `probe failed (${(e as Error).message})`)
      .then((down) => this.#record(target.url, down))
      .finally(() => this.#probing.delete(target.url));
    this.#probing.set(target.url, running);
    return running;
  }

  #record(url: string, down: string | undefined): void {
    const now = Date.now();
    const state = this.state(url);
    if (down !== undefined) {
      this.#states.set(url, { ...state, up: false, reason: down, checkedAt: now });
      return;
    }
    // A failure a job met outweighs a probe that answered, until its hold is over.
    if (!state.up && (state.heldUntil ?? 0) > now) {
      this.#states.set(url, { ...state, checkedAt: now });
      return;
    }
    const { reason: _reason, heldUntil: _held, ...rest } = state;
    this.#states.set(url, { ...rest, up: true, checkedAt: now });
  }
}

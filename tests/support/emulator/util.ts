/**
 * Helpers shared by the Ollama emulator's route modules (emulator.ts and
 * openai.ts). Nothing here knows about a particular endpoint.
 */

export const JSON_TYPE = "application/json; charset=utf-8";

export function jsonResponse(
  status: number,
  body: unknown,
  head = false,
  headers: Record<string, string> = {},
): Response {
  return new Response(head ? null : JSON.stringify(body), {
    status,
    headers: { "content-type": JSON_TYPE, ...headers },
  });
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function randomHex(bytes: number): string {
  const buf = crypto.getRandomValues(new Uint8Array(bytes));
  return Array.from(buf, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Lower-case letters and digits: the alphabet of Ollama's `call_xxxxxxxx` tool-call ids. */
export function randomAlnum(len: number): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  const buf = crypto.getRandomValues(new Uint8Array(len));
  return Array.from(buf, (b) => alphabet[b % alphabet.length]).join("");
}

/**
 * Waits `ms` (Infinity = forever) unless one of the signals aborts first; resolves true only when
 * the full time elapsed. Listeners and the timer are always removed so tests see no leaks.
 */
export function wait(ms: number, signals: AbortSignal[]): Promise<boolean> {
  if (signals.some((s) => s.aborted)) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const finish = (completed: boolean) => {
      if (timer !== undefined) clearTimeout(timer);
      for (const s of signals) s.removeEventListener("abort", onAbort);
      resolve(completed);
    };
    const onAbort = () => finish(false);
    for (const s of signals) s.addEventListener("abort", onAbort, { once: true });
    if (Number.isFinite(ms)) timer = setTimeout(() => finish(true), ms);
  });
}

/** Splits text into at most `parts` pieces of `size` code points (so no surrogate pair is torn
 * apart); `size` wins when given. */
export function splitText(text: string, parts: number, size?: number): string[] {
  const chars = Array.from(text);
  if (chars.length === 0) return [];
  const step = size !== undefined && size > 0
    ? Math.floor(size)
    : Math.ceil(chars.length / Math.min(parts, chars.length));
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += step) out.push(chars.slice(i, i + step).join(""));
  return out;
}

/**
 * Waits for `until` to settle (when given), then `ms`, unless one of the signals aborts first;
 * resolves true only when both waits ran to their end.
 */
export async function waitDelay(
  delay: { ms: number; until?: Promise<unknown> },
  signals: AbortSignal[],
): Promise<boolean> {
  if (delay.until) {
    const aborted = new AbortController();
    const settled = delay.until.then(() => true, () => true);
    const done = await Promise.race([settled, wait(Infinity, [...signals, aborted.signal])]);
    // Removes the listeners wait() put on the signals.
    aborted.abort();
    if (!done) return false;
  }
  return await wait(delay.ms, signals);
}

/** What a streaming route sends: Ollama's NDJSON, or server-sent events (OpenAI, Anthropic). */
export const SSE_HEADERS = { "content-type": "text/event-stream", "cache-control": "no-cache" };

/**
 * A 200 response whose body `write` streams through `send`, closed when `write` returns (a
 * route cut off mid-answer just returns early). The one streaming prologue of the emulator's
 * chat routes: req.signal is not usable once the response has been returned, so a client that
 * goes away mid-stream is noticed through cancel(), which aborts `cancelled`.
 */
export function streamedResponse(
  headers: Record<string, string>,
  write: (send: (text: string) => void, cancelled: AbortSignal) => Promise<void>,
): Response {
  const encoder = new TextEncoder();
  const cancelled = new AbortController();
  const stream = new ReadableStream<Uint8Array>({
    start: (controller) => {
      const run = async () => {
        try {
          await write((text) => controller.enqueue(encoder.encode(text)), cancelled.signal);
          controller.close();
        } catch {
          // The client cancelled; enqueue/close on a cancelled stream throws, which is fine.
        }
      };
      void run();
    },
    cancel: () => cancelled.abort(),
  });
  return new Response(stream, { status: 200, headers });
}

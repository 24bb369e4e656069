/**
 * Whether a backend answers at all: one cheap GET (Ollama's `/api/version`, or the probe path
 * of the backend's kind, kinds.ts), where any HTTP answer
 * counts (a 404 from a server that is not Ollama, a 503 from one that is busy, a 401 from a
 * proxy) and only no connection, or no answer in time, does not. It tells a backend that is
 * gone from one that failed a request and may well answer the next.
 */
import { ConnectionError } from "./chat_types.ts";
import { fetchFailure } from "./http_util.ts";

/** Why the backend at `baseUrl` did not answer; undefined when it answered. */
export async function probeBackend(
  baseUrl: string,
  options: { timeoutMs: number; signal?: AbortSignal; path?: string },
): Promise<ConnectionError | undefined> {
  // Not AbortSignal.any: one local controller that the timeout and the caller both abort.
  const local = new AbortController();
  const timer = setTimeout(
    () => local.abort(new DOMException("no answer in time", "TimeoutError")),
    options.timeoutMs,
  );
  const forward = () => local.abort(options.signal?.reason);
  if (options.signal?.aborted) forward();
  options.signal?.addEventListener("abort", forward, { once: true });
  try {
    const response = await fetch(baseUrl + (options.path ?? "/api/version"), {
      signal: local.signal,
    });
    // The status line is the answer; the body is not read.
    await response.body?.cancel();
    return undefined;
  } catch (cause) {
    const reason = `connection failed (${fetchFailure(cause)})`;
    return new ConnectionError(reason, {
      kind: "unreachable",
      message: `Cannot reach ${baseUrl}: ${reason}`,
      cause,
    });
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", forward);
  }
}

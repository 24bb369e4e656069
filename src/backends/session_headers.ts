/**
 * Which delegate session a request belongs to, said the ways the common gateways in front of
 * several replicas read it, so that every request of one session reaches the replica that
 * holds its cached prefix: a coding delegate resends the same long prefix with every request,
 * and a gateway that scatters them loses the cache (LiteLLM #38078: hits "from ~95 % to near
 * zero"). The value is the job layer's session id: random, the same for every turn of a
 * session, its own for each new session (each review panel member is one).
 *
 *   X-Dynamo-Session-ID     NVIDIA Dynamo's canonical session header; its router binds a
 *                           session to a worker when started with
 *                           --router-session-affinity-ttl-secs (Dynamo docs, "Session IDs")
 *   x-litellm-session-id    LiteLLM proxy's session id (its agent docs: "via
 *                           x-litellm-session-id header"); the router's `session_affinity`
 *                           pre-call check pins a session to one deployment
 *   X-SMG-Routing-Key       SGLang Model Gateway's routing key, read by its
 *                           `consistent_hashing` and `manual` policies (SMG docs, "Sticky
 *                           Sessions and Routing Keys")
 *   x-session-id            the generic name OpenRouter, OpenCode and header-hashing load
 *                           balancers (nginx `hash $http_x_session_id consistent`) use
 *
 * Claude Code sends its own `X-Claude-Code-Session-Id` (the claude engine's session id, which
 * Dynamo and LiteLLM also read); OpenAI-compatible bodies carry the id as `user`, Messages
 * bodies as `metadata.user_id`. llm-d's session-affinity scorer works the other way: it
 * answers with a token naming the pod (`x-session-token`, or in newer versions a cookie
 * `llm-d-session`) for the client to send back; SessionEcho keeps and returns it.
 */

/** The headers every request of session `id` carries. */
export function sessionHeaders(id: string): Record<string, string> {
  return {
    "X-Dynamo-Session-ID": id,
    "x-litellm-session-id": id,
    "X-SMG-Routing-Key": id,
    "x-session-id": id,
  };
}

/**
 * The same headers as Claude Code's `ANTHROPIC_CUSTOM_HEADERS` takes them: one
 * `Name: value` a line.
 */
export function customHeadersText(id: string): string {
  return Object.entries(sessionHeaders(id)).map(([name, value]) => `${name}: ${value}`)
    .join("\n");
}

/** llm-d's scorer's response header (llm-d-inference-scheduler, session_affinity.go). */
const TOKEN_HEADER = "x-session-token";
/** The cookie newer llm-d routers set instead (llm-d-router, sessionaffinity). */
const COOKIE_NAME = "llm-d-session";
/** A token is base64 of a pod's namespaced name: anything else is not kept. */
const TOKEN_SHAPE = /^[A-Za-z0-9+/=_.-]{1,512}$/;
/** Sessions remembered at most; the oldest is forgotten first. */
const MAX_SESSIONS = 2000;

/**
 * What gateways handed back for each session to echo (llm-d), kept in this process: the
 * native engine's chat clients and the claude engine's relay share it, so a session's next
 * turn sends back what its last one was given.
 */
export class SessionEcho {
  readonly #bySession = new Map<string, { token?: string; cookie?: string }>();

  /** Keeps what `headers` (a response to a request of session `id`) asks to be sent back. */
  remember(id: string, headers: Headers): void {
    const token = headers.get(TOKEN_HEADER)?.trim();
    const cookie = cookieValue(headers);
    const kept = {
      ...this.#bySession.get(id),
      ...(token && TOKEN_SHAPE.test(token) ? { token } : {}),
      ...(cookie ? { cookie } : {}),
    };
    if (kept.token === undefined && kept.cookie === undefined) return;
    this.#bySession.delete(id);
    this.#bySession.set(id, kept);
    if (this.#bySession.size > MAX_SESSIONS) {
      this.#bySession.delete(this.#bySession.keys().next().value!);
    }
  }

  /** The headers that send it back on the next request of session `id`. */
  headers(id: string): Record<string, string> {
    const kept = this.#bySession.get(id);
    return {
      ...(kept?.token ? { [TOKEN_HEADER]: kept.token } : {}),
      ...(kept?.cookie ? { cookie: `${COOKIE_NAME}=${kept.cookie}` } : {}),
    };
  }
}

/** The value of the `llm-d-session` cookie a response sets, when it sets a usable one. */
function cookieValue(headers: Headers): string | undefined {
  const set = typeof headers.getSetCookie === "function"
    ? headers.getSetCookie()
    : [headers.get("set-cookie") ?? ""];
  for (const line of set) {
    const first = line.split(";")[0]?.trim() ?? "";
    const eq = first.indexOf("=");
    if (eq > 0 && first.slice(0, eq) === COOKIE_NAME) {
      const value = first.slice(eq + 1);
      if (TOKEN_SHAPE.test(value)) return value;
    }
  }
  return undefined;
}

/** The one store of this process. */
export const sessionEcho = new SessionEcho();

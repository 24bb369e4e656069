/**
 * A small gateway in front of several replicas, for tests and benchmarks of session affinity:
 * it sends a request to the replica its routing key names, and one without a key to the next
 * replica in turn (what a load balancer without affinity does, scattering a session's turns).
 *
 *   { header: "x-dynamo-session-id" }   the key is that header's value, hashed onto a replica
 *                                       (Dynamo, LiteLLM, SGLang's gateway, nginx `hash`)
 *   { echo: true }                      llm-d's session-affinity scorer: a request that sends
 *                                       back `x-session-token` (or the `llm-d-session` cookie)
 *                                       goes where it names; every answer carries the token of
 *                                       the replica that served it
 *
 * Bodies pass through untouched and stream back as they come. Each request is recorded with
 * the replica that served it.
 */
export interface ProxyMode {
  header?: string;
  echo?: boolean;
}

export interface ProxiedRequest {
  path: string;
  /** Index of the replica that served it. */
  replica: number;
  /** The routing key it carried, when it carried one. */
  key?: string;
}

export interface SessionProxy extends AsyncDisposable {
  url: string;
  requests: ProxiedRequest[];
  close(): Promise<void>;
}

/** FNV-1a: a stable hash, so a key always lands on one replica. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (const ch of text) {
    h ^= ch.codePointAt(0)!;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

const tokenOf = (replica: number) => btoa(`default/replica-${replica}`);

export function startSessionProxy(replicas: readonly string[], mode: ProxyMode): SessionProxy {
  const requests: ProxiedRequest[] = [];
  let next = 0;
  const pick = (req: Request): { replica: number; key?: string } => {
    if (mode.header) {
      const key = req.headers.get(mode.header) ?? undefined;
      if (key) return { replica: hash(key) % replicas.length, key };
    }
    if (mode.echo) {
      const cookie = /(?:^|;\s*)llm-d-session=([^;]+)/.exec(req.headers.get("cookie") ?? "")?.[1];
      const token = req.headers.get("x-session-token") ?? cookie;
      const at = token ? replicas.findIndex((_, i) => tokenOf(i) === token) : -1;
      if (at >= 0) return { replica: at, key: token! };
    }
    return { replica: next++ % replicas.length };
  };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    const { replica, key } = pick(req);
    if (req.method === "POST") {
      requests.push({ path: url.pathname, replica, ...(key ? { key } : {}) });
    }
    const headers = new Headers(req.headers);
    headers.delete("host");
    const upstream = await fetch(replicas[replica] + url.pathname + url.search, {
      method: req.method,
      headers,
      ...(req.body ? { body: await req.arrayBuffer() } : {}),
    });
    const out = new Headers(upstream.headers);
    out.delete("content-encoding");
    out.delete("content-length");
    if (mode.echo) out.set("x-session-token", tokenOf(replica));
    return new Response(upstream.body, { status: upstream.status, headers: out });
  });
  const close = () => server.shutdown();
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    requests,
    close,
    [Symbol.asyncDispose]: close,
  };
}

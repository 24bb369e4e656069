/**
 * A loopback relay between Claude Code and a named backend. A claude delegate's Claude Code
 * runs in a jail whose commands can read its environment and command line (/proc in the
 * jail's pid namespace), so a backend's API key given to it would be given to the model's
 * commands too. Instead Claude Code is pointed at `http://127.0.0.1:<port>/<route token>`,
 * and the relay forwards each request to the endpoint with the key: the jail holds only the
 * token, which this relay honours for one turn. Responses stream back as they come. The relay
 * also sends back what a gateway handed the session to echo (llm-d's session token,
 * session_headers.ts), as the native engine's clients do.
 *
 * Listening only while a route is open: the last route's close closes the listener.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { randomBytes } from "node:crypto";
import { fetchFailure } from "./http_util.ts";
import { sessionEcho } from "./session_headers.ts";

/** Where one turn's requests go. */
export interface RouteSpec {
  /** The endpoint's root URL now (a pool's turn may be moved between requests). */
  target: () => string;
  /** Sent to the endpoint only, both ways Messages servers read a key. */
  apiKey?: string;
  /** The delegate session: what a gateway hands back for it is echoed. */
  session?: string;
}

export interface RelayRoute {
  /** What Claude Code gets as ANTHROPIC_BASE_URL. */
  baseUrl: string;
  close(): void;
}

/** A request body larger than this is refused (Claude Code's are under a few MB). */
const MAX_REQUEST_BYTES = 64 * 1024 * 1024;

/** Headers not passed on: hop-by-hop ones (RFC 9110 7.6.1), and the client's credentials. */
const REQUEST_DROPS = new Set([
  "connection",
  "keep-alive",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
  "content-length",
  "authorization",
  "x-api-key",
  "accept-encoding",
]);
/** fetch decodes a compressed body, so its encoding and length no longer hold. */
const RESPONSE_DROPS = new Set([
  "connection",
  "keep-alive",
  "transfer-encoding",
  "content-encoding",
  "content-length",
]);

/** An error in the Messages API's shape, which Claude Code reads. */
function errorBody(type: string, message: string): string {
  return JSON.stringify({ type: "error", error: { type, message } });
}

export class KeyRelay {
  readonly #routes = new Map<string, RouteSpec>();
  #server: Server | undefined;
  #listening: Promise<number> | undefined;

  /** Opens a route for one turn. */
  async open(spec: RouteSpec): Promise<RelayRoute> {
    const token = randomBytes(32).toString("hex");
    this.#routes.set(token, spec);
    let port: number;
    try {
      port = await this.#listen();
    } catch (e) {
      this.#routes.delete(token);
      throw e;
    }
    let closed = false;
    return {
      baseUrl: `http://127.0.0.1:${port}/${token}`,
      close: () => {
        if (closed) return;
        closed = true;
        this.#routes.delete(token);
        if (this.#routes.size === 0) this.#stop();
      },
    };
  }

  #listen(): Promise<number> {
    if (this.#listening) return this.#listening;
    const server = createServer((req, res) => {
      this.#handle(req, res).catch((e) => {
        if (!res.headersSent) {
          res.writeHead(500, { "content-type": "application/json" });
          res.end(errorBody("api_error", `relay failed: ${(e as Error).message}`));
        } else res.destroy();
      });
    });
    this.#server = server;
    this.#listening = new Promise<number>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => {
        const address = server.address();
        if (address && typeof address === "object") resolve(address.port);
        else reject(new Error("the relay has no port"));
      });
    });
    return this.#listening;
  }

  #stop(): void {
    const server = this.#server;
    this.#server = undefined;
    this.#listening = undefined;
    server?.close();
    // Keep-alive connections of Claude Code would hold the listener open past its turn.
    (server as { closeAllConnections?: () => void } | undefined)?.closeAllConnections?.();
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = req.url ?? "/";
    const slash = raw.indexOf("/", 1);
    const token = raw.slice(1, slash === -1 ? undefined : slash).split("?")[0]!;
    const spec = this.#routes.get(token);
    if (!spec) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(errorBody("not_found_error", "no such route (the turn it was made for is over)"));
      return;
    }
    const rest = slash === -1 ? "/" : raw.slice(slash);
    const body = await readBody(req);
    if (body === "too large") {
      res.writeHead(413, { "content-type": "application/json" });
      res.end(errorBody("request_too_large", `request over ${MAX_REQUEST_BYTES} bytes`));
      return;
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined || REQUEST_DROPS.has(name)) continue;
      headers[name] = Array.isArray(value) ? value.join(", ") : value;
    }
    if (spec.apiKey) {
      headers.authorization = `Bearer ${spec.apiKey}`;
      headers["x-api-key"] = spec.apiKey;
    }
    if (spec.session) Object.assign(headers, sessionEcho.headers(spec.session));
    const aborted = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) aborted.abort();
    });
    const target = spec.target();
    let upstream: Response;
    try {
      upstream = await fetch(target + rest, {
        method: req.method ?? "GET",
        headers,
        ...(body.length > 0 ? { body } : {}),
        signal: aborted.signal,
      });
    } catch (cause) {
      if (aborted.signal.aborted) return;
      // A 502 is what Claude Code retries; its retries make the turn's watch probe the endpoint.
      res.writeHead(502, { "content-type": "application/json" });
      res.end(errorBody("api_error", `Cannot reach ${target}: ${fetchFailure(cause)}`));
      return;
    }
    if (spec.session) sessionEcho.remember(spec.session, upstream.headers);
    const out: Record<string, string> = {};
    upstream.headers.forEach((value, name) => {
      if (!RESPONSE_DROPS.has(name)) out[name] = value;
    });
    res.writeHead(upstream.status, out);
    if (!upstream.body) {
      res.end();
      return;
    }
    try {
      for await (const chunk of upstream.body) {
        if (!res.write(chunk)) await new Promise((r) => res.once("drain", r));
        if (aborted.signal.aborted) break;
      }
      res.end();
    } catch {
      res.destroy();
    }
  }
}

/** The whole body of a request, or "too large" past MAX_REQUEST_BYTES. */
async function readBody(req: IncomingMessage): Promise<Uint8Array<ArrayBuffer> | "too large"> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of req) {
    const bytes = chunk as Uint8Array;
    size += bytes.length;
    if (size > MAX_REQUEST_BYTES) return "too large";
    chunks.push(bytes);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

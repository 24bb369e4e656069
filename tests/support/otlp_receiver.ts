/**
 * A loopback OTLP/HTTP receiver, for tests: it accepts `POST /v1/traces` and `/v1/metrics` with
 * JSON bodies (the OTLP specification's "OTLP/HTTP" JSON encoding: `resourceSpans` and
 * `resourceMetrics`, attributes as `{key, value: {stringValue | intValue | boolValue |
 * doubleValue}}`, ids in hex) and keeps what arrived, flattened for assertions.
 */

export interface ReceivedSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  kind: number;
  startMs: number;
  endMs: number;
  attributes: Record<string, string | number | boolean>;
  status?: { code?: number; message?: string };
  resource: Record<string, string | number | boolean>;
}

export interface ReceivedPoint {
  metric: string;
  unit?: string;
  attributes: Record<string, string | number | boolean>;
  /** A counter's value, or a histogram point's count. */
  value: number;
  sum?: number;
}

export interface OtlpReceiver extends AsyncDisposable {
  url: string;
  spans: ReceivedSpan[];
  points: ReceivedPoint[];
  /** Content types of the requests, by path. */
  contentTypes: string[];
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

function value(v: unknown): string | number | boolean {
  const o = (v ?? {}) as Json;
  if (typeof o.stringValue === "string") return o.stringValue;
  if (o.intValue !== undefined) return Number(o.intValue);
  if (typeof o.doubleValue === "number") return o.doubleValue;
  if (typeof o.boolValue === "boolean") return o.boolValue;
  return JSON.stringify(o);
}

function attributes(list: unknown): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const a of Array.isArray(list) ? list as Json[] : []) {
    if (typeof a.key === "string") out[a.key] = value(a.value);
  }
  return out;
}

const ms = (nanos: unknown) => Number(BigInt(String(nanos ?? 0)) / 1_000_000n);

export function startOtlpReceiver(): OtlpReceiver {
  const spans: ReceivedSpan[] = [];
  const points: ReceivedPoint[] = [];
  const contentTypes: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const path = new URL(req.url).pathname;
    contentTypes.push(`${path} ${req.headers.get("content-type")}`);
    const body = await req.json().catch(() => ({})) as Json;
    if (path === "/v1/traces") {
      for (const rs of (body.resourceSpans as Json[] | undefined) ?? []) {
        const resource = attributes((rs.resource as Json | undefined)?.attributes);
        for (const ss of (rs.scopeSpans as Json[] | undefined) ?? []) {
          for (const s of (ss.spans as Json[] | undefined) ?? []) {
            spans.push({
              name: String(s.name),
              traceId: String(s.traceId),
              spanId: String(s.spanId),
              ...(s.parentSpanId ? { parentSpanId: String(s.parentSpanId) } : {}),
              kind: Number(s.kind ?? 0),
              startMs: ms(s.startTimeUnixNano),
              endMs: ms(s.endTimeUnixNano),
              attributes: attributes(s.attributes),
              ...(s.status ? { status: s.status as ReceivedSpan["status"] } : {}),
              resource,
            });
          }
        }
      }
    } else if (path === "/v1/metrics") {
      for (const rm of (body.resourceMetrics as Json[] | undefined) ?? []) {
        for (const sm of (rm.scopeMetrics as Json[] | undefined) ?? []) {
          for (const m of (sm.metrics as Json[] | undefined) ?? []) {
            const data = (m.sum ?? m.histogram ?? m.gauge) as Json | undefined;
            for (const p of (data?.dataPoints as Json[] | undefined) ?? []) {
              points.push({
                metric: String(m.name),
                ...(m.unit ? { unit: String(m.unit) } : {}),
                attributes: attributes(p.attributes),
                value: p.count !== undefined ? Number(p.count) : Number(p.asInt ?? p.asDouble ?? 0),
                ...(p.sum !== undefined ? { sum: Number(p.sum) } : {}),
              });
            }
          }
        }
      }
    }
    return Response.json({});
  });
  const close = () => server.shutdown();
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    spans,
    points,
    contentTypes,
    close,
    [Symbol.asyncDispose]: close,
  };
}

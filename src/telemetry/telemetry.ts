/**
 * OpenTelemetry for the server, off until configured. The standard variables turn it on
 * (the OpenTelemetry specification's "OTLP Exporter Configuration"): OTEL_EXPORTER_OTLP_ENDPOINT,
 * or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_EXPORTER_OTLP_METRICS_ENDPOINT for one signal;
 * OTEL_SDK_DISABLED=true and OTEL_{TRACES,METRICS}_EXPORTER=none turn it off again. Only then
 * is the official SDK loaded (otel_sdk.ts, at the job layer's start, never before `initialize`
 * is answered); otherwise every call here does nothing and nothing is sent.
 *
 * The rest of the program speaks to this facade only: spans by name with attributes and a
 * parent as a W3C trace context, and the metrics of METRICS by name. The trace context of the
 * MCP request a job was started by (its `_meta.traceparent`, MCP SEP-414 and OpenTelemetry's
 * MCP conventions) is kept for the call's duration (withRequestTrace) and becomes the parent
 * of the job's span.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { OtlpConfig, Span, Telemetry, TraceParent } from "./telemetry_types.ts";

export type {
  Attributes,
  MetricName,
  OtlpConfig,
  Span,
  SpanOptions,
  Telemetry,
  TraceParent,
} from "./telemetry_types.ts";
export { METRICS } from "./telemetry_types.ts";

const NO_SPAN: Span = {
  set() {},
  end() {},
  context: () => undefined,
};

/** Telemetry that records nothing: what every caller gets unless it was configured. */
export const NO_TELEMETRY: Telemetry = {
  enabled: false,
  span: () => NO_SPAN,
  metric() {},
  shutdown: () => Promise.resolve(),
};

const isNone = (v: string | undefined) => v?.trim().toLowerCase() === "none";

/** `key=value,key2=value2` with percent-encoded values (W3C Baggage's format, as OTel reads it). */
function keyValues(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (text ?? "").split(",")) {
    const eq = part.indexOf("=");
    if (eq <= 0) continue;
    const key = part.slice(0, eq).trim();
    try {
      out[key] = decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      out[key] = part.slice(eq + 1).trim();
    }
  }
  return out;
}

/** A base endpoint with a signal's path appended, as the specification says to. */
function signalUrl(base: string, path: string): string {
  return base.replace(/\/+$/, "") + path;
}

/** The OTLP configuration the environment asks for; undefined when telemetry is off. */
export function otlpConfig(env: Record<string, string | undefined>): OtlpConfig | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return undefined;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || undefined;
  const traces = isNone(env.OTEL_TRACES_EXPORTER)
    ? undefined
    : env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() ||
      (base && signalUrl(base, "/v1/traces"));
  const metrics = isNone(env.OTEL_METRICS_EXPORTER)
    ? undefined
    : env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT?.trim() ||
      (base && signalUrl(base, "/v1/metrics"));
  if (!traces && !metrics) return undefined;
  const headers = keyValues(env.OTEL_EXPORTER_OTLP_HEADERS);
  const resource = keyValues(env.OTEL_RESOURCE_ATTRIBUTES);
  const interval = Number(env.OTEL_METRIC_EXPORT_INTERVAL);
  return {
    ...(traces ? { traces } : {}),
    ...(metrics ? { metrics } : {}),
    headers: {
      traces: { ...headers, ...keyValues(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS) },
      metrics: { ...headers, ...keyValues(env.OTEL_EXPORTER_OTLP_METRICS_HEADERS) },
    },
    serviceName: env.OTEL_SERVICE_NAME?.trim() || resource["service.name"] || "ollama-delegate",
    resource,
    metricIntervalMs: Number.isFinite(interval) && interval > 0 ? interval : 60_000,
  };
}

/**
 * The server's telemetry: the SDK, loaded now, when the environment configures it; else
 * NO_TELEMETRY, and nothing is loaded. A failure to load is logged and leaves it off.
 */
export async function startTelemetry(
  env: Record<string, string | undefined>,
  log: (line: string) => void,
): Promise<Telemetry> {
  const config = otlpConfig(env);
  if (!config) return NO_TELEMETRY;
  try {
    const { otelTelemetry } = await import("./otel_sdk.ts");
    const telemetry = otelTelemetry(config, log);
    const asked = env.OTEL_EXPORTER_OTLP_PROTOCOL?.trim();
    if (asked && asked !== "http/json") {
      log(
        `OTEL_EXPORTER_OTLP_PROTOCOL is "${asked}": this server sends OTLP/HTTP with JSON bodies`,
      );
    }
    log(
      `OpenTelemetry on: ${
        [
          config.traces && `traces to ${config.traces}`,
          config.metrics && `metrics to ${config.metrics}`,
        ]
          .filter(Boolean).join(", ")
      } (OTLP/HTTP, JSON)`,
    );
    return telemetry;
  } catch (e) {
    log(`OpenTelemetry is configured but could not start: ${(e as Error).message}`);
    return NO_TELEMETRY;
  }
}

const requestTrace = new AsyncLocalStorage<TraceParent | undefined>();

/** `_meta` of an MCP request as a trace context, when it carries a valid traceparent. */
export function traceOfMeta(meta: unknown): TraceParent | undefined {
  if (typeof meta !== "object" || meta === null) return undefined;
  const { traceparent, tracestate } = meta as Record<string, unknown>;
  // W3C Trace Context, "traceparent Header": version-traceid-parentid-flags.
  if (
    typeof traceparent !== "string" ||
    !/^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/.test(traceparent)
  ) {
    return undefined;
  }
  return {
    traceparent,
    ...(typeof tracestate === "string" && tracestate.length <= 512 ? { tracestate } : {}),
  };
}

/** Runs `fn` with `parent` as the trace context of the request it serves. */
export function withRequestTrace<T>(parent: TraceParent | undefined, fn: () => T): T {
  return requestTrace.run(parent, fn);
}

/** The trace context of the MCP request being served, if it sent one. */
export function currentRequestTrace(): TraceParent | undefined {
  return requestTrace.getStore();
}

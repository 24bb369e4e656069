/**
 * The official OpenTelemetry JS SDK behind the facade (telemetry.ts), loaded only when the
 * environment configures an OTLP endpoint: a tracer provider with a batching processor and a
 * meter provider with a periodic reader, both exporting OTLP/HTTP (JSON bodies) to the URLs
 * the standard variables give. Nothing here is global: no context manager, no global
 * provider; parents travel as W3C trace contexts, so spans of a job started in one call and
 * ended in another nest as they should.
 */
import {
  type Attributes as OtelAttributes,
  type Context,
  type Counter,
  defaultTextMapGetter,
  defaultTextMapSetter,
  type Histogram,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import { BatchSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { VERSION } from "../version.ts";
import {
  type Attributes,
  type MetricName,
  METRICS,
  type OtlpConfig,
  type Span,
  type SpanOptions,
  type Telemetry,
  type TraceParent,
} from "./telemetry_types.ts";

const SCOPE = "ollama-delegate";

/**
 * Histogram bounds for durations in seconds: the GenAI conventions' advice for
 * gen_ai.client.operation.duration, with longer ones for jobs that run for minutes.
 */
const SECONDS = [
  0.01,
  0.02,
  0.04,
  0.08,
  0.16,
  0.32,
  0.64,
  1.28,
  2.56,
  5.12,
  10.24,
  20.48,
  40.96,
  81.92,
  163.84,
  327.68,
  655.36,
  1310.72,
  2621.44,
];
/** The GenAI conventions' advice for gen_ai.client.token.usage. */
const TOKENS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304];

/** Attributes without the undefined ones, as OpenTelemetry takes them. */
function clean(attributes: Attributes | undefined): OtelAttributes {
  const out: OtelAttributes = {};
  for (const [k, v] of Object.entries(attributes ?? {})) if (v !== undefined) out[k] = v;
  return out;
}

export function otelTelemetry(config: OtlpConfig, log: (line: string) => void): Telemetry {
  const resource = resourceFromAttributes({
    ...config.resource,
    "service.name": config.serviceName,
    "service.version": VERSION,
  });
  const propagator = new W3CTraceContextPropagator();
  const tracerProvider = config.traces
    ? new TracerProvider({
      resource,
      spanProcessors: [
        new BatchSpanProcessor({
          exporter: new OTLPTraceExporter({ url: config.traces, headers: config.headers.traces }),
          // Jobs end seconds apart: send what ended within a second.
          scheduledDelayMillis: 1000,
        }),
      ],
    })
    : undefined;
  const meterProvider = config.metrics
    ? new MeterProvider({
      resource,
      readers: [
        new PeriodicExportingMetricReader({
          exporter: new OTLPMetricExporter({
            url: config.metrics,
            headers: config.headers.metrics,
          }),
          exportIntervalMillis: config.metricIntervalMs,
        }),
      ],
    })
    : undefined;
  const tracer = tracerProvider?.getTracer(SCOPE, VERSION);
  const meter = meterProvider?.getMeter(SCOPE, VERSION);
  const instruments = new Map<MetricName, Counter | Histogram>();
  const instrument = (name: MetricName): Counter | Histogram | undefined => {
    if (!meter) return undefined;
    let found = instruments.get(name);
    if (!found) {
      const spec = METRICS[name];
      found = spec.instrument === "counter"
        ? meter.createCounter(name, { unit: spec.unit, description: spec.description })
        : meter.createHistogram(name, {
          unit: spec.unit,
          description: spec.description,
          advice: { explicitBucketBoundaries: spec.unit === "s" ? SECONDS : TOKENS },
        });
      instruments.set(name, found);
    }
    return found;
  };
  const parentContext = (parent: TraceParent | undefined): Context =>
    parent ? propagator.extract(ROOT_CONTEXT, { ...parent }, defaultTextMapGetter) : ROOT_CONTEXT;
  let stopped: Promise<void> | undefined;

  return {
    enabled: true,
    span(name: string, options: SpanOptions = {}): Span {
      if (!tracer) return { set() {}, end() {}, context: () => undefined };
      const span = tracer.startSpan(name, {
        kind: options.kind === "client" ? SpanKind.CLIENT : SpanKind.INTERNAL,
        attributes: clean(options.attributes),
        ...(options.start !== undefined ? { startTime: options.start } : {}),
      }, parentContext(options.parent));
      return {
        set: (attributes) => void span.setAttributes(clean(attributes)),
        end: (o = {}) => {
          if (o.error !== undefined) {
            span.setAttribute("error.type", o.error);
            span.setStatus({ code: SpanStatusCode.ERROR, message: o.error });
          }
          span.end(o.at);
        },
        context: () => {
          const carrier: Record<string, string> = {};
          propagator.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, defaultTextMapSetter);
          return carrier.traceparent
            ? {
              traceparent: carrier.traceparent,
              ...(carrier.tracestate ? { tracestate: carrier.tracestate } : {}),
            }
            : undefined;
        },
      };
    },
    metric(name, value, attributes) {
      const found = instrument(name);
      if (!found) return;
      if ("add" in found) found.add(value, clean(attributes));
      else found.record(value, clean(attributes));
    },
    shutdown() {
      stopped ??= Promise.all([
        tracerProvider?.shutdown(),
        meterProvider?.shutdown(),
      ]).then(() => {}, (e) => log(`OpenTelemetry export failed at shutdown: ${e}`));
      return stopped;
    },
  };
}

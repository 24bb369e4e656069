/**
 * What the telemetry facade (telemetry.ts) and the SDK behind it (otel_sdk.ts) share: the
 * shapes of spans and their parents, the metrics by name, and the export configuration.
 */

/** A W3C Trace Context (traceparent, and tracestate when there is one). */
export interface TraceParent {
  traceparent: string;
  tracestate?: string;
}

export type Attributes = Record<string, string | number | boolean | undefined>;

export interface Span {
  /** Sets attributes, replacing those of the same name. */
  set(attributes: Attributes): void;
  /** Ends the span, at `at` (ms since the epoch) when given; `error` marks it failed. */
  end(options?: { error?: string; at?: number }): void;
  /** This span as a parent for spans started elsewhere. */
  context(): TraceParent | undefined;
}

export interface SpanOptions {
  attributes?: Attributes;
  parent?: TraceParent;
  /** ms since the epoch; now when absent. */
  start?: number;
  /** "client" for a request to a backend; "internal" otherwise. */
  kind?: "client" | "internal";
}

/** The metrics the server records: name, instrument, unit, meaning. */
export const METRICS = {
  /**
   * GenAI semantic conventions: tokens, by `gen_ai.token.type`; here one point per job, with
   * `gen_ai.operation.name` invoke_agent (each request's own are on its chat span).
   */
  "gen_ai.client.token.usage": {
    instrument: "histogram",
    unit: "{token}",
    description: "Tokens a job used, input or output",
  },
  /** GenAI semantic conventions: how long one model request took. */
  "gen_ai.client.operation.duration": {
    instrument: "histogram",
    unit: "s",
    description: "Duration of one model request",
  },
  "ollama_delegate.jobs": {
    instrument: "counter",
    unit: "{job}",
    description: "Jobs that ended, by state (completed, failed, cancelled...)",
  },
  "ollama_delegate.job.duration": {
    instrument: "histogram",
    unit: "s",
    description: "How long a job ran, from its start to its end",
  },
  "ollama_delegate.job.queue_wait": {
    instrument: "histogram",
    unit: "s",
    description: "How long a job waited for its session's earlier turns and a slot",
  },
  "ollama_delegate.verify.runs": {
    instrument: "counter",
    unit: "{run}",
    description: "Verifications the server ran after a turn, by whether they passed",
  },
} as const;

export type MetricName = keyof typeof METRICS;

export interface Telemetry {
  readonly enabled: boolean;
  span(name: string, options?: SpanOptions): Span;
  /** Adds to a counter or records in a histogram of METRICS. */
  metric(name: MetricName, value: number, attributes?: Attributes): void;
  /** Sends what is pending and stops; safe to call more than once. */
  shutdown(): Promise<void>;
}

/** Where and how to export, from the standard variables. */
export interface OtlpConfig {
  /** The OTLP/HTTP URL of each signal; absent: that signal is not exported. */
  traces?: string;
  metrics?: string;
  /** OTEL_EXPORTER_OTLP_HEADERS (and the per-signal ones): `key=value,...`. */
  headers: { traces: Record<string, string>; metrics: Record<string, string> };
  serviceName: string;
  /** OTEL_RESOURCE_ATTRIBUTES: `key=value,...`. */
  resource: Record<string, string>;
  /** OTEL_METRIC_EXPORT_INTERVAL, ms (the specification's default: 60000). */
  metricIntervalMs: number;
}

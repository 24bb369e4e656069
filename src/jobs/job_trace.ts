/**
 * A job as OpenTelemetry sees it (telemetry/telemetry.ts), in the GenAI semantic conventions'
 * words ("Semantic Conventions for GenAI agent and framework spans", "... for generative AI
 * client spans"): one `invoke_agent` span per job, under the trace of the MCP request that
 * started it when that request sent one; in it a `chat` span per model response and an
 * `execute_tool` span per tool call, from what the engine reports to the job (the same for
 * both engines: the turn's sink), and a span per verification the server runs. Every span
 * carries `gen_ai.conversation.id`, the session's id, which threads a session's turns.
 * The job's end adds to the metrics (telemetry.ts METRICS).
 *
 * A model response's span runs from when the engine was last heard from (the turn's start, the
 * previous response, the last tool's end) to when the response was reported; a tool call's from
 * its report to the next response (or, for a command, its measured duration). That is what the
 * job layer sees of both engines, Claude Code's stream and the native loop alike.
 */
import type { CheckResult, TurnSink } from "../engines/types.ts";
import type { Span, Telemetry, TraceParent } from "../telemetry/telemetry.ts";
import type { JobRecord } from "./record.ts";

/** Where a job's requests went, for the spans' `server.*` attributes. */
export interface TraceTarget {
  url?: string;
  /** The API spoken: the backend's kind (ollama, openai, anthropic). */
  kind?: string;
}

function serverOf(url: string | undefined): Record<string, string | number | undefined> {
  if (!url) return {};
  try {
    const u = new URL(url);
    const port = u.port !== "" ? Number(u.port) : u.protocol === "https:" ? 443 : 80;
    return { "server.address": u.hostname, "server.port": port };
  } catch {
    return {};
  }
}

/** One running job's spans. */
export class JobTrace {
  readonly #job: Span;
  readonly #common: Record<string, string | number | undefined>;
  /** The response whose span is open, by the id the engine gives it. */
  #chat: { id: string; span: Span; start: number; reported: number } | undefined;
  #tools: Array<{ name: string; span: Span }> = [];
  /** When the engine was last heard from: a new response's request began no earlier. */
  #mark = Date.now();

  constructor(
    private readonly telemetry: Telemetry,
    record: JobRecord,
    parent: TraceParent | undefined,
    private readonly target: TraceTarget,
  ) {
    this.#common = {
      "gen_ai.conversation.id": record.sessionId,
      "gen_ai.provider.name": target.kind,
      "gen_ai.request.model": record.model,
    };
    const agent = record.agent ?? `ollama-delegate ${record.engine}`;
    this.#job = telemetry.span(`invoke_agent ${agent}`, {
      ...(parent ? { parent } : {}),
      ...(record.startedAt !== undefined ? { start: record.startedAt } : {}),
      attributes: {
        ...this.#common,
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": agent,
        "gen_ai.agent.id": record.id,
        "ollama_delegate.engine": record.engine,
        "ollama_delegate.backend": record.backend ?? "ollama",
        "ollama_delegate.turn": record.turn,
        "ollama_delegate.kind": record.kind,
        ...serverOf(target.url),
      },
    });
  }

  /** The turn's sink, with its reports made spans as well. */
  sink(inner: TurnSink): TurnSink {
    return {
      ...inner,
      response: (tokens) => {
        inner.response?.(tokens);
        const r = tokens.reported;
        const input = Math.max(0, r.inputTokens + r.cacheReadTokens + r.cacheCreationTokens);
        const output = Math.max(0, r.outputTokens);
        if (this.#chat?.id !== tokens.id) {
          this.#closeChat();
          this.#closeTools();
          this.#chat = {
            id: tokens.id,
            span: this.telemetry.span(`chat ${this.#common["gen_ai.request.model"]}`, {
              kind: "client",
              start: this.#mark,
              ...this.#parent(),
              attributes: {
                ...this.#common,
                "gen_ai.operation.name": "chat",
                ...serverOf(this.target.url),
              },
            }),
            start: this.#mark,
            reported: Date.now(),
          };
        }
        this.#chat.reported = Date.now();
        // As the backend reported them; what it has not said yet is left out, not guessed
        // (Claude Code's stream carries a message's usage as of its start: output 0).
        this.#chat.span.set({
          ...(input > 0 ? { "gen_ai.usage.input_tokens": input } : {}),
          ...(output > 0 ? { "gen_ai.usage.output_tokens": output } : {}),
        });
        this.#mark = Date.now();
      },
      activity: (activity) => {
        inner.activity(activity);
        if (activity.kind !== "tool") return;
        this.#closeChat();
        this.#tools.push({
          name: activity.name,
          span: this.telemetry.span(`execute_tool ${activity.name}`, {
            ...this.#parent(),
            attributes: {
              "gen_ai.conversation.id": this.#common["gen_ai.conversation.id"],
              "gen_ai.operation.name": "execute_tool",
              "gen_ai.tool.name": activity.name,
              "gen_ai.tool.type": "function",
            },
          }),
        });
        this.#mark = Date.now();
      },
      commandRun: (run) => {
        inner.commandRun?.(run);
        // A command ends its tool's span when it is reported (the oldest Bash one open).
        const at = this.#tools.findIndex((t) => t.name === "Bash");
        if (at >= 0) {
          const { span } = this.#tools.splice(at, 1)[0]!;
          span.set({ "ollama_delegate.command.exit_code": run.exitCode ?? -1 });
          span.end(run.exitCode === 0 ? {} : { error: run.refused ? "refused" : "exit_code" });
        }
        this.#mark = Date.now();
      },
    };
  }

  /** Runs a verification as a span of its own. */
  async verify(round: number, run: () => Promise<CheckResult>): Promise<CheckResult> {
    this.#closeChat();
    this.#closeTools();
    const span = this.telemetry.span("verify", {
      ...this.#parent(),
      attributes: {
        "gen_ai.conversation.id": this.#common["gen_ai.conversation.id"],
        "ollama_delegate.verify.round": round,
      },
    });
    const check = await run();
    const last = check.runs.at(-1);
    span.set({
      "ollama_delegate.verify.passed": check.passed,
      "ollama_delegate.verify.commands": check.runs.length,
      ...(last ? { "ollama_delegate.verify.exit_code": last.exitCode ?? -1 } : {}),
    });
    span.end(check.passed ? {} : { error: "verify_failed" });
    this.telemetry.metric("ollama_delegate.verify.runs", 1, {
      "ollama_delegate.verify.passed": check.passed,
    });
    this.#mark = Date.now();
    return check;
  }

  /** Ends the job's span with how it ended. */
  end(record: JobRecord): void {
    this.#closeChat();
    this.#closeTools();
    this.#job.set({
      "ollama_delegate.state": record.state,
      "gen_ai.response.model": record.model,
      ...(record.usage
        ? {
          "gen_ai.usage.input_tokens": record.usage.inputTokens + record.usage.cacheReadTokens +
            record.usage.cacheCreationTokens,
          "gen_ai.usage.output_tokens": record.usage.outputTokens,
        }
        : {}),
      ...(record.verification
        ? { "ollama_delegate.verify.verdict": record.verification.verdict }
        : {}),
    });
    this.#job.end({
      ...(record.endedAt !== undefined ? { at: record.endedAt } : {}),
      ...(record.state === "completed" ? {} : { error: record.state }),
    });
  }

  #parent(): { parent?: TraceParent } {
    const parent = this.#job.context();
    return parent ? { parent } : {};
  }

  #closeChat(): void {
    const chat = this.#chat;
    if (!chat) return;
    this.#chat = undefined;
    chat.span.end({ at: chat.reported });
    const attributes = {
      ...this.#common,
      "gen_ai.operation.name": "chat",
      ...serverOf(this.target.url),
    };
    this.telemetry.metric(
      "gen_ai.client.operation.duration",
      Math.max(0, chat.reported - chat.start) / 1000,
      attributes,
    );
  }

  #closeTools(): void {
    for (const { span } of this.#tools) span.end();
    this.#tools = [];
  }
}

/**
 * Adds a job's end to the metrics: the job by its state, how long it ran and waited.
 */
export function recordJobEnd(telemetry: Telemetry, record: JobRecord): void {
  if (!telemetry.enabled) return;
  const attributes = {
    "ollama_delegate.state": record.state,
    "ollama_delegate.engine": record.engine,
    "ollama_delegate.backend": record.backend ?? "ollama",
    "gen_ai.request.model": record.model,
  };
  telemetry.metric("ollama_delegate.jobs", 1, attributes);
  // A job's tokens as its engine totalled them (Claude Code's stream says a message's output
  // only in the turn's total): one point each, never counted twice.
  if (record.usage) {
    const u = record.usage;
    const tokens = { ...attributes, "gen_ai.operation.name": "invoke_agent" };
    telemetry.metric(
      "gen_ai.client.token.usage",
      u.inputTokens + u.cacheReadTokens + u.cacheCreationTokens,
      { ...tokens, "gen_ai.token.type": "input" },
    );
    telemetry.metric("gen_ai.client.token.usage", u.outputTokens, {
      ...tokens,
      "gen_ai.token.type": "output",
    });
  }
  const ended = record.endedAt ?? Date.now();
  if (record.startedAt !== undefined) {
    telemetry.metric("ollama_delegate.job.duration", (ended - record.startedAt) / 1000, attributes);
    telemetry.metric(
      "ollama_delegate.job.queue_wait",
      Math.max(0, record.startedAt - record.createdAt) / 1000,
      attributes,
    );
  }
}

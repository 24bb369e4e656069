/**
 * Asking the person at the orchestrating client for a permission a delegate was not given
 * (issue 31, item 3), through MCP elicitation (2025-11-25 "Elicitation": a form request from
 * the server, `elicitation/create`, answered accept with the form's content, decline or
 * cancel). The job layer decides what may be asked (jobs/permission_asks.ts); this module only
 * asks, one question at a time, and turns every outcome into an answer: a timeout, an error or
 * a dismissed question is a deny.
 *
 * When nobody can be asked, nothing is: without `permissionAskSeconds`, with a client that
 * declares no form elicitation, and in Claude Code's print mode. Claude Code 2.1.332 declares
 * `elicitation: { form, url }` in print mode too, but answers every form request with `cancel`
 * within milliseconds, showing nothing (measured with the real CLI; docs/claude_code.md): its
 * servers see `CLAUDE_CODE_ENTRYPOINT=sdk-cli` there (`cli` in the terminal UI).
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { ElicitResultSchema } from "@modelcontextprotocol/sdk/types.js";
import type {
  AskContext,
  AskOutcome,
  PermissionAsker,
  PersonAnswer,
} from "../jobs/permission_asks.ts";
import { escapeLine } from "../platform/plain_text.ts";

/** The most of a command or path the person is shown; the rest is said to be cut. */
const DETAIL_SHOWN = 2000;

/** The request timeout the SDK reports (ErrorCode.RequestTimeout). */
const REQUEST_TIMEOUT = -32001;

export interface PromptOptions {
  /** How long the person has to answer; 0 = never ask. */
  seconds: number;
  /** The server's environment: Claude Code's entry point is said there. */
  env: Record<string, string | undefined>;
  /** Whether a 2026-07-28 client declared form elicitation on its requests. */
  elicits2026(): boolean;
  log(line: string): void;
}

/** What the tool would do, in words for the question. */
function action(tool: string): string {
  switch (tool) {
    case "Bash":
      return "run this command";
    case "Edit":
    case "Write":
    case "MultiEdit":
    case "NotebookEdit":
      return "change this file";
    case "Read":
    case "Glob":
    case "Grep":
      return "read here";
    default:
      return `use ${escapeLine(tool)} with`;
  }
}

/** The question as the person reads it: the job, the exact command or path, where, and why. */
export function questionText(q: AskContext): string {
  const detail = escapeLine(q.detail.trim());
  const shown = detail.length > DETAIL_SHOWN
    ? `${detail.slice(0, DETAIL_SHOWN)}… (${detail.length - DETAIL_SHOWN} more characters)`
    : detail;
  const who = [escapeLine(q.model), ...(q.agent ? [`agent ${escapeLine(q.agent)}`] : [])];
  return `ollama-delegate: delegate job ${q.jobId.slice(0, 8)} (${who.join(", ")}) asks to ` +
    `${action(q.tool)}:\n\n${shown}\n\nin ${escapeLine(q.cwd)}\n` +
    `It was not given this permission (${escapeLine(q.reason)}). Allow it?`;
}

/** The form: one choice among the three answers. */
export function questionSchema(tool: string) {
  return {
    type: "object" as const,
    properties: {
      decision: {
        type: "string" as const,
        title: "Your answer",
        oneOf: [
          { const: "once", title: "Allow once" },
          { const: "job", title: `Allow ${escapeLine(tool)} for the rest of this job` },
          { const: "deny", title: "Deny" },
        ],
      },
    },
    required: ["decision"],
  };
}

/** Asks through MCP elicitation on `server`'s connection, one question at a time. */
export class ElicitationAsker implements PermissionAsker {
  #turn: Promise<unknown> = Promise.resolve();

  constructor(private readonly server: Server, private readonly options: PromptOptions) {}

  get seconds(): number {
    return this.options.seconds;
  }

  canAsk(): boolean {
    if (this.options.seconds <= 0) return false;
    if (this.options.env.CLAUDE_CODE_ENTRYPOINT === "sdk-cli") return false;
    // 2025-11-25: `elicitation: {}` means form, as `{ form: {} }` does.
    const elicitation = this.server.getClientCapabilities()?.elicitation;
    if (elicitation && (elicitation.form !== undefined || elicitation.url === undefined)) {
      return true;
    }
    return this.options.elicits2026();
  }

  ask(question: AskContext, signal?: AbortSignal): Promise<AskOutcome> {
    // One at a time: a person answers one form, and each question's time starts when it is put.
    const next = this.#turn.then(() => this.#ask(question, signal));
    this.#turn = next.catch(() => {});
    return next;
  }

  async #ask(q: AskContext, signal?: AbortSignal): Promise<AskOutcome> {
    if (signal?.aborted) return { answer: "deny", by: "stopped" };
    if (!this.canAsk()) return { answer: "deny", by: "unavailable" };
    try {
      // A plain request, not Server.elicitInput: a 2026-07-28 client declares its capabilities
      // on each request, which the SDK does not see.
      const result = await this.server.request(
        {
          method: "elicitation/create",
          params: {
            mode: "form",
            message: questionText(q),
            requestedSchema: questionSchema(q.tool),
          },
        },
        ElicitResultSchema,
        // A job that stops withdraws its question: the SDK tells the client it is cancelled.
        { timeout: this.options.seconds * 1000, ...(signal ? { signal } : {}) },
      );
      if (result.action === "decline") return { answer: "deny", by: "declined" };
      if (result.action === "cancel") return { answer: "deny", by: "cancelled" };
      const chosen = result.content?.decision;
      if (chosen === "once" || chosen === "job" || chosen === "deny") {
        return { answer: chosen as PersonAnswer, by: "person" };
      }
      return { answer: "deny", by: "declined" };
    } catch (e) {
      // The SDK reports a withdrawn request as a timeout too.
      if (signal?.aborted) return { answer: "deny", by: "stopped" };
      const code = (e as { code?: unknown }).code;
      if (code === REQUEST_TIMEOUT) return { answer: "deny", by: "timeout" };
      this.options.log(
        `cannot ask about job ${q.jobId} (${escapeLine(String((e as Error).message ?? e))}); ` +
          "its call is denied",
      );
      return { answer: "deny", by: "unavailable" };
    }
  }
}

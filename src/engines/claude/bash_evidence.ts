/**
 * The commands a Claude Code delegate ran, read from its stream as Claude Code reports them
 * (not as the model words them): each Bash call is paired with its result by the call's id,
 * and the exit code comes from Claude Code's own `Exit code N` line on a failed result, never
 * from the command's output (a command printing `Exit code 0` cannot pass for a success, nor
 * one printing `Exit code 1` for a failure: only a result Claude Code marks as an error is
 * read for one). Calls Claude Code did not run (denied by a permission rule or its sandbox)
 * are left out: they are the job's `denied:` line.
 *
 * What Claude Code does not report cannot be seen here: a failure masked by a later command
 * (`npm test; echo done` exits 0) is not listed, unlike on the native engine, whose shell the
 * server runs itself.
 */
import type { CommandRun, TurnSink } from "../types.ts";
import type { Json, StreamEvent } from "./stream.ts";

/** Calls waiting for their result at once; past it, the oldest is given up as unfinished. */
const MAX_PENDING = 1000;
/** A command's text is kept up to here (the reply shows 60 characters of it). */
const COMMAND_CHARS = 2000;

interface Pending {
  command: string;
  startedMs: number;
  background: boolean;
}

const EXIT_LINE = /^Exit code (\d+)(?:\r?\n|$)/;

/** Feeds on a turn's stream events and reports each Bash command once its result is in. */
export class BashEvidence {
  readonly #pending = new Map<string, Pending>();
  readonly #denied = new Set<string>();

  constructor(
    private readonly sink: Pick<TurnSink, "commandRun">,
    private readonly now: () => number = () => performance.now(),
  ) {}

  see(event: StreamEvent): void {
    if (event.type === "assistant") {
      for (const block of event.blocks) this.#call(block);
    } else if (event.type === "notice" && event.deniedToolUse !== undefined) {
      this.#deny(event.deniedToolUse);
    } else if (event.type === "user") {
      for (const id of event.notRun) this.#deny(id);
      for (const block of event.blocks) this.#result(block);
    }
  }

  /** At the turn's end: the commands still waiting never finished (the turn was ended). */
  finish(): void {
    for (const [id, call] of this.#pending) this.#report(id, call, null);
  }

  #call(block: Json): void {
    if (block.type !== "tool_use" || block.name !== "Bash" || typeof block.id !== "string") {
      return;
    }
    const input =
      (typeof block.input === "object" && block.input !== null ? block.input : {}) as Json;
    const command = typeof input.command === "string" ? input.command : "";
    if (this.#pending.size >= MAX_PENDING) {
      const [oldest, call] = this.#pending.entries().next().value!;
      this.#report(oldest, call, null);
    }
    this.#pending.set(block.id, {
      command: command.slice(0, COMMAND_CHARS),
      startedMs: this.now(),
      background: input.run_in_background === true,
    });
  }

  #deny(id: string): void {
    // A denied call gets a result too; it must not count as a command run.
    if (this.#pending.delete(id) || this.#denied.size < MAX_PENDING) this.#denied.add(id);
  }

  #result(block: Json): void {
    if (block.type !== "tool_result" || typeof block.tool_use_id !== "string") return;
    const id = block.tool_use_id;
    const call = this.#pending.get(id);
    if (!call || this.#denied.has(id)) return;
    if (block.is_error !== true) {
      // A command sent to the background has not finished: its exit code is not known.
      this.#report(id, call, call.background ? null : 0);
      return;
    }
    const match = EXIT_LINE.exec(resultText(block.content));
    this.#report(id, call, match ? Number(match[1]) : null);
  }

  #report(id: string, call: Pending, exitCode: number | null): void {
    this.#pending.delete(id);
    const run: CommandRun = {
      command: call.command,
      exitCode,
      durationMs: Math.max(0, Math.round(this.now() - call.startedMs)),
    };
    this.sink.commandRun?.(run);
  }
}

/** The text of a tool result's content: a string, or its text blocks' first one. */
function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const first = content.find((c) => typeof c === "object" && c !== null && c.type === "text");
  return typeof first?.text === "string" ? first.text : "";
}

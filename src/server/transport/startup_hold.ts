/**
 * The client's messages that wait while the server registers its tools. `serve` answers
 * `initialize` as soon as the MCP SDK and the transports have loaded, and loads the settings,
 * the tools and their input schemas after (issue 34, item 3: start-up within 1.25 times a bare
 * SDK server). What needs the tools (tools/list, tools/call, every 2026 request) waits here
 * until they are registered, then goes on in the order it came.
 */
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/**
 * Requests answered without the tools: the handshake, a liveness check, and the 2026 revision's
 * discovery (answered from constants, server/transport/discover.ts).
 */
const WITHOUT_TOOLS = new Set(["initialize", "ping", "server/discover"]);

/** Holds messages until release(); the first ones that need no tools pass. */
export class StartupHold {
  #held: JSONRPCMessage[] | undefined = [];

  /** Whether the tools are registered and nothing waits any more. */
  get released(): boolean {
    return this.#held === undefined;
  }

  /** Whether messages wait for the tools. */
  get waiting(): boolean {
    return (this.#held?.length ?? 0) > 0;
  }

  /**
   * Whether `message` must wait (it is then kept). Once one waits, every later one does too,
   * so that the order the client sent them in is the order they are handled in.
   */
  keeps(message: JSONRPCMessage): boolean {
    if (!this.#held) return false;
    const m = message as { method?: unknown; id?: unknown };
    const passes = "id" in m && typeof m.method === "string" && WITHOUT_TOOLS.has(m.method);
    if (passes && this.#held.length === 0) return false;
    this.#held.push(message);
    return true;
  }

  /** Ends the hold; returns what waited, in order. */
  release(): JSONRPCMessage[] {
    const held = this.#held ?? [];
    this.#held = undefined;
    return held;
  }
}

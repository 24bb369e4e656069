/**
 * Claude Code starts a stdio MCP server twice: a throwaway process that is asked only
 * `server/discover`, under a short bound, then the session's own. A server that answers the
 * probe late is spoken to in the 2025 revision for that whole session, and delegate_run no
 * longer runs in the background there. Loading the server (the MCP SDK, zod, the settings)
 * takes about 300 ms on an idle machine and seconds on a busy one, so `serve` reads stdin from
 * its first moment: a first line that is a `server/discover` request is answered from here, at
 * once, and every other byte waits for the transport, which gets them in order.
 */
import { discoverResult } from "./discover.ts";

/** Past this many bytes without a newline, the first line is left to the transport. */
const FIRST_LINE_LIMIT = 64 * 1024;

interface Input {
  on(event: "data", listener: (chunk: Uint8Array) => void): unknown;
  on(event: "end", listener: () => void): unknown;
  off(event: "data", listener: (chunk: Uint8Array) => void): unknown;
  off(event: "end", listener: () => void): unknown;
  pause(): unknown;
}

interface Output {
  write(text: string): boolean;
}

/** What was read before the transport took over. */
export interface EarlyInput {
  /** Bytes read and not answered here, for the transport to read first. */
  pending: Uint8Array;
  /** The client closed stdin before the transport took over. */
  ended: boolean;
  /** Whether the first line was a server/discover answered here. */
  answered: boolean;
}

/** Reads stdin until handOver(), answering a first-line server/discover. */
export class EarlyDiscover {
  #chunks: Uint8Array[] = [];
  #size = 0;
  #ended = false;
  #looked = false;
  #answered = false;

  constructor(private readonly input: Input, private readonly output: Output) {
    input.on("data", this.#onData);
    input.on("end", this.#onEnd);
  }

  #onEnd = () => {
    this.#ended = true;
  };

  #onData = (chunk: Uint8Array) => {
    this.#chunks.push(chunk);
    this.#size += chunk.length;
    if (this.#looked) return;
    const bytes = this.#joined();
    const newline = bytes.indexOf(0x0a);
    if (newline === -1 && bytes.length <= FIRST_LINE_LIMIT) return;
    this.#looked = true;
    // The rest waits in the stream (its own backpressure) until the transport reads it.
    this.input.pause();
    if (newline === -1 || newline > FIRST_LINE_LIMIT) return;
    const id = discoverId(bytes.subarray(0, newline));
    if (id === undefined) return;
    this.output.write(JSON.stringify({ jsonrpc: "2.0", id, result: discoverResult() }) + "\n");
    this.#answered = true;
    const rest = bytes.slice(newline + 1);
    this.#chunks = [rest];
    this.#size = rest.length;
  };

  #joined(): Uint8Array {
    if (this.#chunks.length === 1) return this.#chunks[0]!;
    const all = new Uint8Array(this.#size);
    let at = 0;
    for (const c of this.#chunks) {
      all.set(c, at);
      at += c.length;
    }
    this.#chunks = [all];
    return all;
  }

  /** Stops reading (stdin stays paused for the transport) and gives what was read. */
  handOver(): EarlyInput {
    this.input.off("data", this.#onData);
    this.input.off("end", this.#onEnd);
    this.input.pause();
    return { pending: this.#joined(), ended: this.#ended, answered: this.#answered };
  }
}

/** The id of a JSON-RPC `server/discover` request, or undefined for any other line. */
function discoverId(line: Uint8Array): string | number | undefined {
  let message: unknown;
  try {
    message = JSON.parse(new TextDecoder().decode(line));
  } catch {
    return undefined;
  }
  if (typeof message !== "object" || message === null || Array.isArray(message)) return undefined;
  const m = message as Record<string, unknown>;
  if (m.jsonrpc !== "2.0" || m.method !== "server/discover") return undefined;
  return typeof m.id === "string" || typeof m.id === "number" ? m.id : undefined;
}

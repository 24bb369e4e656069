/**
 * The MCP stdio transport (newline-delimited JSON-RPC on stdin/stdout) with a per-message
 * byte cap that refuses one message and keeps the connection. The SDK's own
 * StdioServerTransport closes the whole connection when its read buffer passes 10 MiB; the
 * server took that for the client leaving and stopped every running delegate, so one long
 * prompt (or 2 MB of control characters, which JSON escapes to 6 bytes each) ended the server.
 *
 * Here a line over the cap is skipped as it streams in (never held whole), answered with a
 * JSON-RPC error carrying the request's id when the line names one (JSON-RPC 2.0, section 5:
 * null when it cannot be known), and reading goes on with the next line. A line that is not
 * JSON or not a JSON-RPC message is answered the same way instead of being dropped silently.
 */
import process from "node:process";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import { concatBytes } from "../../platform/bytes.ts";
import { MAX_PROMPT_BYTES } from "../../intake/prompt_limit.ts";

const MIB = 1024 * 1024;

/**
 * The largest message we read. JSON may spend 6 bytes on one byte of a prompt (`\u0001`), so
 * a prompt at its documented limit (MAX_PROMPT_BYTES of UTF-8) can take six times that on the
 * wire; 16 MiB more covers every other argument at its own limit (inputs.ts), escaped the
 * same way (files 200 x 4096, add_dirs 50 x 4096, tool rules 200 x 500, append_system_prompt
 * 100,000, paths 4096 and ids 256 characters: about 7.4 MB). Memory: one message at a time is
 * buffered, so reading costs at most this much plus its decoded text and parsed value; a
 * longer line is skipped as it arrives, without being kept.
 */
export const MAX_MESSAGE_BYTES = 6 * MAX_PROMPT_BYTES + 16 * MIB;

/** JSON-RPC 2.0 error codes (section 5.1). */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;

type RequestId = string | number;

/**
 * Follows a JSON text byte by byte without keeping it, to find the top-level "id" and
 * whether there is a top-level "method". Key and id bytes are kept, bounded.
 */
export class TopLevelScanner {
  #depth = 0;
  #inString = false;
  #escaped = false;
  #expectKey = false;
  #key: number[] | undefined;
  #lastKey: string | undefined;
  #capture: number[] | undefined;
  id: RequestId | undefined;
  hasMethod = false;
  bytes = 0;

  feed(chunk: Uint8Array): void {
    this.bytes += chunk.length;
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i]!;
      if (this.#capture && !this.#inString && this.#depth === 1 && (b === 0x2c || b === 0x7d)) {
        this.#finishCapture();
      } else if (this.#capture && this.#capture.length < 512) {
        this.#capture.push(b);
      }
      if (this.#inString) {
        if (this.#escaped) this.#escaped = false;
        else if (b === 0x5c) this.#escaped = true;
        else if (b === 0x22) {
          this.#inString = false;
          if (this.#key) {
            this.#lastKey = new TextDecoder().decode(new Uint8Array(this.#key));
            this.#key = undefined;
          }
          continue;
        }
        if (this.#key && this.#key.length < 16) this.#key.push(b);
        continue;
      }
      switch (b) {
        case 0x22: // "
          this.#inString = true;
          if (this.#depth === 1 && this.#expectKey) {
            this.#key = [];
            this.#expectKey = false;
          }
          break;
        case 0x7b: // {
          this.#depth++;
          if (this.#depth === 1) this.#expectKey = true;
          break;
        case 0x5b: // [
          this.#depth++;
          break;
        case 0x7d: // }
        case 0x5d: // ]
          this.#depth--;
          break;
        case 0x2c: // ,
          if (this.#depth === 1) this.#expectKey = true;
          break;
        case 0x3a: // :
          if (this.#depth === 1 && this.#lastKey !== undefined) {
            if (this.#lastKey === "id") this.#capture = [];
            if (this.#lastKey === "method") this.hasMethod = true;
            this.#lastKey = undefined;
          }
          break;
      }
    }
  }

  #finishCapture(): void {
    const text = new TextDecoder().decode(new Uint8Array(this.#capture!)).trim();
    this.#capture = undefined;
    try {
      const value: unknown = JSON.parse(text);
      if (typeof value === "string" || (typeof value === "number" && Number.isInteger(value))) {
        this.id = value;
      }
    } catch {
      // Not a usable id: the reply goes out with id null.
    }
  }
}

export interface CappedStdioOptions {
  maxMessageBytes?: number;
  /** One line on stderr per refused message. */
  log?: (line: string) => void;
  /** Bytes read from `stdin` before the transport existed (early_discover.ts), read first. */
  pending?: Uint8Array;
}

interface Readable {
  on(event: "data", listener: (chunk: Uint8Array) => void): unknown;
  on(event: "error", listener: (error: Error) => void): unknown;
  off(event: "data", listener: (chunk: Uint8Array) => void): unknown;
  off(event: "error", listener: (error: Error) => void): unknown;
  pause(): unknown;
  /** Needed when the stream was paused on purpose: a new `data` listener does not resume it. */
  resume?(): unknown;
  listenerCount(event: string): number;
}

interface Writable {
  write(text: string): boolean;
  once(event: "drain", listener: () => void): unknown;
}

/** A stdio server transport whose messages are capped one by one. */
export class CappedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  readonly maxMessageBytes: number;
  #log: (line: string) => void;
  #chunks: Uint8Array[] = [];
  #size = 0;
  #skipping: TopLevelScanner | undefined;
  #started = false;
  #closed = false;
  #pending: Uint8Array | undefined;

  constructor(
    private readonly stdin: Readable = process.stdin,
    private readonly stdout: Writable = process.stdout,
    options: CappedStdioOptions = {},
  ) {
    this.maxMessageBytes = options.maxMessageBytes ?? MAX_MESSAGE_BYTES;
    this.#log = options.log ?? (() => {});
    this.#pending = options.pending;
  }

  start(): Promise<void> {
    if (this.#started) throw new Error("CappedStdioTransport already started");
    this.#started = true;
    this.stdin.on("data", this.#onData);
    this.stdin.on("error", this.#onError);
    const pending = this.#pending;
    this.#pending = undefined;
    // Before the stream flows again, so that the messages keep their order.
    if (pending && pending.length > 0) this.#onData(pending);
    this.stdin.resume?.();
    return Promise.resolve();
  }

  #onError = (error: Error) => this.onerror?.(error);

  #onData = (data: Uint8Array) => {
    try {
      this.#take(data);
    } catch (e) {
      // A bug here must cost one message, never the connection.
      this.#reset();
      this.onerror?.(e as Error);
    }
  };

  #take(data: Uint8Array): void {
    let start = 0;
    while (start < data.length) {
      const newline = data.indexOf(0x0a, start);
      const end = newline === -1 ? data.length : newline;
      const piece = data.subarray(start, end);
      if (this.#skipping) {
        this.#skipping.feed(piece);
      } else if (this.#size + piece.length > this.maxMessageBytes) {
        // Over the cap: from here on the line is only scanned for its id, never kept.
        const scanner = new TopLevelScanner();
        for (const c of this.#chunks) scanner.feed(c);
        scanner.feed(piece);
        this.#chunks = [];
        this.#size = 0;
        this.#skipping = scanner;
      } else if (piece.length > 0) {
        this.#chunks.push(piece);
        this.#size += piece.length;
      }
      if (newline === -1) return;
      start = newline + 1;
      const skipped = this.#skipping;
      if (skipped) {
        this.#skipping = undefined;
        this.#refuseTooLong(skipped);
      } else {
        const line = concatBytes(this.#chunks, this.#size);
        this.#reset();
        this.#dispatch(line);
      }
    }
  }

  #reset(): void {
    this.#chunks = [];
    this.#size = 0;
    this.#skipping = undefined;
  }

  #dispatch(bytes: Uint8Array): void {
    let text = new TextDecoder().decode(bytes);
    if (text.endsWith("\r")) text = text.slice(0, -1);
    if (text.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      this.#log(`Refused an MCP message that is not JSON (${bytes.length} bytes): ${e}`);
      this.#replyError(null, PARSE_ERROR, "Parse error: the message is not valid JSON");
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) {
      const o = typeof value === "object" && value !== null ? value as Record<string, unknown> : {};
      const id = typeof o.id === "string" || typeof o.id === "number" ? o.id : null;
      this.#log(`Refused an MCP message that is not JSON-RPC 2.0 (id ${JSON.stringify(id)})`);
      // Only requests get an answer: a bad response or notification has nobody waiting.
      if (typeof o.method === "string" || !("id" in o)) {
        this.#replyError(
          id,
          INVALID_REQUEST,
          "Invalid Request: the message is not a JSON-RPC 2.0 request, notification or response",
        );
      }
      return;
    }
    this.onmessage?.(parsed.data);
  }

  #refuseTooLong(scanner: TopLevelScanner): void {
    const id = scanner.id ?? null;
    this.#log(
      `Refused an MCP message of ${scanner.bytes} bytes, over the ${this.maxMessageBytes}-byte ` +
        `limit (id ${JSON.stringify(id)}); the connection stays open`,
    );
    // A notification has no id and nobody waiting for an answer.
    if (id === null && scanner.hasMethod) return;
    this.#replyError(
      id,
      INVALID_REQUEST,
      `Request too large: ${scanner.bytes} bytes on the wire, over the server's limit of ` +
        `${this.maxMessageBytes} bytes${
          this.maxMessageBytes >= MIB ? ` (${Math.floor(this.maxMessageBytes / MIB)} MiB)` : ""
        }. ` +
        `A prompt may hold ${MAX_PROMPT_BYTES} bytes of UTF-8; split the work into smaller ` +
        `tasks or shorten the arguments`,
    );
  }

  #replyError(id: RequestId | null, code: number, message: string): void {
    this.#write({ jsonrpc: "2.0", id, error: { code, message } }).catch((e) =>
      this.onerror?.(e as Error)
    );
  }

  #write(message: unknown): Promise<void> {
    if (this.#closed) return Promise.resolve();
    return new Promise((resolve) => {
      if (this.stdout.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.stdout.once("drain", resolve);
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.#write(message);
  }

  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    this.stdin.off("data", this.#onData);
    this.stdin.off("error", this.#onError);
    if (this.stdin.listenerCount("data") === 0) this.stdin.pause();
    this.#reset();
    this.onclose?.();
    return Promise.resolve();
  }
}

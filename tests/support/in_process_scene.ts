/**
 * The middle tier's scene: our real server, built by the same wiring `serve` uses
 * (`wireServer` in src/server/wire.ts: settings, state dir, tools, the real JobManager and
 * engines, the 2026-07-28 layer), in this process, spoken to by the MCP SDK's own Client over
 * its InMemoryTransport. Delegates still run for real: the native engine's commands in real
 * bubblewrap, against the Ollama emulator on loopback.
 *
 *   await using scene = await startInProcessScene({ emulator: { ... }, env: { ... } });
 *
 * It has the shape of startScene's (tests/support/scene.ts), without what only a process has
 * (a pid, an exit status, stdio framing, signals): those tests stay in tests/e2e/. Every
 * message is copied through JSON both ways, as it would cross a pipe.
 *
 * A server here reads nothing of this process's environment, cwd or HOME: it gets the scene's,
 * as a server process would. Servers of one scene share this process's pid, so tests where
 * two servers must be told apart by their owner (admission, recovery, a killed server) stay
 * end to end.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type {
  Transport,
  TransportSendOptions,
} from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  type ElicitRequest,
  ElicitRequestSchema,
  type ElicitResult,
  type JSONRPCMessage,
  type MessageExtraInfo,
} from "@modelcontextprotocol/sdk/types.js";
import { serverShell } from "../../src/server/shell.ts";
import { type WiredServer, wireServer } from "../../src/server/wire.ts";
import { callTool, prepareServer, type SceneServer, type ServerOptions } from "./harness.ts";
import { type SceneOf, sceneOf, type SceneOptions } from "./scene.ts";

export type InProcessServer = SceneServer;
export type InProcessScene = SceneOf<InProcessServer>;

/** What only a server in this process can be given: the wiring's own timing. */
export interface InProcessOptions {
  /**
   * How often blocking calls send progress (the server's own is 5 s): a test that wants to see
   * several need not run a job for 15 s.
   */
  progressMs?: number;
  /**
   * The client's person, for MCP elicitation: the client then declares form elicitation and
   * answers each `elicitation/create` with what this gives (or never, while it waits);
   * `withdrawn` aborts when the server cancels the request.
   */
  elicit?: (
    params: ElicitRequest["params"],
    withdrawn: AbortSignal,
  ) => ElicitResult | Promise<ElicitResult>;
}

/** startScene's options and shape, with every server in this process. */
export function startInProcessScene(
  options: SceneOptions & InProcessOptions = {},
): Promise<InProcessScene> {
  const { progressMs, elicit, ...rest } = options;
  return sceneOf(
    rest,
    (o) =>
      startInProcessServer({
        ...o,
        ...(progressMs ? { progressMs } : {}),
        ...(elicit ? { elicit } : {}),
      }),
  );
}

/** Our server in this process, and an SDK client connected to it. */
export async function startInProcessServer(
  options: ServerOptions & InProcessOptions = {},
): Promise<InProcessServer> {
  const { home, stateDir, cwd, env } = prepareServer(options);
  let stderr = "";
  const log = (line: string) => void (stderr += `ollama-delegate: ${line}\n`);
  const progress = options.progressMs ? { progressMs: options.progressMs } : {};
  // As `serve` does: connected first (initialize answered), the tools wired after.
  const shell = serverShell(log);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const wiring: { done?: WiredServer } = {};
  let stopped: Promise<void> | undefined;
  const stop = (why: string) =>
    stopped ??= (async () => {
      log(`stopping: ${why}`);
      await wiring.done?.stop(why);
      log("server exiting with code 0");
    })();
  await shell.connect(new OverTheWire(serverSide), () => void stop("MCP transport closed"));
  const wired = wiring.done = wireServer(shell, { env, cwd, home, log, ...progress });
  if (!wired) throw new Error(`the server did not start:\n${stderr}`);
  const elicit = options.elicit;
  const client = new Client(
    { name: "od-test", version: "1.0.0" },
    elicit ? { capabilities: { elicitation: { form: {} } } } : {},
  );
  // Open questions by request id, withdrawn when the server cancels them. Read off the wire:
  // the SDK 1.32.2 client ignores a cancellation of request id 0 (`if (!requestId)`).
  const open = new Map<string | number, AbortController>();
  if (elicit) {
    client.setRequestHandler(
      ElicitRequestSchema,
      (request: ElicitRequest, extra: { requestId: string | number }) => {
        const withdrawn = new AbortController();
        open.set(extra.requestId, withdrawn);
        return elicit(request.params, withdrawn.signal);
      },
    );
  }
  await client.connect(clientSide);
  const onmessage = clientSide.onmessage;
  if (elicit && onmessage) {
    clientSide.onmessage = (message: JSONRPCMessage, extra?: MessageExtraInfo) => {
      const m = message as { method?: string; params?: { requestId?: string | number } };
      const id = m.params?.requestId;
      if (m.method === "notifications/cancelled" && id !== undefined) open.get(id)?.abort();
      onmessage.call(clientSide, message, extra);
    };
  }
  wired.startBackground();
  const close = async () => {
    await stop("client closed the connection");
    await client.close().catch(() => {});
  };
  return {
    client,
    home,
    stateDir,
    cwd,
    stderr: () => stderr,
    call: (name, args, opts) => callTool(client, name, args, opts),
    close,
    [Symbol.asyncDispose]: close,
  };
}

/**
 * The in-memory transport hands over the very objects sent; a pipe carries JSON. Copying each
 * message through JSON keeps what a client sees the same: no undefined fields, no shared
 * objects, no values JSON cannot carry.
 */
class OverTheWire implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  constructor(private readonly inner: Transport) {
    inner.onmessage = (message: JSONRPCMessage) => this.onmessage?.(copy(message));
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error: Error) => this.onerror?.(error);
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.inner.send(copy(message), options);
  }
}

const copy = <T>(message: T): T => JSON.parse(JSON.stringify(message));

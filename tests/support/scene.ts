/**
 * The usual end-to-end set-up in one value: an Ollama emulator and our real server pointed at
 * it, in a private HOME and state dir, all stopped when the scene goes out of scope.
 *
 *   await using scene = await startScene({ emulator: { models: [...] }, env: { ... } });
 *   const reply = await scene.call("delegate_start", { ... });
 *   scene.emulator.messageRequests(); scene.stateDir; scene.home;
 *
 * Other shapes: `emulator: false` for a server alone; `server: false`, then
 * `scene.startServer({ userConfig: ... scene.emulator.url ... })` when the server's options need
 * the emulator or the disk must be prepared first; `await scene.server.close()` then
 * `scene.startServer()` for a restart on the same state dir; `scene.startEmulator()` for a
 * second backend or a decoy.
 *
 * Servers are closed first, in reverse order of start, then the emulators, whatever the test
 * threw. A request to a server that died fails with how it died and its last stderr lines
 * (tests/support/harness.ts).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import {
  type CallOptions,
  type SceneServer,
  type ServerOptions,
  startServer,
  tempDir,
  type TestServer,
  type ToolReply,
} from "./harness.ts";
import {
  type EmulatorOptions,
  type OllamaEmulator,
  startOllamaEmulator,
} from "./emulator/emulator.ts";

export interface SceneOptions extends ServerOptions {
  /**
   * The emulator's options (default: an emulator with the default models). `false` starts
   * none: the server then gets no base URL unless `baseUrl` names one.
   */
  emulator?: EmulatorOptions | false;
  /**
   * `false` starts no server yet, for tests that prepare the emulator or the disk first and
   * then call `scene.startServer()`.
   */
  server?: false;
}

/** A scene whose servers are `S`: processes of their own (Scene) or in this process. */
export interface SceneOf<S extends SceneServer> extends AsyncDisposable {
  /** The emulator (throws when the scene was started with `emulator: false`). */
  readonly emulator: OllamaEmulator;
  /** The first server (throws when the scene was started with `server: false`). */
  readonly server: S;
  /** The first server's MCP client. */
  readonly client: Client;
  /**
   * The HOME, state dir and working directory every server of the scene shares by default
   * (startServer's defaults: a new temporary HOME, the server's own default state dir
   * `<home>/.ollama-mcp/jobs`, `<home>/project`).
   */
  readonly home: string;
  readonly stateDir: string;
  readonly cwd: string;
  /** A tool call to the first server. */
  call(name: string, args?: Record<string, unknown>, opts?: CallOptions): Promise<ToolReply>;
  /** The first server's stderr so far. */
  stderr(): string;
  /**
   * Starts another server, closed with the scene: a restart, or a second server sharing the
   * state dir. It gets the scene's options, home, state dir, cwd and emulator URL; each field
   * of `overrides` replaces the scene's (`env` too, whole), and another `home` brings its own
   * default state dir and cwd. The first one started becomes `scene.server` when the scene was
   * started with `server: false`.
   */
  startServer(overrides?: ServerOptions): Promise<S>;
  /**
   * Starts another emulator (a second backend, a decoy), closed with the scene after its
   * servers. Servers still default to `scene.emulator`'s URL.
   */
  startEmulator(options?: EmulatorOptions): Promise<OllamaEmulator>;
}

/** The usual scene: each server a process of its own, spoken to over stdio. */
export interface Scene extends SceneOf<TestServer> {
  /** The first server's pid. */
  readonly pid: number;
}

/** Starts the emulator (unless `emulator: false`) and the server (unless `server: false`). */
export async function startScene(options: SceneOptions = {}): Promise<Scene> {
  const scene = await sceneOf(options, startServer);
  return Object.defineProperty(scene, "pid", { get: () => scene.server.pid }) as Scene;
}

/**
 * A scene whose servers `launch` starts (tests/support/in_process_scene.ts starts them in this
 * process).
 */
export async function sceneOf<S extends SceneServer>(
  options: SceneOptions,
  launch: (options: ServerOptions) => Promise<S>,
): Promise<SceneOf<S>> {
  const { emulator: emulatorOptions, server: startNow, ...serverOptions } = options;
  // The places are fixed now, so that a test can prepare them before any server starts; the
  // defaults are startServer's own.
  const home = serverOptions.home ?? tempDir("od-home-");
  // The default layout users have: the state dir the server picks by itself under HOME.
  const stateDir = serverOptions.stateDir ?? join(home, ".ollama-mcp", "jobs");
  const cwd = serverOptions.cwd ?? join(home, "project");
  if (serverOptions.cwd === undefined) mkdirSync(cwd, { recursive: true });
  const emulator = emulatorOptions === false
    ? undefined
    : await startOllamaEmulator(emulatorOptions ?? {});
  const servers: S[] = [];
  const extraEmulators: OllamaEmulator[] = [];
  const base: ServerOptions = {
    ...(emulator ? { baseUrl: emulator.url } : {}),
    ...serverOptions,
    home,
    cwd,
  };
  let first: S | undefined;

  const dispose = async () => {
    // Everything is stopped even when one of them fails to; the first failure is reported.
    const failures: unknown[] = [];
    const stop = async (what: { close(): Promise<void> } | undefined) => {
      await what?.close().catch((e) => failures.push(e));
    };
    for (const server of servers.reverse()) await stop(server);
    servers.length = 0;
    for (const extra of extraEmulators.reverse()) await stop(extra);
    extraEmulators.length = 0;
    await stop(emulator);
    if (failures.length > 0) throw failures[0];
  };

  const start = async (overrides: ServerOptions = {}): Promise<S> => {
    const options = { ...base, ...overrides };
    if (overrides.home !== undefined && overrides.home !== home) {
      // Another HOME brings its own default state dir and working directory, as in startServer.
      options.stateDir = overrides.stateDir ?? serverOptions.stateDir;
      options.cwd = overrides.cwd ?? serverOptions.cwd;
    }
    const server = await launch(options);
    servers.push(server);
    first ??= server;
    return server;
  };

  const need = (): S => {
    if (!first) {
      throw new Error(
        "this scene has no server yet (started with server: false): call startServer()",
      );
    }
    return first;
  };

  try {
    if (startNow !== false) await start();
  } catch (e) {
    await dispose();
    throw e;
  }

  return {
    get emulator() {
      if (!emulator) throw new Error("this scene has no emulator (started with emulator: false)");
      return emulator;
    },
    get server() {
      return need();
    },
    get client() {
      return need().client;
    },
    home,
    stateDir,
    cwd,
    call: (name, args, opts) => need().call(name, args, opts),
    stderr: () => need().stderr(),
    startServer: start,
    startEmulator: async (emulatorOptions = {}) => {
      const extra = await startOllamaEmulator(emulatorOptions);
      extraEmulators.push(extra);
      return extra;
    },
    [Symbol.asyncDispose]: dispose,
  };
}

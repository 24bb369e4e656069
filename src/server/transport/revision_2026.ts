/**
 * MCP revision 2026-07-28 next to the 2025-11-25 handshake the SDK speaks, on one connection.
 *
 * Claude Code opens every stdio connection with `server/discover`. A server that answers it is
 * spoken to in the 2026-07-28 revision: no `initialize`, and every request carries its protocol
 * version and client capabilities in `_meta`. Interactive Claude Code declares the tasks
 * extension (`io.modelcontextprotocol/tasks`) on its requests and moves a call that returns a
 * task to the background: the user keeps working, Claude Code polls `tasks/get`, and the
 * result starts a new turn by itself. `claude -p` and subagents do not declare it, so their
 * calls block as before.
 *
 * SDK 1.x knows only the 2025 revision, so this layer sits between our transport and the SDK.
 * It answers what 2026 adds (server/discover, delegate_run as a task, tasks/get, tasks/cancel,
 * tasks/update, subscriptions/listen), hands every other 2026 request to the SDK and puts the
 * `resultType` the revision requires on its reply. Messages without the 2026 `_meta` (the
 * SDK's client, a client that fell back to `initialize`) pass through untouched.
 *
 * Spec: modelcontextprotocol.io/specification/2026-07-28 (basic/index "Per-request protocol
 * fields", basic/versioning, basic/patterns/subscriptions) and the tasks extension
 * (modelcontextprotocol/ext-tasks, specification/2026-07-28/tasks.md).
 */
import { isObject } from "../../platform/json_object.ts";
import type {
  Transport,
  TransportSendOptions,
} from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { JobTaskStore } from "../task_store.ts";
import { leanToolList } from "./lean_tools.ts";
import { discoverResult } from "./discover.ts";
import { StartupHold } from "./startup_hold.ts";
import {
  complete,
  detailedTask,
  errorBody,
  type Id,
  INTERNAL_ERROR,
  INVALID_PARAMS,
  type Json,
  META_SUBSCRIPTION,
  METHOD_NOT_FOUND,
  missingTasksExtension,
  protocolFields,
  RequestError,
  REVISION_2026,
  TASKS_EXTENSION,
  wireTask,
} from "./revision_2026_shapes.ts";

/** Open subscriptions per connection: each is an entry the client keeps alive. */
const MAX_SUBSCRIPTIONS = 16;

/** The revision the client speaks: unknown until its first request says. */
type SpokenRevision = "unknown" | "2025-11-25" | "2026-07-28";

export interface Revision2026Options {
  /** delegate_run's tasks; it runs as a 2026 task once registered (not in mode "off"). */
  tasks: JobTaskStore;
  /** One line per refused 2026 request and once when a client speaks 2026-07-28. */
  log?: (line: string) => void;
  /**
   * The tools are registered after connecting (serve.ts): what needs them waits until open()
   * (startup_hold.ts), and the SDK's tools/list_changed of each registration is not sent.
   */
  holdUntilOpen?: boolean;
}

/** A transport that serves the 2026-07-28 revision around the SDK's 2025 server. */
export class Revision2026Transport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  readonly #inner: Transport;
  readonly #tasks: JobTaskStore;
  readonly #log: (line: string) => void;
  #revision: SpokenRevision = "unknown";
  #initialized = false;
  /** 2026 requests the SDK answers, by id: their replies get `resultType`. */
  readonly #forwarded = new Map<Id, string>();
  /** Open subscriptions/listen requests that asked for tools/list_changed. */
  readonly #subscriptions = new Set<Id>();
  /** A tools/list_changed nobody could hear yet (no subscription, or before initialized). */
  #heldChange = false;
  #announced = false;
  /** Whether the client's latest 2026 request declared form elicitation. */
  #elicits = false;
  readonly #hold: StartupHold | undefined;

  constructor(inner: Transport, options: Revision2026Options) {
    this.#inner = inner;
    this.#tasks = options.tasks;
    this.#log = options.log ?? (() => {});
    this.#hold = options.holdUntilOpen ? new StartupHold() : undefined;
    inner.onmessage = (message: JSONRPCMessage) => this.#receive(message);
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error: Error) => this.onerror?.(error);
  }

  start(): Promise<void> {
    return this.#inner.start();
  }

  /**
   * Whether a 2026-07-28 client declared form elicitation (on its latest request): the server
   * may then ask its person (server/permission_prompt.ts). A 2025 client says so in initialize.
   */
  clientElicits(): boolean {
    return this.#revision === "2026-07-28" && this.#elicits;
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  /** Whether requests wait for the tools (holdUntilOpen, before open()). */
  waiting(): boolean {
    return this.#hold?.waiting ?? false;
  }

  /** The tools are registered: what waited is handled, in order, and so is all that follows. */
  open(): void {
    for (const message of this.#hold?.release() ?? []) this.#receive(message);
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    let m = message as Json;
    if (isObject(m.result) && Array.isArray(m.result.tools)) {
      m = { ...m, result: leanToolList(m.result) };
      message = m as JSONRPCMessage;
    }
    if ("id" in m && !("method" in m)) {
      const id = m.id as Id;
      const method = this.#forwarded.get(id);
      this.#forwarded.delete(id);
      if (method !== undefined && isObject(m.result)) {
        const result = complete(m.result, method);
        return this.#inner.send({ ...message, result }, options);
      }
    } else if (!("id" in m) && typeof m.method === "string") {
      return this.#notify(message, m.method, options);
    }
    return this.#inner.send(message, options);
  }

  #notify(message: JSONRPCMessage, method: string, options?: TransportSendOptions) {
    // The 2026 extension has no 2025 status notifications; its clients poll tasks/get.
    if (method === "notifications/tasks/status" && this.#revision === "2026-07-28") {
      return Promise.resolve();
    }
    if (method !== "notifications/tools/list_changed") return this.#inner.send(message, options);
    // Sent by the SDK as each tool is registered, before any client could have listed them.
    if (this.#hold && !this.#hold.released) return Promise.resolve();
    if (this.#revision === "2025-11-25" && this.#initialized) {
      return this.#inner.send(message, options);
    }
    // 2026 delivers change notifications only on subscriptions/listen streams, stamped with
    // the subscription's id; a 2025 client may hear them once initialized.
    if (this.#revision !== "2026-07-28" || this.#subscriptions.size === 0) {
      this.#heldChange = true;
      return Promise.resolve();
    }
    return Promise.all(
      [...this.#subscriptions].map((id) => this.#inner.send(this.#changed(id), options)),
    ).then(() => {});
  }

  #changed(subscription: Id): JSONRPCMessage {
    return {
      jsonrpc: "2.0",
      method: "notifications/tools/list_changed",
      params: { _meta: { [META_SUBSCRIPTION]: subscription } },
    };
  }

  #reply(id: Id, method: string, result: Json): void {
    const reply = { jsonrpc: "2.0" as const, id, result: complete(result, method) };
    this.#inner.send(reply).catch((e: unknown) => this.onerror?.(e as Error));
  }

  #fail(id: Id, method: string, e: unknown): void {
    const error = errorBody(e);
    this.#log(
      `Refused a 2026-07-28 ${method} request (id ${JSON.stringify(id)}): ${error.message}`,
    );
    this.#inner.send({ jsonrpc: "2.0", id, error }).catch((err: unknown) =>
      this.onerror?.(err as Error)
    );
  }

  #receive(message: JSONRPCMessage): void {
    if (this.#hold?.keeps(message)) return;
    const m = message as Json;
    if (typeof m.method === "string" && "id" in m) {
      this.#request(message, m.id as Id, m.method, isObject(m.params) ? m.params : {});
      return;
    }
    if (m.method === "notifications/cancelled" && isObject(m.params)) {
      const id = m.params.requestId as Id;
      // Closing a subscription is the client's cancel of its listen request.
      if (this.#subscriptions.delete(id)) return;
      // The SDK does not answer a cancelled request.
      this.#forwarded.delete(id);
    }
    this.onmessage?.(message);
    if (m.method === "notifications/initialized") {
      this.#initialized = true;
      if (this.#revision === "2025-11-25" && this.#heldChange) {
        this.#heldChange = false;
        this.#inner.send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" })
          .catch((e: unknown) => this.onerror?.(e as Error));
      }
    }
  }

  #request(message: JSONRPCMessage, id: Id, method: string, params: Json): void {
    if (method === "initialize") this.#revision = "2025-11-25";
    if (method === "server/discover") {
      // Every server must answer it (basic/versioning); it is how a client learns the
      // revisions we speak.
      // (Usually answered before this layer exists: early_discover.ts.)
      this.#inner.send({ jsonrpc: "2.0", id, result: discoverResult() } as JSONRPCMessage)
        .catch((e: unknown) => this.onerror?.(e as Error));
      return;
    }
    let fields;
    try {
      fields = protocolFields(params);
    } catch (e) {
      this.#fail(id, method, e);
      return;
    }
    if (!fields) {
      this.onmessage?.(message);
      return;
    }
    this.#revision = "2026-07-28";
    this.#elicits = fields.elicitation;
    if (!this.#announced) {
      this.#announced = true;
      this.#log(
        `${fields.client ? `client ${fields.client}` : "a client"} speaks MCP ${REVISION_2026}; ` +
          `delegate_run runs as a task where it declares ${TASKS_EXTENSION}`,
      );
    }
    this.#serve2026(message, id, method, params, fields.tasks).catch((e: unknown) =>
      this.#fail(id, method, e)
    );
  }

  async #serve2026(
    message: JSONRPCMessage,
    id: Id,
    method: string,
    params: Json,
    declaresTasks: boolean,
  ): Promise<void> {
    const taskId = () => {
      if (typeof params.taskId !== "string") {
        throw new RequestError(INVALID_PARAMS, `Invalid params: ${method} needs a string taskId`);
      }
      return params.taskId;
    };
    const notFound = (what: string) =>
      new RequestError(INVALID_PARAMS, `Failed to ${what} task: Task not found`);
    switch (method) {
      case "subscriptions/listen":
        return this.#listen(id, params, declaresTasks);
      case "tasks/get":
      case "tasks/cancel":
      case "tasks/update": {
        if (!declaresTasks) throw missingTasksExtension(method);
        const tid = taskId();
        if (method === "tasks/cancel") {
          if (!await this.#tasks.cancelDetached(tid)) throw notFound("cancel");
          return this.#reply(id, method, {});
        }
        const view = await this.#tasks.detached(tid, method === "tasks/get");
        if (!view) throw notFound(method === "tasks/get" ? "retrieve" : "update");
        // Our tasks never ask for input, so every inputResponses key is one never issued,
        // which the extension says to ignore.
        return this.#reply(id, method, method === "tasks/get" ? detailedTask(view) : {});
      }
      case "tasks/result":
      case "tasks/list":
        throw new RequestError(
          METHOD_NOT_FOUND,
          `Method not found: ${method} belongs to 2025-11-25 tasks; in ${REVISION_2026} ` +
            "tasks/get carries the result",
        );
      case "tools/call":
        if (params.name === "delegate_run" && declaresTasks && this.#tasks.runsDetached) {
          const started = await this.#tasks.startDetached(params.arguments);
          if ("result" in started) return this.#reply(id, method, started.result);
          return this.#reply(id, method, { resultType: "task", ...wireTask(started.task) });
        }
    }
    this.#forwarded.set(id, method);
    this.onmessage?.(message);
  }

  #listen(id: Id, params: Json, declaresTasks: boolean): void {
    const wanted = params.notifications;
    if (!isObject(wanted)) {
      throw new RequestError(
        INVALID_PARAMS,
        "Invalid params: subscriptions/listen needs a notifications filter",
      );
    }
    if (wanted.taskIds !== undefined && !declaresTasks) {
      throw missingTasksExtension("task notifications");
    }
    if (this.#subscriptions.size >= MAX_SUBSCRIPTIONS) {
      throw new RequestError(
        INTERNAL_ERROR,
        `Subscription limit reached: ${MAX_SUBSCRIPTIONS} subscriptions are open on this ` +
          "connection; cancel one first",
      );
    }
    // Only tools change here; task status is polled (tasks/get), not pushed.
    const honored = wanted.toolsListChanged === true ? { toolsListChanged: true } : {};
    this.#inner.send({
      jsonrpc: "2.0",
      method: "notifications/subscriptions/acknowledged",
      params: { notifications: honored, _meta: { [META_SUBSCRIPTION]: id } },
    }).catch((e: unknown) => this.onerror?.(e as Error));
    if (!("toolsListChanged" in honored)) {
      // Nothing to deliver: a result ends the subscription gracefully.
      this.#reply(id, "subscriptions/listen", { _meta: { [META_SUBSCRIPTION]: id } });
      return;
    }
    this.#subscriptions.add(id);
    if (this.#heldChange) {
      this.#heldChange = false;
      this.#inner.send(this.#changed(id)).catch((e: unknown) => this.onerror?.(e as Error));
    }
  }
}

/**
 * The wire shapes of MCP revision 2026-07-28 that SDK 1.x lacks, for revision_2026.ts: the
 * per-request protocol fields, the result stamps (`resultType`, server identity, cache hints),
 * the tasks extension's task shapes and the revision's error codes.
 *
 * Spec: modelcontextprotocol.io/specification/2026-07-28 (basic/index "Per-request protocol
 * fields" and "Error Codes", basic/versioning) and the tasks extension
 * (modelcontextprotocol/ext-tasks, specification/2026-07-28/tasks.md).
 */
import { isObject } from "../../platform/json_object.ts";
import { SUPPORTED_PROTOCOL_VERSIONS, type Task } from "@modelcontextprotocol/sdk/types.js";
import { errorMessage } from "../../errors.ts";
import { REVISION_2026, TASKS_EXTENSION } from "./discover.ts";
import type { DetachedView } from "../task_store.ts";

export { complete, REVISION_2026, TASKS_EXTENSION } from "./discover.ts";
const META_VERSION = "io.modelcontextprotocol/protocolVersion";
const META_CLIENT = "io.modelcontextprotocol/clientInfo";
const META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";
export const META_SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId";

/** JSON-RPC 2.0 and MCP error codes. */
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
export const MISSING_CLIENT_CAPABILITY = -32021;
const UNSUPPORTED_VERSION = -32022;

export type Id = string | number;
export type Json = Record<string, unknown>;

/** A request refused with a JSON-RPC error. */
export class RequestError extends Error {
  constructor(readonly code: number, message: string, readonly data?: Json) {
    super(message);
  }
}

/** The JSON-RPC error object for `e`. */
export function errorBody(e: unknown): { code: number; message: string; data?: Json } {
  return e instanceof RequestError
    ? { code: e.code, message: e.message, ...(e.data ? { data: e.data } : {}) }
    : { code: INTERNAL_ERROR, message: `Internal error: ${errorMessage(e)}` };
}

export const missingTasksExtension = (what: string) =>
  new RequestError(
    MISSING_CLIENT_CAPABILITY,
    `Missing required client capability: ${what} needs the ${TASKS_EXTENSION} extension in ` +
      `the request's _meta "${META_CAPABILITIES}"`,
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
  );

/** What a 2026 request says about itself in `_meta`. */
export interface ProtocolFields {
  /** The client declared the tasks extension on this request. */
  tasks: boolean;
  /** "name version" of the client, when it says. */
  client: string | undefined;
  /** The client declared form elicitation on this request (`elicitation: {}` or `{ form }`). */
  elicitation: boolean;
}

/**
 * The protocol fields of a request that claims a revision: undefined for a 2025 request (no
 * claim), else checked (every 2026 request carries its version and capabilities).
 */
export function protocolFields(params: Json): ProtocolFields | undefined {
  const meta = isObject(params._meta) ? params._meta : {};
  const version = meta[META_VERSION];
  if (version === undefined) return undefined;
  if (version !== REVISION_2026) {
    throw new RequestError(UNSUPPORTED_VERSION, "Unsupported protocol version", {
      supported: [REVISION_2026, ...SUPPORTED_PROTOCOL_VERSIONS],
      requested: String(version),
    });
  }
  const capabilities = meta[META_CAPABILITIES];
  if (!isObject(capabilities)) {
    throw new RequestError(
      INVALID_PARAMS,
      `Invalid params: _meta "${META_CAPABILITIES}" is required on every request of ` +
        `protocol revision ${REVISION_2026}`,
    );
  }
  const extensions = isObject(capabilities.extensions) ? capabilities.extensions : {};
  const info = isObject(meta[META_CLIENT]) ? meta[META_CLIENT] : {};
  const elicitation = isObject(capabilities.elicitation) ? capabilities.elicitation : undefined;
  return {
    tasks: isObject(extensions[TASKS_EXTENSION]),
    elicitation: elicitation !== undefined &&
      (isObject(elicitation.form) || !isObject(elicitation.url)),
    client: typeof info.name === "string"
      ? `${info.name} ${String(info.version ?? "")}`
      : undefined,
  };
}

/** The 2026 shape of a task: `ttlMs` and `pollIntervalMs` instead of 2025's names. */
export function wireTask(task: Task): Json {
  return {
    taskId: task.taskId,
    status: task.status,
    ...(task.statusMessage !== undefined ? { statusMessage: task.statusMessage } : {}),
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ttlMs: task.ttl ?? null,
    ...(task.pollInterval !== undefined ? { pollIntervalMs: task.pollInterval } : {}),
  };
}

/**
 * What tasks/get shows. A job that failed, timed out or was cancelled from elsewhere is still
 * a completed tool call whose result says so (`isError`): the extension keeps `failed` for
 * JSON-RPC errors. Only the client's own tasks/cancel makes it `cancelled`.
 */
export function detailedTask(view: DetachedView): Json {
  const base = wireTask(view.task);
  if (view.task.status === "working" || view.task.status === "input_required") {
    return { ...base, status: "working" };
  }
  if (view.task.status === "cancelled" && view.stoppedByClient) {
    return { ...base, status: "cancelled" };
  }
  if (view.result) return { ...base, status: "completed", result: view.result };
  return {
    ...base,
    status: "failed",
    error: { code: INTERNAL_ERROR, message: `The task ended ${view.task.status} without a result` },
  };
}

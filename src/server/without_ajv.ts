/**
 * The MCP SDK's server module imports ajv and ajv-formats for one purpose: checking a client's
 * answer to `elicitation/create` when the server calls `Server.elicitInput`. This server never
 * does (server/permission_prompt.ts sends its questions as plain requests and reads the answer
 * itself), yet on Deno the import alone cost every server's start about 55 ms of CPU: both
 * packages are CommonJS, which Deno compiles from source on each start (its code cache covers ES
 * modules only) through its Node module loader (measured: the SDK's server module alone, 0.35
 * CPU-s with them, 0.29 CPU-s without; median of 5 on 2 cores).
 *
 * So the `serve` command, before anything imports the SDK, answers the loader's requests for
 * those two files with a stand-in that throws if it is ever called, and the server is given
 * NO_SCHEMA_VALIDATION instead of the SDK's ajv-based validator. Should the loader change the
 * way it asks (a new Deno, Node's bundle, where ajv is inlined), the hook is not reached and ajv
 * loads as before: the cost comes back, nothing breaks. Only the `serve` process installs it;
 * a process that also runs the SDK's Client (the tests) keeps ajv, which the Client uses.
 */
import Module from "node:module";
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";

/** The files the SDK's validation/ajv-provider.js imports, as Deno's loader resolves them. */
const AJV_FILES =
  /[\\/](?:ajv[\\/](?:[^\\/]+[\\/])?dist[\\/]ajv|ajv-formats[\\/](?:[^\\/]+[\\/])?dist[\\/]index)\.js$/;

function ajvNotLoaded(): never {
  throw new Error(
    "ollama-delegate: ajv is not loaded in the MCP server (src/server/without_ajv.ts); " +
      "validate JSON Schemas some other way",
  );
}

/** The loader's entry point, as node:module has it (not part of its typed surface). */
type Load = (request: string, parent: unknown, isMain: boolean) => unknown;
let installed = false;

/** Makes later imports of ajv and ajv-formats in this process load a stand-in instead. */
export function leaveAjvUnloaded(): void {
  if (installed) return;
  const loader = Module as unknown as { _load?: Load };
  const load = loader._load;
  if (typeof load !== "function") return;
  installed = true;
  loader._load = function (this: unknown, request, parent, isMain) {
    if (typeof request === "string" && AJV_FILES.test(request)) return ajvNotLoaded;
    return load.call(this, request, parent, isMain);
  };
}

/**
 * The server's JSON Schema validator in place of the SDK's default: it validates nothing and
 * says so if asked, since the server never asks (see the header).
 */
export const NO_SCHEMA_VALIDATION: jsonSchemaValidator = {
  getValidator: () => ajvNotLoaded(),
};

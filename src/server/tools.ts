/**
 * The MCP tools: each one's name, title, description, input shape and hints, registered
 * with its handler (handlers.ts). In delegation mode off only `ollama_models` is offered.
 * The handlers load at the first call: tools/list needs only what is here.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { JobManager } from "../jobs/manager.ts";
import { descriptions } from "./descriptions.ts";
import type { ReviewArgs } from "./review_tool.ts";
import { registerRunTool } from "./run_tool.ts";
import { shapes, transcriptShape } from "./shapes.ts";
import {
  catchToolErrors,
  progressEvery,
  type ToolDeps,
  type ToolExtra,
  wordJobErrors,
} from "./tool_deps.ts";

type Handlers = typeof import("./handlers.ts");
type Handler<A> = (args: A, extra: ToolExtra) => Promise<CallToolResult>;

/** The handler `pick` names, loaded at its first call, its failures made tool results. */
function handler<A>(pick: (h: Handlers) => Handler<A>) {
  let loaded: Handler<A> | undefined;
  return catchToolErrors<A>(async (args, extra) => {
    loaded ??= pick(await import("./handlers.ts"));
    return await loaded(args, extra);
  });
}

const replies = () => import("./job_replies.ts");

export type { ToolDeps };

const READ_ONLY = { readOnlyHint: true, openWorldHint: false };
const STARTS_WORK = { readOnlyHint: false, destructiveHint: true, openWorldHint: true };

/** What the server may change in its tools after they are registered. */
export interface RegisteredTools {
  /** Names the default model in delegate_start's description (tools/list_changed). */
  describeDefault(model: string): void;
}

/** Registers the tools the delegation mode offers (every one but in mode off). */
export function registerTools(server: McpServer, deps: ToolDeps): RegisteredTools {
  const s = deps.resolved.settings;
  const context = {
    mode: s.delegationMode,
    allowedModels: s.allowedModels,
    defaultModel: s.defaultModel,
    permissionMode: s.defaultPermissionMode,
    engine: s.defaultEngine,
  };
  const desc = descriptions(context);

  server.registerTool(
    "ollama_models",
    {
      title: "Ollama models and delegation settings",
      description: desc.ollama_models,
      annotations: READ_ONLY,
    },
    handler((h) => h.modelsHandler(deps)),
  );

  if (s.delegationMode === "off") return { describeDefault() {} };

  const startTool = server.registerTool(
    "delegate_start",
    {
      title: "Delegate a task to an Ollama model",
      description: desc.delegate_start,
      inputSchema: shapes.start,
      annotations: STARTS_WORK,
    },
    handler((h) => h.startHandler(deps)),
  );
  server.registerTool(
    "delegate_followup",
    {
      title: "Continue a delegated session",
      description: desc.delegate_followup,
      inputSchema: shapes.followup,
      annotations: STARTS_WORK,
    },
    handler((h) => h.followupHandler(deps)),
  );
  server.registerTool(
    "delegate_review",
    {
      title: "Code review",
      description: desc.delegate_review,
      inputSchema: shapes.review,
    },
    catchToolErrors<ReviewArgs>(async (args, extra) =>
      await (await import("./review_tool.ts")).reviewHandler(deps)(args, extra)
    ),
  );
  server.registerTool(
    "delegate_status",
    {
      title: "Delegated job status",
      description: desc.delegate_status,
      inputSchema: shapes.status,
      annotations: READ_ONLY,
    },
    handler((h) => h.statusHandler(deps)),
  );
  server.registerTool(
    "delegate_result",
    {
      title: "Delegated job result",
      description: desc.delegate_result,
      inputSchema: shapes.result,
      annotations: READ_ONLY,
    },
    handler((h) => h.resultHandler(deps)),
  );
  server.registerTool(
    "delegate_cancel",
    {
      title: "Cancel a delegated job",
      description: desc.delegate_cancel,
      inputSchema: shapes.cancel,
      annotations: {
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: true,
        openWorldHint: false,
      },
    },
    handler((h) => h.cancelHandler(deps)),
  );
  server.registerTool(
    "delegate_list",
    {
      title: "List delegated jobs",
      description: desc.delegate_list,
      inputSchema: shapes.list,
      annotations: READ_ONLY,
    },
    handler((h) => h.listHandler(deps)),
  );
  registerTranscriptTool(
    server,
    async () => (await deps.runtime()).manager,
    desc.delegate_transcript,
  );
  server.registerTool(
    "delegate_usage",
    {
      title: "Delegation usage and cost",
      description: desc.delegate_usage,
      inputSchema: shapes.usage,
      annotations: READ_ONLY,
    },
    handler((h) => h.usageHandler(deps)),
  );
  if (deps.taskStore) {
    registerRunTool(server, {
      taskStore: deps.taskStore,
      start: async (args) => await wordJobErrors((await replies()).startJob(deps, args)),
      wait: async (id, seconds, options) =>
        await wordJobErrors((await deps.runtime()).manager.wait(id, seconds, options)),
      cancel: async (id) => await wordJobErrors((await deps.runtime()).manager.cancel(id)),
      reply: async (view) => (await replies()).jobReply(deps, view),
      markDelivered: async (view) => await (await replies()).markDelivered(deps, view),
      progressMs: progressEvery(deps),
    });
  }
  return {
    describeDefault(model) {
      if (s.defaultModel) return;
      startTool.update({
        description: descriptions({ ...context, resolvedDefault: model }).delegate_start,
      });
    },
  };
}

/** delegate_transcript, on its own so that paging can be tried over MCP without the rest. */
export function registerTranscriptTool(
  server: McpServer,
  jobs: () => Promise<JobManager>,
  description?: string,
): void {
  server.registerTool(
    "delegate_transcript",
    {
      title: "Page through a delegated job's activity",
      description,
      inputSchema: transcriptShape,
      annotations: READ_ONLY,
    },
    handler((h) => h.transcriptHandler(jobs)),
  );
}

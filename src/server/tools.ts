import { join } from "node:path";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import { DelegateError, errorMessage, isDelegateError } from "../errors.ts";
import type { JobManager, JobView } from "../jobs/manager.ts";
import { isErrorState, isTerminal } from "../jobs/record.ts";
import type { ModelCatalog } from "../models/catalog.ts";
import { DEFAULT_BACKEND, type NativeEngine } from "../engines/native/run.ts";
import type { ResolvedSettings } from "../settings/load.ts";
import type { WorkdirPolicy } from "../jobs/workdirs.ts";
import { descriptions } from "./descriptions.ts";
import { allowedDir, allowedDirs, existingFiles, readPrompt, shapes } from "./inputs.ts";
import { renderList } from "./list.ts";
import { registerTranscriptTool } from "./transcript_tool.ts";
import { renderUsage } from "../jobs/usage_report.ts";
import { type JobTaskStore, registerRunTool, type RunArgs } from "./run_tool.ts";
import { renderModels } from "./models_report.ts";
import { activityLines, followupHint, outputBody, pollHint, summary } from "./render.ts";

export interface ToolDeps {
  resolved: ResolvedSettings;
  manager: JobManager;
  catalog: ModelCatalog;
  serverCwd: string;
  /** Where delegates may work: checked for cwd and add_dirs of every start and follow-up. */
  workdirs: WorkdirPolicy;
  /** What `ollama_models` shows about delegates: their env and binary. */
  delegateEnv: (model: string) => Record<string, string>;
  claudeBinary: () => string | undefined;
  native: NativeEngine;
  /** Present when the server offers MCP tasks (delegate_run). */
  taskStore?: JobTaskStore;
}

type ArgsOf<K extends keyof typeof shapes> = z.infer<z.ZodObject<(typeof shapes)[K]>>;

type Extra = {
  signal: AbortSignal;
  _meta?: { progressToken?: string | number };
  sendNotification: (
    n: { method: "notifications/progress"; params: Record<string, unknown> },
  ) => Promise<void>;
};

const text = (body: string, isError = false): CallToolResult => ({
  content: [{ type: "text", text: body }],
  ...(isError ? { isError: true } : {}),
});

/** Every failure becomes an isError result whose text says what to do. */
function guarded<A>(fn: (args: A, extra: Extra) => Promise<CallToolResult>) {
  return async (args: A, extra: Extra): Promise<CallToolResult> => {
    try {
      return await fn(args, extra);
    } catch (e) {
      if (isDelegateError(e)) return text(e.message, true);
      return text(`Internal error: ${errorMessage(e)}`, true);
    }
  };
}

/** Registers the seven tools; in mode off only `ollama_models`. */
/** What the server may change in its tools after they are registered. */
export interface RegisteredTools {
  /** Names the default model in delegate_start's description (tools/list_changed). */
  describeDefault(model: string): void;
}

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
  const readOnly = { readOnlyHint: true, openWorldHint: false };

  server.registerTool(
    "ollama_models",
    {
      title: "Ollama models and delegation settings",
      description: desc.ollama_models,
      annotations: readOnly,
    },
    guarded<Record<string, never>>(async () => {
      const report = await renderModels(deps);
      return text(report.text, report.isError);
    }),
  );

  if (s.delegationMode === "off") return { describeDefault() {} };

  const waitFor = async (view: JobView, seconds: number | undefined, extra: Extra) => {
    const wait = seconds ?? s.defaultWaitSeconds;
    if (wait <= 0 || isTerminal(view.record.state)) return view;
    const token = extra._meta?.progressToken;
    return await deps.manager.wait(view.record.id, wait, {
      signal: extra.signal,
      tickMs: 5000,
      tick: token === undefined ? undefined : (v, elapsed) => {
        const last = v.activities.at(-1);
        const doing = last ? activityLines([last], 1)[0]!.trim() : v.record.state;
        extra.sendNotification({
          method: "notifications/progress",
          params: {
            progressToken: token,
            progress: Math.round(elapsed / 1000),
            total: wait,
            message: `job ${v.record.id} ${v.record.state}, ${
              Math.round(elapsed / 1000)
            }s: ${doing}`,
          },
        }).catch(() => {});
      },
    });
  };

  const finishedReply = async (view: JobView, header = "") => {
    const r = view.record;
    if (!isTerminal(r.state)) {
      const tail = activityLines(view.activities, 5);
      return text(
        `${header}${summary(view)}\n` +
          (tail.length > 0 ? `recent activity:\n${tail.join("\n")}\n` : "") +
          pollHint(r.id),
      );
    }
    const max = s.maxInlineChars;
    const { text: out, length } = await deps.manager.store.readResultText(r.id, max);
    const body = outputBody(
      out,
      length,
      max,
      join(deps.manager.store.dirOf(r.id), "result.txt"),
      r.id,
    );
    if (r.state === "completed") {
      return text(`${summary(view)}\n--- output ---\n${body}\n\n${followupHint(r.id)}`);
    }
    return text(`${summary(view)}\n--- partial output ---\n${body}`, true);
  };

  /** Waits as asked, then replies; `header` introduces a job that is still running. */
  const replyAfterWait = async (
    started: JobView,
    seconds: number | undefined,
    extra: Extra,
    header: string,
  ) => {
    const view = await waitFor(started, seconds, extra);
    return finishedReply(view, isTerminal(view.record.state) ? "" : header);
  };

  /** Everything delegate_start and delegate_run do before the job exists. */
  const startJob = async (args: RunArgs): Promise<JobView> => {
    const prompt = await readPrompt(args, deps.serverCwd);
    const cwd = await allowedDir(
      args.cwd ?? deps.serverCwd,
      deps.serverCwd,
      args.cwd === undefined ? "cwd (the server's own, used when a call names none)" : "cwd",
      deps.workdirs,
    );
    const addDirs = await allowedDirs(args.add_dirs ?? [], cwd, deps.workdirs);
    const engine = args.engine ?? s.defaultEngine;
    const target = await chooseModel(deps, engine, args);
    const files = args.files ? await existingFiles(args.files, cwd) : undefined;
    return await deps.manager.start({
      prompt,
      engine,
      ...(target.backend !== undefined ? { backend: target.backend } : {}),
      model: target.model,
      cwd,
      options: {
        permissionMode: args.permission_mode ?? s.defaultPermissionMode,
        ...(args.allowed_tools ? { allowedTools: args.allowed_tools } : {}),
        ...(args.disallowed_tools ? { disallowedTools: args.disallowed_tools } : {}),
        ...(args.append_system_prompt !== undefined
          ? { appendSystemPrompt: args.append_system_prompt }
          : {}),
        ...(args.max_turns !== undefined ? { maxTurns: args.max_turns } : {}),
        ...(args.effort !== undefined ? { effort: args.effort } : {}),
        addDirs,
        ...(files ? { files } : {}),
      },
    });
  };

  const startTool = server.registerTool(
    "delegate_start",
    {
      title: "Delegate a task to an Ollama model",
      description: desc.delegate_start,
      inputSchema: shapes.start,
      annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
    },
    guarded<ArgsOf<"start">>(async (args, extra) => {
      const view = await startJob(args);
      return await replyAfterWait(view, args.wait_seconds, extra, "Delegated task started.\n");
    }),
  );

  server.registerTool(
    "delegate_followup",
    {
      title: "Continue a delegated session",
      description: desc.delegate_followup,
      inputSchema: shapes.followup,
      annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
    },
    guarded<ArgsOf<"followup">>(async (args, extra) => {
      if ((args.job_id === undefined) === (args.session_id === undefined)) {
        return text("Cannot follow up: pass exactly one of job_id and session_id", true);
      }
      const prompt = await readPrompt(args, deps.serverCwd);
      const previous = await deps.manager.latestTurn({
        ...(args.job_id !== undefined ? { jobId: args.job_id } : {}),
        ...(args.session_id !== undefined ? { sessionId: args.session_id } : {}),
      });
      if (!deps.catalog.isAllowed(previous.model)) {
        return text(
          `Cannot follow up: the session's model "${previous.model}" is no longer in the allowed ` +
            `list (${s.allowedModels.join(", ")}). Start a new task with an allowed model`,
          true,
        );
      }
      // Judged again: the record may predate the rules, or the user changed workspaceRoots.
      const cwd = await allowedDir(previous.cwd, previous.cwd, "the session's cwd", deps.workdirs);
      const addDirs = await allowedDirs(
        args.add_dirs ?? previous.options.addDirs,
        cwd,
        deps.workdirs,
      );
      const view = await deps.manager.followup(previous, prompt, {
        permissionMode: args.permission_mode,
        allowedTools: args.allowed_tools,
        disallowedTools: args.disallowed_tools,
        appendSystemPrompt: args.append_system_prompt,
        maxTurns: args.max_turns,
        effort: args.effort,
        addDirs: args.add_dirs ? addDirs : undefined,
      });
      return await replyAfterWait(view, args.wait_seconds, extra, "Follow-up started.\n");
    }),
  );

  server.registerTool(
    "delegate_status",
    {
      title: "Delegated job status",
      description: desc.delegate_status,
      inputSchema: shapes.status,
      annotations: readOnly,
    },
    guarded<ArgsOf<"status">>(async (args, extra) => {
      let view = await deps.manager.get(args.job_id);
      view = await waitFor(view, args.wait_seconds, extra);
      const lines = activityLines(view.activities, args.progress_limit ?? 15);
      const footer = isTerminal(view.record.state)
        ? `Finished (${view.record.state}). Collect the output with delegate_result({ job_id: "${view.record.id}" }).`
        : pollHint(view.record.id);
      return text(
        `${summary(view)}\nrecent activity:\n${
          lines.length > 0 ? lines.join("\n") : "  (no activity recorded yet)"
        }\n${footer}`,
        isErrorState(view.record.state),
      );
    }),
  );

  server.registerTool(
    "delegate_result",
    {
      title: "Delegated job result",
      description: desc.delegate_result,
      inputSchema: shapes.result,
      annotations: readOnly,
    },
    guarded<ArgsOf<"result">>(async (args, extra) => {
      const view = await waitFor(await deps.manager.get(args.job_id), args.wait_seconds, extra);
      return finishedReply(view);
    }),
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
    guarded<ArgsOf<"cancel">>(async (args) => {
      const { view, wasRunning } = await deps.manager.cancel(args.job_id);
      if (!wasRunning) {
        return text(`Job ${view.record.id} was already ${view.record.state}; nothing to cancel.`);
      }
      return text(
        `Cancelled job ${view.record.id} and every process it started.\n${summary(view)}`,
      );
    }),
  );

  server.registerTool(
    "delegate_list",
    {
      title: "List delegated jobs",
      description: desc.delegate_list,
      inputSchema: shapes.list,
      annotations: readOnly,
    },
    guarded<ArgsOf<"list">>(async (args) => {
      const { records, corrupt } = await deps.manager.list();
      return text(
        renderList(
          deps.manager.store.stateDir,
          records,
          corrupt,
          args.state,
          args.limit ?? 20,
          s.pricing,
        ),
      );
    }),
  );

  registerTranscriptTool(server, { manager: deps.manager, description: desc.delegate_transcript });

  server.registerTool(
    "delegate_usage",
    {
      title: "Delegation usage and cost",
      description: desc.delegate_usage,
      inputSchema: shapes.usage,
      annotations: readOnly,
    },
    guarded<ArgsOf<"usage">>(async (args) => {
      const { records } = await deps.manager.list();
      return text(renderUsage(records, s.pricing, { days: args.days ?? 30 }));
    }),
  );

  if (deps.taskStore) {
    registerRunTool(server, {
      taskStore: deps.taskStore,
      start: startJob,
      wait: (id, seconds, options) => deps.manager.wait(id, seconds, options),
      cancel: (id) => deps.manager.cancel(id),
      reply: (view) => finishedReply(view),
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

/**
 * The engine, backend and model of a new job, after every policy check. The allowlist
 * binds every backend; a model on the default Ollama must also be listed there and, unless
 * the job is a one-shot without tools, support tools.
 */
async function chooseModel(
  deps: ToolDeps,
  engine: "claude" | "native",
  args: RunArgs,
): Promise<{ model: string; backend?: string }> {
  const s = deps.resolved.settings;
  if (engine === "claude") {
    if (args.backend !== undefined || args.files !== undefined) {
      throw new DelegateError(
        `Cannot start job: ${
          args.backend !== undefined ? "backend" : "files"
        } needs engine "native"; the claude engine always uses the Ollama at ${s.baseUrl}`,
      );
    }
    return { model: await deps.catalog.resolve(args.model) };
  }
  const oneShot = args.allowed_tools !== undefined && args.allowed_tools.length === 0;
  const backend = deps.native.backend(args.backend);
  if (!backend) {
    throw new DelegateError(
      `Cannot start job: there is no backend "${args.backend}". Configured: ${
        deps.native.backendNames().join(", ")
      }. Backends are the user's settings (ollama-delegate config --backend name=url)`,
    );
  }
  if (backend.name === DEFAULT_BACKEND && args.backend === undefined) {
    return { model: await deps.catalog.resolve(args.model, { needsTools: !oneShot }) };
  }
  const model = args.model?.trim() || s.defaultModel;
  if (!model) {
    throw new DelegateError(
      `Cannot start job: name a model for backend "${backend.name}" (there is no default model)`,
    );
  }
  if (!deps.catalog.isAllowed(model)) {
    throw new DelegateError(
      `Cannot start job: model "${model}" is not in the allowed list ` +
        `(${s.allowedModels.join(", ")}). Only the user can change the list, from a terminal`,
    );
  }
  return { model, backend: backend.name };
}

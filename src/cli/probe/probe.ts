/**
 * `ollama-delegate doctor --probe`: which models can do delegated work, on which engine, and
 * how long a turn takes. Each model gets one tiny tool-use task on each engine's path, one
 * model and one request at a time (a local Ollama runs one model well, not several at once),
 * each request bounded by a timeout; a model that fails is reported with its error.
 */
import process from "node:process";
import { OllamaClient, type OllamaModel } from "../../backends/ollama/api.ts";
import { errorMessage } from "../../errors.ts";
import { isCloud } from "../../models/catalog.ts";
import { hasCloudSuffix, sameModel } from "../../settings/model_names.ts";
import { TYPICAL_REPLY_TOKENS } from "../../models/prompt_sizes.ts";
import type { EngineName, Settings } from "../../settings/types.ts";
import { HTTP_TIMEOUT_MS } from "../doctor/check.ts";
import { type EngineNeed, engineNeed, enginesFacts } from "../doctor/engine_needs.ts";
import {
  type ModelContext,
  modelContext,
  sourceText,
  tokensLabel,
} from "../models/model_context.ts";
import { derivedName } from "../models/derive.ts";
import { type NativeOutcome, type PathOutcome, probeMessages, probeNative } from "./task.ts";
import { type TextCallHistory, textCallHistory } from "./ledger.ts";

export const DEFAULT_PROBE_TIMEOUT_S = 120;

export type Attempt<T> = T | { error: string };

export interface ProbedModel {
  model: string;
  cloud: boolean;
  /** Named on the command line although allowedModels does not list it. */
  notAllowed?: boolean;
  native: Attempt<NativeOutcome>;
  claude: Attempt<PathOutcome>;
  /** From the native request's prompt_eval_count / prompt_eval_duration. */
  promptTokensPerSecond?: number;
  /** From its eval_count / eval_duration. */
  generationTokensPerSecond?: number;
  /** The engine's per-request prompt at the prompt speed plus a typical reply. */
  secondsPerTurn: Partial<Record<EngineName, number>>;
  context: ModelContext;
  usableWith: EngineName[];
  notes: string[];
}

export interface ProbeReport {
  /** At least one model can do delegated work on some engine. */
  ok: boolean;
  baseUrl: string;
  timeoutSeconds: number;
  assumptions: {
    promptTokens: Record<EngineName, number>;
    /** Below this the claude engine refuses a loaded model (its prompt plus room to answer). */
    claudeRequiredContext: number;
    replyTokens: number;
  };
  models: ProbedModel[];
  /**
   * Models whose past jobs (the quality ledger) wrote tool calls as text: those that ended on
   * calls nothing ran, and the calls the native engine recovered.
   */
  textCallsInJobs: TextCallHistory[];
  /** Why nothing was probed (Ollama unreachable, no models). */
  error?: string;
}

export const isFailedAttempt = <T extends object>(a: Attempt<T>): a is { error: string } =>
  "error" in a;

/**
 * The models to probe: those named, else the allowed ones Ollama has (and allowed cloud); with
 * `residency: local` none of the cloud ones unless named (a name is the user's own choice, as
 * for the allowlist).
 */
function pick(settings: Settings, named: string[], tags: OllamaModel[]): string[] {
  if (named.length > 0) return [...new Set(named.map((n) => n.trim()).filter(Boolean))];
  const local = settings.residency === "local";
  const resident = tags.filter((m) => !local || !isCloud(m));
  const allowed = settings.allowedModels;
  if (allowed.length === 0) return resident.map((m) => m.name);
  const listed = resident.filter((m) => allowed.some((a) => sameModel(a, m.name)))
    .map((m) => m.name);
  // A cloud model runs without being pulled first, so an allowed one is tried either way.
  const cloud = local
    ? []
    : allowed.filter((a) => hasCloudSuffix(a) && !listed.some((l) => sameModel(l, a)));
  return [...listed, ...cloud];
}

const perSecond = (tokens?: number, ms?: number) =>
  tokens !== undefined && ms !== undefined && tokens > 0 && ms > 0
    ? tokens / (ms / 1000)
    : undefined;

export async function runProbe(
  settings: Settings,
  named: string[],
  options: { timeoutSeconds?: number; env: Record<string, string>; cwd?: string },
): Promise<ProbeReport> {
  const timeoutSeconds = options.timeoutSeconds ?? DEFAULT_PROBE_TIMEOUT_S;
  const facts = await enginesFacts(settings, options.env, options.cwd ?? process.cwd());
  const claudeNeed = engineNeed("claude", facts);
  const nativeNeed = engineNeed("native", facts);
  // A call is read as the native engine reads one: it recovers calls written as text.
  const reading = {
    textCalls: facts.native.textCalls,
    checkArguments: facts.native.checkArguments,
  };
  const report: ProbeReport = {
    ok: false,
    baseUrl: settings.baseUrl,
    timeoutSeconds,
    assumptions: {
      promptTokens: { native: nativeNeed.promptTokens, claude: claudeNeed.promptTokens },
      claudeRequiredContext: claudeNeed.requiredContext,
      replyTokens: TYPICAL_REPLY_TOKENS,
    },
    models: [],
    textCallsInJobs: await textCallHistory(settings.stateDir),
  };
  const client = new OllamaClient(settings.baseUrl, HTTP_TIMEOUT_MS * 3);
  let tags: OllamaModel[];
  try {
    await client.version();
    tags = await client.tags();
  } catch (e) {
    report.error = errorMessage(e);
    return report;
  }
  const models = pick(settings, named, tags);
  if (models.length === 0) {
    report.error = settings.allowedModels.length > 0
      ? `none of the allowed models (${settings.allowedModels.join(", ")}) is installed in ` +
        `Ollama at ${settings.baseUrl}. Pull one, or name models: doctor --probe <model>...`
      : `Ollama at ${settings.baseUrl} lists no models. Pull one: ollama pull <model>`;
    return report;
  }
  const timeoutMs = timeoutSeconds * 1000;
  for (const model of models) {
    const listed = tags.find((m) => sameModel(m.name, model));
    const cloud = listed ? isCloud(listed) : hasCloudSuffix(model);
    const nativeRun: Attempt<NativeOutcome> = await probeNative(settings.baseUrl, model, {
      timeoutMs,
      reading,
      ...(settings.keepAlive ? { keepAlive: settings.keepAlive } : {}),
    }).catch((e) => ({ error: errorMessage(e) }));
    const claudeRun: Attempt<PathOutcome> = await probeMessages(settings.baseUrl, model, {
      timeoutMs,
      reading,
    }).catch((e) => ({ error: errorMessage(e) }));
    // Read after the requests: the native one loaded the model with the context that the
    // claude engine's requests get too (neither asked for another).
    const context: ModelContext = await modelContext(client, model, cloud)
      .catch(() => ({ source: "unknown" as const }));
    const probed = assess({ model, cloud, native: nativeRun, claude: claudeRun, context }, {
      claude: claudeNeed,
      native: nativeNeed,
    });
    if (named.length > 0 && settings.allowedModels.length > 0) {
      if (!settings.allowedModels.some((a) => sameModel(a, model))) {
        probed.notAllowed = true;
        probed.notes.push(`not in allowedModels: ollama-delegate config --allow ...,${model}`);
      }
    }
    report.models.push(probed);
  }
  report.ok = report.models.some((m) => m.usableWith.length > 0);
  return report;
}

/** Speeds, time per turn, and which engines the model works on, with the reasons why not. */
function assess(
  found: {
    model: string;
    cloud: boolean;
    native: Attempt<NativeOutcome>;
    claude: Attempt<PathOutcome>;
    context: ModelContext;
  },
  need: Record<EngineName, EngineNeed>,
): ProbedModel {
  const { model, native, claude, context } = found;
  const notes: string[] = [];
  const out: ProbedModel = { ...found, secondsPerTurn: {}, usableWith: [], notes };
  if (!isFailedAttempt(native)) {
    const prompt = perSecond(native.promptTokens, native.promptMs);
    const generation = perSecond(native.evalTokens, native.evalMs);
    if (prompt !== undefined) out.promptTokensPerSecond = round(prompt, 1);
    if (generation !== undefined) out.generationTokensPerSecond = round(generation, 1);
    if (prompt !== undefined && generation !== undefined) {
      const reply = TYPICAL_REPLY_TOKENS / generation;
      out.secondsPerTurn = {
        native: round(need.native.promptTokens / prompt + reply, 2),
        claude: round(need.claude.promptTokens / prompt + reply, 2),
      };
    } else {
      notes.push("Ollama sent no timings, so the time per turn is unknown");
    }
  }
  const works = (o: Attempt<PathOutcome>) =>
    !isFailedAttempt(o) && o.call !== "none" && !o.argumentsError;
  if (works(native)) out.usableWith.push("native");
  const required = need.claude.requiredContext;
  const fits = context.effective === undefined || context.effective >= required;
  if (works(claude) && claudeStructured(claude) && fits) {
    out.usableWith.push("claude");
  }
  if (!isFailedAttempt(claude) && claude.call === "text") {
    notes.push(
      "on /v1/messages it writes its tool call as text, which Claude Code does not run; " +
        "the native engine recovers such calls",
    );
  }
  for (const [path, o] of [["native", native], ["claude", claude]] as const) {
    if (isFailedAttempt(o)) notes.push(`${path}: ${o.error}`);
    else if (o.argumentsError) {
      notes.push(`${path}: a call with bad arguments: ${o.argumentsError}`);
    } else if (o.call === "none" && o.said) {
      notes.push(`${path}: answered without a call: "${o.said}"`);
    }
  }
  // Worth deriving only for a model that Claude Code could otherwise use.
  if (!fits && context.effective !== undefined && works(claude) && claudeStructured(claude)) {
    const ctx = Math.min(65_536, context.max ?? 65_536);
    notes.push(
      `its context, ${context.effective} tokens (${sourceText(context)}), is less than the ` +
        `${required} the claude engine needs (its prompt is about ` +
        `${need.claude.promptTokens} tokens), so that engine refuses it: ollama-delegate ` +
        `models derive ${model} --ctx ${tokensLabel(ctx)} (makes ${derivedName(model, ctx)})`,
    );
  }
  return out;
}

const claudeStructured = (o: Attempt<PathOutcome>) =>
  !isFailedAttempt(o) && o.call === "structured";

function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

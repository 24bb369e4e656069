/**
 * What one request of an engine carries and what context it therefore needs, for `doctor`
 * and `doctor --probe`: the claude engine's own estimate (the measured table behind its
 * refusal of a model loaded with too small a context), the native engine's measured prompt.
 */
import { engineFacts, engineNames } from "../../engines/registry.ts";
import type { EngineFacts } from "../../engines/facts.ts";
import { OLLAMA_SMALLEST_DEFAULT_CONTEXT } from "../../models/prompt_sizes.ts";
import type { Check } from "./check.ts";
import type { EngineName, Settings } from "../../settings/types.ts";

export interface EngineNeed {
  engine: string;
  /** Prompt tokens of every request before the task: system prompt, tools, reminders. */
  promptTokens: number;
  /** The context under which the engine's requests are cut (or, for claude, refused). */
  requiredContext: number;
  /** It asks for the context each request needs (engines/facts.ts RequestSize). */
  contextPerRequest: boolean;
  /** The engines that do, for advice when this one does not. */
  perRequestEngines: string[];
}

/**
 * What each engine of the table says about itself with these settings, here: the product's
 * (named in settings' ENGINES) and any other registered.
 */
export type EnginesFacts = Record<EngineName, EngineFacts> & Record<string, EngineFacts>;

/** Asks every engine of the table for its facts (engines/facts.ts). */
export async function enginesFacts(
  settings: Settings,
  env: Record<string, string | undefined>,
  cwd: string,
  platform?: string,
): Promise<EnginesFacts> {
  const setup = { settings, env, serverCwd: cwd, ...(platform ? { platform } : {}) };
  const names = engineNames();
  const each = await Promise.all(names.map((name) => engineFacts(name, setup)));
  return Object.fromEntries(names.map((name, i) => [name, each[i]!])) as EnginesFacts;
}

/**
 * An engine's need with the settings in force, as the engine estimates it: the claude engine
 * by its claudeTools, harness, default permission mode and Claude Code's sandbox where it
 * would be on; the native engine asks Ollama for the context each request needs, so its prompt
 * is its need.
 */
export function engineNeed(engine: string, facts: EnginesFacts): EngineNeed {
  const request = facts[engine]?.request;
  if (!request) {
    throw new TypeError(`"${engine}" is not an engine (${Object.keys(facts).join(", ")})`);
  }
  const { promptTokens, requiredContext } = request;
  return {
    engine,
    promptTokens,
    requiredContext,
    contextPerRequest: request.contextPerRequest === true,
    perRequestEngines: perRequestEngines(facts),
  };
}

function perRequestEngines(facts: EnginesFacts): string[] {
  return Object.entries(facts).filter(([, f]) => f.request.contextPerRequest).map(([n]) => n);
}

/** `; or use engine "x"` (with `why`) naming an engine that sets the context per request. */
export function perRequestAdvice(engines: readonly string[], why = ""): string {
  return engines.length > 0 ? `, or use engine "${engines[0]}"${why}` : "";
}

/**
 * `doctor`'s "Request size" line: what one request of each engine carries with the settings
 * in force, and whether a local model loaded with Ollama's smallest default context (4,096
 * tokens, GPUs under 24 GiB) holds it. A warning when it cannot hold the need of an engine
 * that does not set the context per request (the claude engine).
 */
export function requestSizeCheck(s: Settings, facts: EnginesFacts): Check {
  const all = Object.entries(facts);
  const short = all.filter(([, f]) =>
    !f.request.contextPerRequest && f.request.requiredContext > OLLAMA_SMALLEST_DEFAULT_CONTEXT
  );
  const fits = short.length === 0;
  const summary =
    all.map(([name, f]) =>
      `${name}: about ${f.request.promptTokens} tokens a request` +
      (f.request.depends ? ` (${f.request.depends})` : "")
    ).join("; ") + "; " +
    (fits
      ? `${all.length === 2 ? "both" : "all"} fit a model loaded with Ollama's default ` +
        `${OLLAMA_SMALLEST_DEFAULT_CONTEXT} tokens`
      : `a model loaded with Ollama's default ${OLLAMA_SMALLEST_DEFAULT_CONTEXT} tokens cannot ` +
        `hold ${
          short.map(([name, f]) => `the ${name} engine's ${f.request.requiredContext}`).join(
            " or ",
          )
        }`);
  const advice = perRequestAdvice(perRequestEngines(facts));
  return {
    id: "requests",
    title: "Request size",
    status: fits ? "pass" : "warn",
    summary,
    ...(fits ? {} : {
      hint: s.claudeHarness === "full"
        ? "Use the lean harness (ollama-delegate config --claude-harness lean), load models " +
          `with more context (ollama-delegate models derive <model> --ctx 64k)${advice}`
        : `Load models with more context (ollama-delegate models derive <model> --ctx 64k)${advice}`,
    }),
    // claude* and native* stay for scripts that read them; `engines` has every engine.
    details: {
      claudeHarness: s.claudeHarness,
      claudeSandbox: facts.claude.sandbox.kind === "on",
      claudePromptTokens: facts.claude.request.promptTokens,
      claudeRequiredContext: facts.claude.request.requiredContext,
      nativePromptTokens: facts.native.request.promptTokens,
      // Every engine of the table, so that one added there shows without a field of its own.
      engines: Object.fromEntries(
        Object.entries(facts).map(([name, f]) => [name, {
          promptTokens: f.request.promptTokens,
          requiredContext: f.request.requiredContext,
        }]),
      ),
    },
  };
}

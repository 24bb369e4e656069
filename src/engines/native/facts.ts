/**
 * The native engine's facts (../facts.ts): no program of its own, its shell's sandbox as this
 * machine allows it (and a trial run of it for `doctor`), its measured request size, and the
 * text-call recovery `doctor --probe` credits it with.
 */
import { NATIVE_PROMPT_TOKENS } from "../../models/prompt_sizes.ts";
import type { EngineFacts, FactsSetup } from "../facts.ts";
import { limitsOf } from "../sandbox_limits.ts";
import { probeSandbox } from "./sandbox/probe.ts";
import { shellRunner } from "./sandbox/shell_runner.ts";
import { checkArguments } from "./text_calls/arguments.ts";
import { recoverTextCalls } from "./text_calls/recover_calls.ts";

export function nativeFacts(setup: FactsSetup): EngineFacts {
  const s = setup.settings;
  const runner = shellRunner(s.sandbox);
  return {
    sandbox: runner.kind === "bwrap"
      ? { kind: "on", tools: { bwrap: runner.bwrap } }
      : runner.kind === "unconfined"
      ? { kind: "off", why: runner.why }
      : runner,
    trySandbox: () => probeSandbox(s.sandbox, limitsOf(s)),
    // It asks Ollama for the context each request needs, so its prompt is its need.
    request: {
      promptTokens: NATIVE_PROMPT_TOKENS,
      requiredContext: NATIVE_PROMPT_TOKENS,
      contextPerRequest: true,
    },
    textCalls: (text, tools) =>
      recoverTextCalls(text, tools)?.calls.map((c) => ({
        name: c.name,
        format: c.format,
        ...(c.error ? { error: c.error } : {}),
      })),
    checkArguments,
  };
}

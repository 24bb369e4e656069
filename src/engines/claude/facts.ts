/**
 * The claude engine's facts (../facts.ts): Claude Code as the delegate's PATH finds it, the
 * environment built for it, the jail and Claude Code's sandbox as planned on this machine, and
 * its request size from the measured table (context_check.ts). Loads none of the turn's code.
 */
import { osPlatform } from "../../platform/runtime.ts";
import { which } from "../../platform/which.ts";
import { LEAN_CLAUDE_TOOLS } from "../../settings/types.ts";
import type { EngineFacts, FactsSetup, SandboxPlan } from "../facts.ts";
import { estimatePromptTokens, requiredContext } from "./context_check.ts";
import { claudeChildEnv } from "./env.ts";
import { jailLimitsText } from "./jail_limits.ts";
import { limitsOf } from "../sandbox_limits.ts";
import { type ClaudeSandboxPlan, findSandboxTools, planSandbox } from "./sandbox.ts";

export function claudeFacts(setup: FactsSetup): EngineFacts {
  const s = setup.settings;
  const lean = s.claudeHarness === "lean";
  const childEnv = (model: string) =>
    claudeChildEnv({
      parentEnv: setup.env,
      // A pool's first endpoint stands for it where no turn is at hand, as in run.ts.
      baseUrl: s.baseUrls[0]?.url ?? s.baseUrl,
      model,
      claudeConfigDir: s.claudeConfigDir,
      lean,
    });
  const env = childEnv("x");
  const plan = planSandbox(s.sandbox, findSandboxTools(env), setup.platform ?? osPlatform);
  const promptTokens = estimatePromptTokens({
    tools: lean ? s.claudeTools.filter((t) => LEAN_CLAUDE_TOOLS.includes(t)) : s.claudeTools,
    lean,
    permissionMode: s.defaultPermissionMode,
    taskChars: 0,
    sandbox: plan.kind === "on",
  });
  return {
    binary: {
      setting: "claudeBin",
      configured: s.claudeBin,
      path: which(s.claudeBin, env, setup.serverCwd),
    },
    childEnv,
    sandbox: sandboxPlan(plan),
    // The jail holds the limits, with Claude Code's sandbox nested inside or without it.
    ...(plan.kind === "on" || plan.kind === "partial"
      ? { limitsText: () => jailLimitsText(limitsOf(s)) }
      : {}),
    request: {
      promptTokens,
      requiredContext: requiredContext(promptTokens),
      depends: `${s.claudeHarness} harness, Claude Code's sandbox ${
        plan.kind === "on" ? "on" : "off"
      }`,
    },
  };
}

function sandboxPlan(plan: ClaudeSandboxPlan): SandboxPlan {
  switch (plan.kind) {
    case "on":
      return { kind: "on", tools: { bwrap: plan.bwrap, socat: plan.socat } };
    case "refused":
      return plan;
    default:
      return { kind: "off", why: plan.why };
  }
}

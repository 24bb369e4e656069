/**
 * Settings of how delegation fits into Claude Code (issue 31): which models the user's Claude
 * Code subagents run on when delegated, and the price the savings estimate compares with. Read
 * from the user file and the environment only: a project's file would otherwise choose the
 * model its agents' work goes to, or dress up what delegation saves.
 */
import * as is from "../platform/shape.ts";
import { asJson, asNumber, intIn, modelName } from "./field_values.ts";
import { narrowNumber } from "./narrow.ts";
import type { FieldSpec, SettingKey } from "./types.ts";
import { DEFAULT_ORCHESTRATOR_PRICE, orchestratorPriceProblem } from "./orchestrator_price.ts";

function field<K extends SettingKey>(spec: FieldSpec<K>): FieldSpec<K> {
  return spec;
}

/** `name=model,alias=model` or a JSON object, as the variable's text. */
export const asNameMap = (text: string): unknown => {
  const t = text.trim();
  if (t.startsWith("{")) return asJson(t);
  const out: Record<string, string> = {};
  for (const part of t.split(",").map((p) => p.trim()).filter((p) => p !== "")) {
    const eq = part.indexOf("=");
    if (eq <= 0) return t;
    out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return out;
};

/** A Claude Code subagent's name or a `model:` value (`sonnet`, `claude-opus-4-5`, `inherit`). */
const agentKey = is.string().regex(
  /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/,
  "is an agent name or a Claude Code model alias (sonnet, opus, haiku, inherit, a model id)",
);

export const CLAUDE_CODE_FIELDS = [
  field({
    key: "claudeAgentModels",
    env: ["OLLAMA_MCP_CLAUDE_AGENT_MODELS"],
    default: {},
    schema: is.record(agentKey, modelName),
    fromEnv: asNameMap,
    meaning: "The model a Claude Code subagent (~/.claude/agents, .claude/agents) runs on as a " +
      "delegate, by its name or its model: alias (code-reviewer=qwen3-coder:30b, " +
      "sonnet=qwen3.5:397b-cloud); unmapped ones run on the default model",
    userOnly: true,
  }),
  field({
    key: "orchestratorPrice",
    env: ["OLLAMA_MCP_ORCHESTRATOR_PRICE"],
    default: DEFAULT_ORCHESTRATOR_PRICE,
    schema: is.string().trim().refine(
      (t) => orchestratorPriceProblem(t) === undefined,
      (t) => orchestratorPriceProblem(t) ?? "is not a price",
    ),
    fromEnv: (t) => t.trim(),
    meaning: "The orchestrator's price per million tokens for the savings estimate (stats, " +
      "delegate_usage): opus, sonnet, haiku, fable (Anthropic's list prices) or <in>/<out>",
    userOnly: true,
  }),
  field({
    key: "permissionAskSeconds",
    env: ["OLLAMA_MCP_PERMISSION_ASK_SECONDS"],
    default: 120,
    schema: intIn(0, 3600),
    fromEnv: asNumber,
    meaning: "How long the person has to answer a delegate's permission question (MCP " +
      "elicitation; no answer denies); 0 = never ask, deny as before",
    // A project may ask less (a shorter time, or never), not more.
    projectNarrow: narrowNumber,
  }),
];

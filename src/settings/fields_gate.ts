/**
 * The review gate's settings (`ollama-delegate review --gate`, the plugin's Stop hook): off
 * unless the user turns it on; a project may turn it off, and sets none of its options.
 */
import * as is from "../platform/shape.ts";
import { asList, asNumber, intIn, modelName } from "./field_values.ts";
import { type FieldSpec, MAX_GATE_SECONDS, type SettingKey, SEVERITIES } from "./types.ts";

function field<K extends SettingKey>(spec: FieldSpec<K>): FieldSpec<K> {
  return spec;
}

export const GATE_FIELDS = [
  field({
    key: "reviewGate",
    env: ["OLLAMA_MCP_REVIEW_GATE"],
    default: "off",
    schema: is.enumOf(["on", "off"]),
    fromEnv: (t) => t.trim(),
    meaning: "Claude Code's Stop hook reviews uncommitted changes before a turn ends (the " +
      "plugin's hook; on or off)",
    // A project may turn it off; turning it on spends the user's quota, which is theirs to do.
    projectRefuses: ["on"],
  }),
  field({
    key: "reviewGateSeverity",
    env: ["OLLAMA_MCP_REVIEW_GATE_SEVERITY"],
    default: "high",
    schema: is.enumOf(SEVERITIES),
    fromEnv: (t) => t.trim().toLowerCase(),
    meaning: "The review gate blocks only for findings of this severity or worse",
    userOnly: true,
  }),
  field({
    key: "reviewGateAgreement",
    env: ["OLLAMA_MCP_REVIEW_GATE_AGREEMENT"],
    default: 1,
    schema: intIn(1, 5),
    fromEnv: asNumber,
    meaning: "How many of the gate's reviewers must have found such a finding",
    userOnly: true,
  }),
  field({
    key: "reviewGateRounds",
    env: ["OLLAMA_MCP_REVIEW_GATE_ROUNDS"],
    default: 2,
    schema: intIn(1, 20),
    fromEnv: asNumber,
    meaning:
      "Times the review gate may block in one Claude Code session; then it lets stops through",
    userOnly: true,
  }),
  field({
    key: "reviewGateModels",
    env: ["OLLAMA_MCP_REVIEW_GATE_MODELS"],
    default: [],
    schema: is.array(modelName).max(5),
    fromEnv: asList,
    meaning: "The gate's reviewers: one model, or 2-5 for a panel; empty = the default model",
    userOnly: true,
  }),
  field({
    key: "reviewGateSeconds",
    env: ["OLLAMA_MCP_REVIEW_GATE_TIMEOUT"],
    default: 300,
    schema: intIn(10, MAX_GATE_SECONDS),
    fromEnv: asNumber,
    meaning: "The review gate lets the stop through when its review takes longer than this",
    userOnly: true,
  }),
] as const satisfies readonly FieldSpec[];

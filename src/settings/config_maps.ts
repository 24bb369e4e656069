/** `config` flags that edit the map settings: backends, pricing and claudeAgentModels. */
import { FIELDS } from "./fields.ts";
import { ConfigUsageError } from "./config_errors.ts";

export interface MapEdit {
  key: "backends" | "pricing" | "claudeAgentModels";
  name: string;
  /** undefined removes the entry. */
  value?: unknown;
  flag: string;
}

/** Edits of the two map settings, from --backend/--remove-backend and --price/--remove-price. */
export function mapChanges(
  values: Record<string, string | string[] | boolean | undefined>,
): MapEdit[] {
  const edits: MapEdit[] = [];
  const str = (name: string) => values[name] as string | undefined;
  const backend = str("backend");
  if (backend !== undefined) {
    const eq = backend.indexOf("=");
    if (eq <= 0) {
      throw new ConfigUsageError(
        `Cannot use --backend "${backend}": write name=url, e.g. --backend vllm=http://gpu:8000 ` +
          "(or name=url,url,... for a pool)",
      );
    }
    const max = str("backend-max");
    // Several URLs make a pool; one stays a plain url, as files written before pools have it.
    const urls = backend.slice(eq + 1).split(",").map((u) => u.trim()).filter(Boolean);
    edits.push({
      key: "backends",
      name: backend.slice(0, eq).trim(),
      value: {
        ...(urls.length > 1 ? { urls } : { url: urls[0] ?? "" }),
        kind: str("backend-kind") ?? "openai",
        ...(str("api-key-env") ? { apiKeyEnv: str("api-key-env") } : {}),
        ...(max !== undefined ? { maxConcurrent: /^\d+$/.test(max) ? Number(max) : max } : {}),
      },
      flag: "--backend",
    });
  } else if (["backend-kind", "api-key-env", "backend-max"].some((f) => str(f) !== undefined)) {
    throw new ConfigUsageError(
      "--backend-kind, --api-key-env and --backend-max go with --backend name=url",
    );
  }
  const removeBackend = str("remove-backend");
  if (removeBackend !== undefined) {
    edits.push({ key: "backends", name: removeBackend.trim(), flag: "--remove-backend" });
  }
  const priceText = str("price");
  if (priceText !== undefined) {
    const m = /^(.+)=\s*([\d.]+)\s*\/\s*([\d.]+)\s*$/.exec(priceText);
    if (!m) {
      throw new ConfigUsageError(
        `Cannot use --price "${priceText}": write model=input/output per million tokens, ` +
          `e.g. --price qwen3-coder:480b-cloud=0.5/2`,
      );
    }
    edits.push({
      key: "pricing",
      name: m[1]!.trim(),
      value: { inputPerMillion: Number(m[2]), outputPerMillion: Number(m[3]) },
      flag: "--price",
    });
  }
  const removePrice = str("remove-price");
  if (removePrice !== undefined) {
    edits.push({ key: "pricing", name: removePrice.trim(), flag: "--remove-price" });
  }
  const agentModel = str("agent-model");
  if (agentModel !== undefined) {
    const eq = agentModel.indexOf("=");
    if (eq <= 0) {
      throw new ConfigUsageError(
        `Cannot use --agent-model "${agentModel}": write name=model, with a Claude Code ` +
          "subagent's name or its model: alias, e.g. --agent-model sonnet=qwen3-coder:30b",
      );
    }
    edits.push({
      key: "claudeAgentModels",
      name: agentModel.slice(0, eq).trim(),
      value: agentModel.slice(eq + 1).trim(),
      flag: "--agent-model",
    });
  }
  const removeAgentModel = str("remove-agent-model");
  if (removeAgentModel !== undefined) {
    edits.push({
      key: "claudeAgentModels",
      name: removeAgentModel.trim(),
      flag: "--remove-agent-model",
    });
  }
  return edits;
}

/**
 * Applies one edit to the target file's own map (values from other layers are never copied
 * in) and validates the result. Throws ConfigUsageError naming the flag.
 */
export function applyMapEdit(current: unknown, edit: MapEdit): Record<string, unknown> {
  const spec = FIELDS.find((f) => f.key === edit.key)!;
  // The file's own map only: values from other layers must not be copied into it.
  const map: Record<string, unknown> =
    typeof current === "object" && current !== null && !Array.isArray(current)
      ? { ...current as Record<string, unknown> }
      : {};
  if (edit.value === undefined) {
    if (!Object.hasOwn(map, edit.name)) {
      throw new ConfigUsageError(
        `Cannot remove ${edit.name} from ${edit.key}: it is not there (${
          Object.keys(map).join(", ") || "none set"
        })`,
      );
    }
    delete map[edit.name];
  } else {
    map[edit.name] = edit.value;
  }
  const check = spec.schema.safeParse(map);
  if (!check.success) {
    const issue = check.error.issues[0];
    const at = issue?.path.length ? ` (at ${issue.path.join(".")})` : "";
    const why = issue?.code === "invalid_key"
      ? `"${edit.name}" is not a valid name: ${issue.issues?.[0]?.message ?? "is not valid"}`
      : `${issue?.message ?? "is not valid"}${at}`;
    throw new ConfigUsageError(`Cannot set ${edit.key} from ${edit.flag}: ${why}`);
  }
  return map;
}

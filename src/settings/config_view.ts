/** What `ollama-delegate config` prints: the settings in force and where each comes from. */
import { FIELDS } from "./fields.ts";
import { formatProblems, type ResolvedSettings } from "./load.ts";
import type { SettingKey } from "./types.ts";

/** The human view of the settings in force, layer by layer. */
export function renderSettings(resolved: ResolvedSettings): string[] {
  const lines = ["Settings in force:"];
  const width = Math.max(...FIELDS.map((f) => f.key.length));
  for (const f of FIELDS) {
    const value = resolved.settings[f.key];
    const shown = showValue(value, f.key);
    lines.push(`  ${f.key.padEnd(width)}  ${shown}   [${resolved.sources[f.key]}]`);
  }
  lines.push("", "Layers (later wins):");
  for (const layer of resolved.layers) {
    const where = layer.path ? ` ${layer.path}` : "";
    const keys = layer.keys.length > 0 ? `: ${layer.keys.join(", ")}` : "";
    const error = layer.error ? ` (${layer.error})` : "";
    lines.push(`  ${layer.name.padEnd(8)}${layer.status}${where}${error}${keys}`);
  }
  const problems = formatProblems(resolved.problems);
  if (problems.length > 0) lines.push("", "Problems:", ...problems.map((p) => `  ${p}`));
  return lines;
}

function showValue(value: unknown, key: SettingKey): string {
  if (Array.isArray(value)) {
    if (value.length > 0) return value.map(endpointText).join(", ");
    return key === "allowedModels" ? "(all)" : key === "workspaceRoots" ? "(anywhere)" : "(none)";
  }
  if (value === "") return key === "defaultBackend" ? "(the Ollama at baseUrl)" : "(auto)";
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value);
    if (entries.length === 0) return "(none)";
    return entries.map(([name, v]) => {
      // A map of names to models (claudeAgentModels).
      if (typeof v === "string") return `${name}=${v}`;
      const o = v as Record<string, unknown>;
      if ("url" in o) {
        const extra = [
          o.kind,
          o.apiKeyEnv ? `key from $${o.apiKeyEnv}` : "",
          o.maxConcurrent ? `max ${o.maxConcurrent}` : "",
        ].filter(Boolean).join(", ");
        const urls = Array.isArray(o.urls) ? o.urls.map(endpointText).join(",") : o.url;
        return `${name}=${urls} (${extra})`;
      }
      return `${name}=${o.inputPerMillion}/${o.outputPerMillion} per M`;
    }).join("; ");
  }
  return String(value);
}

/** A list item: a string, or a pool's endpoint with its own limit. */
function endpointText(item: unknown): string {
  if (typeof item !== "object" || item === null) return String(item);
  const e = item as { url?: unknown; maxConcurrent?: unknown };
  return e.maxConcurrent !== undefined ? `${e.url} (max ${e.maxConcurrent})` : String(e.url);
}

export function renderJson(resolved: ResolvedSettings): unknown {
  return {
    settings: resolved.settings,
    sources: resolved.sources,
    layers: resolved.layers,
    problems: resolved.problems,
  };
}

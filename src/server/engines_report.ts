/**
 * `ollama_models`' "Engines" lines: each engine of the table as it describes itself here
 * (engines/facts.ts), so that an engine added to the table shows without a line of its own.
 */
import type { EngineFacts, SandboxPlan } from "../engines/facts.ts";
import { engineNames } from "../engines/registry.ts";
import { errorMessage, failureText } from "../errors.ts";
import { escapeLine } from "../platform/plain_text.ts";

/** One line per engine: its program, its sandbox and what one request carries. */
export async function engineLines(
  facts: (engine: string) => Promise<EngineFacts>,
): Promise<string[]> {
  const names = engineNames();
  const width = Math.max(...names.map((n) => n.length));
  const lines = await Promise.all(names.map(async (name) => {
    let f: EngineFacts;
    try {
      f = await facts(name);
    } catch (e) {
      return `  ${name.padEnd(width)}  cannot say: ${errorMessage(e)}`;
    }
    const parts: string[] = [];
    if (f.binary) {
      parts.push(
        f.binary.path ?? `${f.binary.setting} "${f.binary.configured}" NOT FOUND`,
      );
    }
    parts.push(`sandbox ${planText(f.sandbox)}`);
    const r = f.request;
    parts.push(
      `about ${r.promptTokens} tokens a request before the task` +
        (r.depends ? ` (${r.depends})` : "") + `, context ${r.requiredContext} or more`,
    );
    return `  ${name.padEnd(width)}  ${parts.join("; ")}`;
  }));
  // Paths and reasons come from the machine and the settings: escaped, one line each.
  return ["Engines (each as it describes itself here):", ...lines.map(escapeLine)];
}

function planText(plan: SandboxPlan): string {
  switch (plan.kind) {
    case "on":
      return `on (${Object.entries(plan.tools).map(([k, v]) => `${k} ${v}`).join(", ")})`;
    case "off":
      return `off: ${plan.why}`;
    default:
      return `refused: ${failureText(plan.problem)}`;
  }
}

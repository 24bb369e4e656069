/**
 * Installed tool descriptions cost the user context on every turn: all of
 * them together, as tools/list delivers them (names, titles, descriptions, input schemas and
 * annotations), must stay under 2,500 tokens in every delegation mode, counted as chars / 4.
 */
import assert from "node:assert/strict";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { startInProcessScene } from "../support/in_process_scene.ts";

const BUDGET_CHARS = 2500 * 4;
const MODES = ["off", "ondemand", "auto"] as const;

/** A user with a typical policy: the allowed list and default appear in the descriptions. */
const POLICY = {
  allowedModels: ["qwen3-coder:480b-cloud", "gpt-oss:120b-cloud", "glm-4.6:cloud", "qwen3:8b"],
  defaultModel: "qwen3-coder:480b-cloud",
};

async function measure(mode: string, userConfig?: Record<string, unknown>) {
  await using scene = await startInProcessScene({
    emulator: false,
    env: { OLLAMA_MCP_DELEGATION_MODE: mode },
    // Nothing listens here: tools/list must not need Ollama.
    baseUrl: "http://127.0.0.1:9",
    ...(userConfig ? { userConfig } : {}),
  });
  const { tools } = (await scene.client.listTools()) as { tools: Tool[] };
  for (const t of tools) {
    assert.ok(!("$schema" in t.inputSchema), `${t.name} sends a $schema line: ${t.inputSchema}`);
  }
  const chars = JSON.stringify(tools).length;
  const perTool = tools.map((t) => `${t.name} ${JSON.stringify(t).length}`).join(", ");
  return { names: tools.map((t) => t.name), chars, perTool };
}

for (const mode of MODES) {
  for (const [label, config] of [["defaults", undefined], ["4 allowed models", POLICY]] as const) {
    Deno.test(`tools/list in mode ${mode} (${label}) stays under 2,500 tokens`, async () => {
      const { names, chars, perTool } = await measure(mode, config);
      console.log(
        `  mode ${mode}, ${label}: ${names.length} tools, ${chars} chars ` +
          `(~${Math.ceil(chars / 4)} tokens of 2500)\n    ${perTool}`,
      );
      if (mode === "off") assert.deepEqual(names, ["ollama_models"]);
      else assert.ok(names.includes("delegate_start"), `tools: ${names.join(", ")}`);
      assert.ok(
        chars < BUDGET_CHARS,
        `mode ${mode} (${label}): tools/list is ${chars} chars, over ${BUDGET_CHARS}`,
      );
    });
  }
}

/**
 * The parameters of Claude Code's tools that ours lack, checked against the tool input types
 * of the pinned Claude Code CLI (`sdk-tools.d.ts` in its package) and our tools' schemas: the
 * list must be exactly the difference, so that nothing ours takes is ignored and nothing
 * Claude Code's takes is refused.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  CLAUDE_CODE_ONLY,
  ignoredNote,
  ignoredParameters,
} from "../../../../src/engines/native/tools/claude_params.ts";
import { bashTool } from "../../../../src/engines/native/tools/bash.ts";
import { FILE_TOOLS } from "../../../../src/engines/native/tools/index.ts";
import type { ToolName } from "../../../../src/engines/native/tools/types.ts";
import { REPO } from "../../../support/harness.ts";

const SDK_TOOLS = join(
  REPO,
  ".tools",
  "node_modules",
  "@anthropic-ai",
  "claude-code",
  "sdk-tools.d.ts",
);
const INPUTS: Record<ToolName, string> = {
  Bash: "BashInput",
  Read: "FileReadInput",
  Write: "FileWriteInput",
  Edit: "FileEditInput",
  Glob: "GlobInput",
  Grep: "GrepInput",
};

/** The field names of `export interface <name> { ... }`, comments skipped. */
function fieldsOf(text: string, name: string): string[] {
  const start = text.indexOf(`export interface ${name} {`);
  assert.ok(start >= 0, `${name} is not in sdk-tools.d.ts`);
  const body = text.slice(start, text.indexOf("\n}", start));
  const withoutComments = body.replace(/\/\*[\s\S]*?\*\//g, "");
  return [...withoutComments.matchAll(/^ {2}("[^"]+"|[A-Za-z_$][\w$]*)\??:/gm)].map((m) =>
    m[1]!.replaceAll('"', "")
  );
}

Deno.test({
  name: "CLAUDE_CODE_ONLY is exactly what Claude Code's tools take and ours do not",
  ignore: !existsSync(SDK_TOOLS),
  fn() {
    const sdk = readFileSync(SDK_TOOLS, "utf8");
    const tools = [...FILE_TOOLS, bashTool({ kind: "refused", problem: { facts: "test" } })];
    for (const tool of tools) {
      const theirs = fieldsOf(sdk, INPUTS[tool.name]);
      const ours = Object.keys(tool.parameters.properties);
      const missing = theirs.filter((k) => !ours.includes(k)).sort();
      assert.deepEqual([...CLAUDE_CODE_ONLY[tool.name]].sort(), missing, tool.name);
      // Nothing ours takes is Claude Code's alone.
      assert.deepEqual(ours.filter((k) => CLAUDE_CODE_ONLY[tool.name].includes(k)), [], tool.name);
    }
  },
});

Deno.test("ignoredParameters and ignoredNote: labels are ignored quietly, the rest is told", () => {
  const props = { command: {}, timeout: {} };
  assert.deepEqual(
    ignoredParameters("Bash", props, { command: "x", description: "d", colour: 1 }),
    ["description"],
  );
  assert.deepEqual(
    ignoredParameters("Bash", { ...props, description: {} }, { description: "d" }),
    [],
  );
  assert.deepEqual(ignoredParameters("Nope", {}, { description: "d" }), []);
  assert.equal(ignoredNote("Bash", ["description"]), undefined);
  assert.equal(
    ignoredNote("Grep", ["-C", "multiline"]),
    'Note: this Grep does not take "-C", "multiline"; the call ran without them.',
  );
});

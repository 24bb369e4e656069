/**
 * The README's two charts (Mermaid) say what the code does: the engine chart's request sizes
 * and context are the ones `doctor` computes, and the worktree chart's branch, patch and
 * commands are the ones a worktree job's reply prints. A change to either side fails here
 * until the chart is brought along.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { enginesFacts, requestSizeCheck } from "../../src/cli/doctor/engine_needs.ts";
import { NEEDED_CONTEXT } from "../../src/cli/doctor/check.ts";
import { tokensLabel } from "../../src/cli/models/model_context.ts";
import { estimatePromptTokens, requiredContext } from "../../src/engines/claude/context_check.ts";
import { PATCH_FILE, plannedWorktree, takeCommands } from "../../src/jobs/worktree/turn.ts";
import {
  NATIVE_PROMPT_TOKENS,
  OLLAMA_SMALLEST_DEFAULT_CONTEXT,
} from "../../src/models/prompt_sizes.ts";
import { defaultSettings } from "../../src/settings/fields.ts";
import { LEAN_CLAUDE_TOOLS } from "../../src/settings/types.ts";
import { REPO } from "../support/harness.ts";

const README = readFileSync(join(REPO, "README.md"), "utf8");

/** The Mermaid block that mentions `marker`, with its entities and line breaks made text. */
function chart(marker: string): string {
  const blocks = [...README.matchAll(/```mermaid\n([^]*?)```/g)].map((m) =>
    m[1]!.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/#quot;/g, '"')
      .replace(/<br\/>/g, "\n")
  );
  const found = blocks.filter((b) => b.includes(marker));
  assert.equal(found.length, 1, `one Mermaid chart in README.md mentions "${marker}"`);
  return found[0]!;
}

/** Tokens as the chart writes them: 1224 -> "1.2k". */
const k = (tokens: number) => `${Math.round(tokens / 100) / 10}k`;

Deno.test("README engine chart: the request sizes and contexts doctor computes", async () => {
  const text = chart("claudeHarness");
  const s = defaultSettings();
  assert.equal(s.defaultEngine, "claude");
  assert.match(text, /claude engine \(default\)/);
  assert.equal(s.claudeHarness, "lean");
  const claude = (lean: boolean, sandbox: boolean) =>
    estimatePromptTokens({
      tools: lean ? s.claudeTools.filter((t) => LEAN_CLAUDE_TOOLS.includes(t)) : s.claudeTools,
      lean,
      permissionMode: s.defaultPermissionMode,
      taskChars: 0,
      sandbox,
    });

  // Lean, the default: the larger size (Claude Code's sandbox on); full: Claude Code's harness.
  const lean = claude(true, true);
  assert.ok(claude(true, false) <= lean);
  const [low, high] = [claude(false, false), claude(false, true)];
  const range = `${Math.round(low / 1000)}-${Math.round(high / 1000)}k tokens a request`;
  const sizes = `claudeHarness lean: ~${k(lean)} tokens a request,\nfull: ${range}`;
  assert.ok(text.includes(sizes), `the chart should say ${sizes}:\n${text}`);

  // The first lean request fits Ollama's smallest default context, as the paragraph says; the
  // full one does not. The chart's bar for the claude engine is the context doctor asks for,
  // and a derived model of that size holds even the full harness.
  assert.ok(requiredContext(lean) <= OLLAMA_SMALLEST_DEFAULT_CONTEXT);
  const defaultText = `Ollama's default ${
    OLLAMA_SMALLEST_DEFAULT_CONTEXT.toLocaleString("en-US")
  }-token`;
  assert.match(
    README.replace(/\s+/g, " "),
    new RegExp(`${defaultText} context holds the first request`),
  );
  assert.ok(requiredContext(low) > OLLAMA_SMALLEST_DEFAULT_CONTEXT);
  assert.ok(requiredContext(high) <= NEEDED_CONTEXT);
  const needed = tokensLabel(NEEDED_CONTEXT);
  assert.ok(text.includes(`Runs with a ${needed} context?`), text);
  const derive = `models derive <model>\n--ctx ${needed}`;
  assert.ok(text.includes(derive), `${derive}:\n${text}`);

  // Native: its own size.
  assert.ok(text.includes(`native engine\n~${k(NATIVE_PROMPT_TOKENS)} tokens a request`), text);

  // And doctor says the same: lean passes on the default context, full is told to derive.
  const noSandbox = { ...s, sandbox: "off" as const };
  const sized = async (settings: typeof noSandbox) =>
    requestSizeCheck(settings, await enginesFacts(settings, {}, "/"));
  assert.equal((await sized(noSandbox)).status, "pass");
  const full = await sized({ ...noSandbox, claudeHarness: "full" });
  assert.equal(full.status, "warn");
  assert.match(full.hint ?? "", /ollama-delegate models derive <model> --ctx 64k/);
});

Deno.test("README worktree chart: the branch, the patch and the reply's commands", () => {
  const text = chart("delegate/<id>");
  const session = "2914e6d8-20fd-43ff-8340-70d8a70f9778";
  const planned = plannedWorktree("/state", session, "/repo", false);
  assert.equal(planned.branch, "delegate/2914e6d8");
  assert.match(text, /branch delegate\/<id>/);
  assert.ok(text.includes(`writes ${PATCH_FILE}`), text);

  // The chart's "take it" lines are the reply's, without `-C <repo>` and quotes.
  const commands = takeCommands({
    ...planned,
    branch: "delegate/<id>",
    base: "<base>",
    patch: PATCH_FILE,
    head: "<head>",
  }).map((c) => c.replace(' -C "/repo"', "").replace(/"/g, ""));
  const shown = /take it:\n([^"]*)"/.exec(text)?.[1]?.replace(/\n(?!git )/g, " ").split("\n");
  assert.deepEqual(shown, commands);
  // With carried changes the patch comes first, as the README's sentence under the chart says.
  const carried = takeCommands({
    ...planned,
    base: "<base>",
    patch: PATCH_FILE,
    carried: { from: "<head>", stat: "" },
  });
  assert.match(carried[0]!, /apply/);
  assert.match(carried.at(-1)!, /merge .*also brings in the base commit/);
  assert.match(
    README,
    /the\s+patch and the cherry-pick then hold the delegate's work alone, a merge brings that commit in too/,
  );
});

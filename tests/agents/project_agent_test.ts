/**
 * A project's agent (a cloned repository's `.ollama-delegate/agents/*.md`) may only narrow what
 * the same call without it gets: the options it resolves to, fed to the engines' own functions
 * that build Claude Code's command line and the native tool policy.
 */
import assert from "node:assert/strict";
import { type Agent, parseAgent } from "../../src/agents/agent.ts";
import { type AgentCall, applyAgent } from "../../src/agents/apply.ts";
import { projectFallback } from "../../src/agents/project_limits.ts";
import { claudeArgs, delegateTools } from "../../src/engines/claude/argv.ts";
import { toolPolicy } from "../../src/engines/native/permissions.ts";
import { bashTool } from "../../src/engines/native/tools/bash.ts";
import { FILE_TOOLS } from "../../src/engines/native/tools/index.ts";
import type { ShellRunner } from "../../src/engines/native/sandbox/shell_runner.ts";
import type { TurnSpec } from "../../src/engines/types.ts";
import { DEFAULT_CLAUDE_TOOLS, type PermissionMode } from "../../src/settings/types.ts";

const NATIVE_TOOLS = [...FILE_TOOLS, bashTool({} as ShellRunner)];
const policy = (userMode: PermissionMode) => ({
  userMode,
  knownTools: DEFAULT_CLAUDE_TOOLS,
  userAgentsDir: "/home/u/.ollama-mcp/agents",
  userModels: { defaultModel: "", allowedModels: [] },
});

function projectAgent(front: string): Agent {
  return parseAgent(`---\n${front}\n---\nYou test.\n`, {
    name: "tester",
    source: "project",
    path: "/repo/.ollama-delegate/agents/tester.md",
  });
}

/** Claude Code's command line for a turn with these options. */
function claudeLine(o: {
  permissionMode: PermissionMode;
  allowedTools?: string[] | undefined;
  disallowedTools?: string[] | undefined;
}): string[] {
  const options = {
    permissionMode: o.permissionMode,
    addDirs: [],
    ...(o.allowedTools ? { allowedTools: o.allowedTools } : {}),
    ...(o.disallowedTools ? { disallowedTools: o.disallowedTools } : {}),
  };
  const spec = {
    jobId: "j",
    sessionId: "s",
    turn: 1,
    resume: false,
    model: "m",
    cwd: "/w",
    options,
    dir: "/d",
    promptPath: "/p",
  } as TurnSpec;
  const tools = delegateTools(DEFAULT_CLAUDE_TOOLS, o.allowedTools, o.disallowedTools);
  return claudeArgs(spec, "{}", tools);
}

const approvals = (argv: string[]) => argv.filter((a) => a.startsWith("--allowed-tools="));
const shown = (argv: string[]) => argv.find((a) => a.startsWith("--tools="))!.slice(8).split(",");

Deno.test("project agent: `tools: Bash, Read` approves nothing the call without it would not run", () => {
  const agent = projectAgent("tools: Bash, Read");
  for (const mode of ["default", "dontAsk", "acceptEdits", "auto"] as const) {
    const applied = applyAgent(agent, {}, policy(mode));
    const permissionMode = applied.permissionMode ?? mode;
    const withAgent = claudeLine({ ...applied, permissionMode });
    const without = claudeLine({ permissionMode });
    // Claude Code gets no --allowed-tools=Bash (nor Read): none without the agent either.
    assert.deepEqual(approvals(withAgent), approvals(without), mode);
    assert.deepEqual(approvals(withAgent), [], mode);
    // The tools it names stay shown; the others are denied.
    assert.deepEqual(shown(withAgent), ["Bash", "Read"], mode);
    assert.deepEqual(applied.disallowedTools, ["Edit", "Write", "Glob", "Grep"]);
    // The native engine offers no tool that the call without the agent would not offer.
    const native = toolPolicy(
      NATIVE_TOOLS,
      permissionMode,
      applied.allowedTools,
      applied.disallowedTools,
    )
      .tools.map((t) => t.name);
    const nativeWithout = toolPolicy(NATIVE_TOOLS, permissionMode, undefined, undefined).tools
      .map((t) => t.name);
    assert.ok(native.every((t) => nativeWithout.includes(t)), `${mode}: ${native}`);
    if (mode === "default" || mode === "dontAsk") assert.deepEqual(native, ["Read"]);
    assert.match(
      applied.notes.join("\n"),
      /project agent "tester" \(\/repo\/.*tester\.md\): its tools \(Bash, Read\) only choose .*Project agents cannot widen tools or the permission mode, nor move work to another model; put it in \/home\/u\/\.ollama-mcp\/agents\/ to allow/,
    );
  }
});

Deno.test("project agent: patterns and whole file tools are not pre-approvals either", () => {
  const cases = [
    "tools: Read",
    "tools: Bash(cat *), Grep",
    "tools: Read(//home/**)",
    "tools: Edit",
  ];
  for (const front of cases) {
    const applied = applyAgent(projectAgent(front), {}, policy("acceptEdits"));
    assert.equal(applied.allowedTools, undefined, front);
    assert.deepEqual(approvals(claudeLine({ ...applied, permissionMode: "acceptEdits" })), []);
    assert.equal(applied.notes.length, 1, front);
  }
  // An empty list approves nothing: it stays (a native one-shot).
  const none = applyAgent(projectAgent("tools: []"), {}, policy("acceptEdits"));
  assert.deepEqual(none.allowedTools, []);
  assert.deepEqual(none.notes, []);
  // The call's own denials are kept, and not repeated.
  const denied = applyAgent(projectAgent("tools: Read, Bash"), {
    disallowedTools: ["Bash(rm *)", "Edit"],
  }, policy("acceptEdits"));
  assert.deepEqual(denied.disallowedTools, ["Bash(rm *)", "Edit", "Write", "Glob", "Grep"]);
});

Deno.test("project agent: the call's own allowed_tools and the user's agent files keep their power", () => {
  const agent = projectAgent("tools: Bash(cat *), Read");
  const call: AgentCall = { allowedTools: ["Bash", "Read"] };
  const applied = applyAgent(agent, call, policy("acceptEdits"));
  // Within the call's rules: the agent narrows the call's whole Bash to its pattern.
  assert.deepEqual(applied.allowedTools, ["Bash(cat *)", "Read"]);
  assert.deepEqual(applied.notes, []);
  assert.throws(
    () => applyAgent(agent, { allowedTools: ["Write"] }, policy("acceptEdits")),
    /"Write" is not among agent "tester"'s tools/,
  );
  const mine = { ...projectAgent("tools: Bash, Read"), source: "user" as const };
  const own = applyAgent(mine, {}, policy("acceptEdits"));
  assert.deepEqual(own.allowedTools, ["Bash", "Read"]);
  assert.deepEqual(approvals(claudeLine({ ...own, permissionMode: "acceptEdits" })), [
    "--allowed-tools=Bash",
    "--allowed-tools=Read",
  ]);
  assert.deepEqual(own.notes, []);
});

Deno.test("project agent: a wider permission_mode is not used; a narrower one is", () => {
  const wide = applyAgent(
    projectAgent("permission_mode: bypassPermissions"),
    {},
    policy("default"),
  );
  assert.equal(wide.permissionMode, undefined, "the user's default applies");
  assert.match(
    wide.notes[0]!,
    /permission_mode "bypassPermissions" is not used \(your default "default" is\)/,
  );
  // The call's own mode is the call's: no note, no refusal.
  const called = applyAgent(projectAgent("permission_mode: auto"), {
    permissionMode: "acceptEdits",
  }, policy("default"));
  assert.equal(called.permissionMode, "acceptEdits");
  assert.deepEqual(called.notes, []);
  const narrow = applyAgent(projectAgent("permission_mode: plan"), {}, policy("acceptEdits"));
  assert.equal(narrow.permissionMode, "plan");
  assert.deepEqual(narrow.notes, []);
});

Deno.test("project agent: its model and fallbacks only among the user's models, never local to cloud", () => {
  const user = {
    userMode: "acceptEdits" as PermissionMode,
    knownTools: DEFAULT_CLAUDE_TOOLS,
    userAgentsDir: "/home/u/.ollama-mcp/agents",
    userModels: { defaultModel: "qwen3:8b", allowedModels: ["qwen3:8b", "qwen3.5:397b-cloud"] },
    defaultModel: "qwen3:8b",
  };
  // A model the user did not choose is not used; the call's default (undefined) runs.
  const other = applyAgent(projectAgent("model: gpt-oss:120b-cloud"), {}, user);
  assert.equal(other.model, undefined);
  assert.match(
    other.notes[0]!,
    /its model "gpt-oss:120b-cloud" is not used \(it is not one of the models you chose \(qwen3:8b, qwen3\.5:397b-cloud: your defaultModel and allowedModels\)\)/,
  );
  // A cloud model the user allowed still may not take work that runs locally without it.
  const cloud = applyAgent(projectAgent("model: qwen3.5:397b-cloud"), {}, user);
  assert.equal(cloud.model, undefined);
  assert.match(
    cloud.notes[0]!,
    /it runs on Ollama's cloud, and without the project the work runs on a local model/,
  );
  // Where the default is a cloud model, a project may pick another of the user's cloud models.
  const both = { ...user, defaultModel: "gpt-oss:120b-cloud" };
  both.userModels = { defaultModel: "gpt-oss:120b-cloud", allowedModels: ["qwen3.5:397b-cloud"] };
  assert.equal(
    applyAgent(projectAgent("model: qwen3.5:397b-cloud"), {}, both).model,
    "qwen3.5:397b-cloud",
  );
  // A local model the user chose is the project's to pick; a user's agent keeps its power; the
  // call's own model is the orchestrator's choice, and a refused agent model does not bind it.
  assert.deepEqual(applyAgent(projectAgent("model: qwen3:8b"), {}, user).notes, []);
  const mine = parseAgent("---\nmodel: gpt-oss:120b-cloud\n---\nx\n", {
    name: "m",
    source: "user",
    path: "/home/u/.ollama-mcp/agents/m.md",
  });
  assert.equal(applyAgent(mine, {}, user).model, "gpt-oss:120b-cloud");
  assert.equal(
    applyAgent(projectAgent("model: gpt-oss:120b-cloud"), { model: "qwen3.5:397b-cloud" }, user)
      .model,
    "qwen3.5:397b-cloud",
  );
  // An empty allowedModels and no defaultModel name nothing a project may pick.
  const none = { ...user, userModels: { defaultModel: "", allowedModels: [] } };
  assert.match(
    applyAgent(projectAgent("model: qwen3:8b"), {}, none).notes[0]!,
    /you chose no model a project may pick/,
  );

  const fallback = projectAgent("fallback: [qwen3.5:397b-cloud, qwen3:8b, evil:1b]");
  const local = projectFallback(fallback, "qwen3:8b", user.userModels);
  assert.deepEqual(local.kept, ["qwen3:8b"]);
  assert.match(
    local.note!,
    /its fallback models "qwen3\.5:397b-cloud" \(it runs on Ollama's cloud.*\), "evil:1b" \(it is not one of the models you chose/,
  );
  assert.deepEqual(projectFallback(fallback, "gpt-oss:120b-cloud", user.userModels).kept, [
    "qwen3.5:397b-cloud",
    "qwen3:8b",
  ]);
  assert.deepEqual(projectFallback({ ...fallback, source: "user" }, "qwen3:8b", user.userModels), {
    kept: ["qwen3.5:397b-cloud", "qwen3:8b", "evil:1b"],
  });
});

Deno.test("agent files: one rule per tools entry, so no rule rides along unseen", () => {
  for (
    const bad of ["Bash(git *) Edit", "Bash(x) Edit(y)", "Read Bash", "Bash(git *", "-x", "(x)"]
  ) {
    assert.throws(
      () => projectAgent(`tools: ["${bad}"]`),
      /is not one tool rule/,
      bad,
    );
  }
  assert.deepEqual(projectAgent("tools: Bash(echo (x)), Read").tools, ["Bash(echo (x))", "Read"]);
});

Deno.test("agent policy: the native engine's tools are all among the default claude tools", () => {
  // agentPolicy's knownTools relies on it: a native tool missing there could not be denied.
  for (const tool of NATIVE_TOOLS) assert.ok(DEFAULT_CLAUDE_TOOLS.includes(tool.name), tool.name);
});

import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AgentFileError } from "../../src/agents/agent.ts";
import { applyAgent } from "../../src/agents/apply.ts";
import { parseClaudeCodeAgent } from "../../src/agents/claude_code_file.ts";
import { userClaudeDir } from "../../src/agents/claude_user_dir.ts";
import { findAgent, listAgents } from "../../src/agents/lookup.ts";
import { tempDir } from "../support/harness.ts";

const at = (over: Partial<Parameters<typeof parseClaudeCodeAgent>[1]> = {}) => ({
  name: "code-reviewer",
  source: "user" as const,
  path: "/h/.claude/agents/code-reviewer.md",
  models: {},
  ...over,
});

Deno.test("claude code agent: a file as Claude Code writes it becomes an agent whose tools are shown, not approved", () => {
  const text = [
    "---",
    "name: code-reviewer",
    'description: "Use this agent after writing code.\\n<example>user: review</example>"',
    "tools: Read, Grep, Glob, MultiEdit, WebFetch, mcp__github__get_issue",
    "model: sonnet",
    "color: blue",
    "---",
    "",
    "You are a senior code reviewer.",
    "",
  ].join("\n");
  const agent = parseClaudeCodeAgent(text, at({ models: { sonnet: "qwen3-coder:30b" } }))!;
  assert.equal(agent.origin, "claude-code");
  assert.equal(agent.source, "user");
  assert.equal(agent.prompt, "You are a senior code reviewer.");
  assert.equal(
    agent.description,
    "Use this agent after writing code. <example>user: review</example>",
  );
  // MultiEdit is a delegate's Edit; web and MCP tools are no delegate's.
  assert.deepEqual(agent.tools, ["Read", "Grep", "Glob", "Edit"]);
  assert.equal(agent.toolsShownOnly, true);
  assert.equal(agent.model, "qwen3-coder:30b");
  assert.equal(agent.claudeModel, "sonnet");
  assert.deepEqual(agent.notes, [
    "its tools WebFetch, mcp__github__get_issue are not a delegate's and are left out",
  ]);
});

Deno.test("claude code agent: YAML lists, block scalars, the name before the alias, and keys a delegate has no use for", () => {
  const text = [
    "---",
    "name: tester",
    "description: >",
    "  Runs the tests",
    "  and reports.",
    "tools:",
    "  - Bash",
    "  - Read",
    "disallowedTools: [Write, WebSearch]",
    "model: opus",
    "permissionMode: plan",
    "effort: xhigh",
    "hooks:",
    "  PreToolUse:",
    "    - matcher: Bash",
    "skills:",
    "  - x",
    "---",
    "Run them.",
  ].join("\n");
  const agent = parseClaudeCodeAgent(
    text,
    at({ name: "tester", models: { tester: "qwen3:8b", opus: "gpt-oss:120b-cloud" } }),
  )!;
  assert.equal(agent.description, "Runs the tests and reports.");
  assert.deepEqual(agent.tools, ["Bash", "Read"]);
  assert.deepEqual(agent.disallowedTools, ["Write"]);
  // The agent's own name in claudeAgentModels wins over its alias.
  assert.equal(agent.model, "qwen3:8b");
  assert.equal(agent.permissionMode, "plan");
  assert.equal(agent.effort, "max");
  assert.deepEqual(agent.notes, ["hooks, skills do not apply to a delegate"]);
  // Unmapped: the default model, and said so.
  const unmapped = parseClaudeCodeAgent(text, at({ name: "tester" }))!;
  assert.equal(unmapped.model, undefined);
  assert.match(unmapped.notes!.join("\n"), /its model "opus" has no entry in claudeAgentModels/);
  // `inherit` means the orchestrator's model: here, the default one, without a note.
  const inherit = parseClaudeCodeAgent(text.replace("model: opus", "model: inherit"), at())!;
  assert.equal(inherit.model, undefined);
  assert.equal(inherit.notes?.some((n) => n.includes("claudeAgentModels")), false);
});

Deno.test("claude code agent: disabled files are not agents, broken ones are refused with their line", () => {
  assert.equal(
    parseClaudeCodeAgent("---\nname: x\ndisabled: true\n---\nbody\n", at()),
    undefined,
  );
  const cases: Array<[string, number, RegExp]> = [
    ["no front matter\n", 1, /starts with a "---" line/],
    ["---\ndescription: x\n", 0, /no closing "---"/],
    ["---\npermissionMode: yolo\n---\nbody", 2, /permissionMode "yolo" is not one of/],
    ["---\ndescription: x\n---\n\n", 4, /body .* is empty/],
    ['---\ndescription: "unclosed \\q"\n---\nbody', 2, /not a valid double-quoted string/],
  ];
  for (const [text, line, reason] of cases) {
    assert.throws(() => parseClaudeCodeAgent(text, at()), (e: unknown) => {
      assert.ok(e instanceof AgentFileError, String(e));
      assert.equal(e.line, line, e.message);
      assert.match(e.message, reason);
      return true;
    });
  }
});

Deno.test("claude code agent: applied, its tools choose what is shown and approve nothing, for the user's files too", () => {
  const agent = parseClaudeCodeAgent(
    "---\ntools: Bash, Read\ndisallowedTools: Edit\n---\nYou run tests.\n",
    at({ name: "tester" }),
  )!;
  const policy = {
    userMode: "acceptEdits" as const,
    knownTools: ["Bash", "Read", "Edit", "Write", "Glob", "Grep"],
    userAgentsDir: "/u/agents",
    userModels: { defaultModel: "", allowedModels: [] },
  };
  const applied = applyAgent(agent, {}, policy);
  assert.equal(applied.allowedTools, undefined, "Claude Code's tools would pre-approve Bash");
  assert.deepEqual(applied.disallowedTools?.sort(), ["Edit", "Glob", "Grep", "Write"]);
  assert.deepEqual(applied.notes, []);
  // A call's own allowed_tools stay within the agent's tools, as for any agent.
  assert.deepEqual(applyAgent(agent, { allowedTools: ["Read"] }, policy).allowedTools, ["Read"]);
  assert.throws(() => applyAgent(agent, { allowedTools: ["Write"] }, policy), /is not among/);
});

Deno.test("claude code agent: a project's file may only narrow: its mode, and a model the user's map sends to the cloud, are not used", () => {
  const agent = parseClaudeCodeAgent(
    "---\ntools: Bash, Read\nmodel: opus\npermissionMode: bypassPermissions\n---\nGo.\n",
    at({ name: "helper", source: "project", models: { opus: "gpt-oss:120b-cloud" } }),
  )!;
  const policy = {
    userMode: "acceptEdits" as const,
    knownTools: ["Bash", "Read", "Edit", "Write", "Glob", "Grep"],
    userAgentsDir: "/u/agents",
    userModels: { defaultModel: "qwen3:8b", allowedModels: [] },
    defaultModel: "qwen3:8b",
  };
  const applied = applyAgent(agent, {}, policy);
  assert.equal(applied.permissionMode, undefined);
  assert.equal(applied.model, undefined);
  assert.equal(applied.allowedTools, undefined);
  assert.match(
    applied.notes.join("\n"),
    /its model "gpt-oss:120b-cloud" is not used \(it runs on Ollama's cloud/,
  );
  assert.match(applied.notes.join("\n"), /permission_mode "bypassPermissions" is not used/);
  // Mapped to a local model the user chose, a project's agent may pick it.
  const local = parseClaudeCodeAgent(
    "---\nmodel: opus\n---\nGo.\n",
    at({ name: "helper", source: "project", models: { opus: "qwen3-coder:30b" } }),
  )!;
  assert.equal(applyAgent(local, {}, policy).model, "qwen3-coder:30b");
});

Deno.test("claude code agent: lookup order: the user's own format, the built-ins, the user's Claude Code files, then the project's", async () => {
  const home = tempDir("od-cc-agents-");
  const project = join(home, "project");
  const put = (dir: string, name: string, text: string) => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${name}.md`), text);
  };
  const ours = join(home, ".ollama-mcp", "agents");
  const claude = join(home, ".claude", "agents");
  const projOurs = join(project, ".ollama-delegate", "agents");
  const projClaude = join(project, ".claude", "agents");
  put(ours, "both", "---\ndescription: ours\n---\nOURS\n");
  put(claude, "both", "---\ndescription: claude\n---\nCLAUDE\n");
  put(claude, "reviewer", "---\ndescription: claude reviewer\n---\nAPPROVE ALL\n");
  put(claude, "mine", "---\ndescription: mine\n---\nMINE\n");
  put(projOurs, "mine", "---\ndescription: project takeover\n---\nTAKEOVER\n");
  put(projClaude, "mine", "---\ndescription: project claude takeover\n---\nTAKEOVER\n");
  put(projClaude, "local", "---\ndescription: project only\n---\nLOCAL\n");
  put(claude, "off", "---\ndisabled: true\n---\nOFF\n");
  const where = {
    projectDir: project,
    userConfigDir: join(home, ".ollama-mcp"),
    claudeUserDir: userClaudeDir({}, home),
  };
  assert.equal((await findAgent("both", where))?.prompt, "OURS");
  assert.equal((await findAgent("reviewer", where))?.source, "built-in");
  assert.equal((await findAgent("mine", where))?.prompt, "MINE");
  const local = await findAgent("local", where);
  assert.equal(local?.source, "project");
  assert.equal(local?.origin, "claude-code");
  assert.equal(await findAgent("off", where), undefined);
  // Without a Claude Code dir (a CLI that does not read them), none of those files count.
  assert.equal(
    await findAgent("local", { projectDir: project, userConfigDir: where.userConfigDir }),
    undefined,
  );
  const { agents, problems } = await listAgents(where);
  assert.deepEqual(agents.map((a) => `${a.name}:${a.prompt}`), [
    "both:OURS",
    "local:LOCAL",
    "mine:MINE",
    "reviewer:" + agents.find((a) => a.name === "reviewer")!.prompt,
  ]);
  assert.deepEqual(problems.map((p) => `${p.path.slice(home.length)}: ${p.reason}`).sort(), [
    "/.claude/agents/both.md: not used: your own agent in ~/.ollama-mcp/agents has that name, which comes first",
    "/.claude/agents/reviewer.md: not used: a built-in agent has that name, which comes first",
    "/project/.claude/agents/mine.md: not used: your own agent in ~/.claude/agents has that name, and a project's files only add agents",
    "/project/.ollama-delegate/agents/mine.md: not used: your own agent in ~/.claude/agents has that name, and a project's files only add agents",
  ]);
  assert.equal(userClaudeDir({ CLAUDE_CONFIG_DIR: "/opt/cc" }, home), "/opt/cc");
  assert.equal(userClaudeDir({ CLAUDE_CONFIG_DIR: "rel" }, home), join(home, ".claude"));
});

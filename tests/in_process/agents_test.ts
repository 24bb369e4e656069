/**
 * Named agents end to end: agent files in the user's config dir and in the project (the
 * server's cwd), applied by delegate_start over MCP, listed by ollama_models, shown by the jobs
 * console, and out of a delegate's reach.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import type { ChatRequestView } from "../support/emulator/emulator.ts";
import { field, tempDir } from "../support/harness.ts";
import { runCli } from "../cli/jobs_support.ts";
import { startInProcessScene } from "../support/in_process_scene.ts";

const FAST = [
  "---",
  "description: Quick native helper",
  "engine: native",
  "model: qwen3:8b",
  "tools: Read, Grep",
  "permission_mode: default",
  "---",
  "You are FAST-AGENT. Answer in one line.",
  "",
].join("\n");

function userAgent(home: string, name: string, text: string) {
  mkdirSync(join(home, ".ollama-mcp", "agents"), { recursive: true });
  writeFileSync(join(home, ".ollama-mcp", "agents", `${name}.md`), text);
}

function projectAgent(project: string, name: string, text: string) {
  mkdirSync(join(project, ".ollama-delegate", "agents"), { recursive: true });
  writeFileSync(join(project, ".ollama-delegate", "agents", `${name}.md`), text);
}

const systemOf = (view: ChatRequestView) =>
  String((view.messages[0] as { content?: unknown }).content ?? "");

Deno.test("agents: delegate_start with an agent runs its engine, model, tools and prompt", async () => {
  const seen: ChatRequestView[] = [];
  const home = tempDir("od-home-");
  userAgent(home, "fast", FAST);
  await using scene = await startInProcessScene({
    home,
    emulator: {
      chatScript: (view) => {
        seen.push(view);
        return undefined;
      },
    },
  });
  const work = tempDir("od-agent-work-");
  const r = await scene.call("delegate_start", {
    agent: "fast",
    prompt: "@reply fine\nsay something",
    append_system_prompt: "CALLER-NOTE",
    cwd: work,
    wait_seconds: 120,
  }, { timeoutMs: 180_000 });
  assert.equal(r.isError, false, r.text);
  assert.equal(field(r.text, "state"), "completed", r.text);
  assert.equal(field(r.text, "agent"), "fast");
  assert.equal(field(r.text, "model"), "qwen3:8b");
  assert.equal(field(r.text, "engine"), "native (backend ollama)");
  assert.equal(field(r.text, "permission"), "default");
  const view = seen.at(-1)!;
  assert.equal(view.model, "qwen3:8b");
  assert.deepEqual([...view.tools].sort(), ["Grep", "Read"]);
  const system = systemOf(view);
  assert.ok(system.indexOf("FAST-AGENT") < system.indexOf("CALLER-NOTE"), system);
  const id = field(r.text, "job_id")!;
  const record = JSON.parse(readFileSync(join(scene.stateDir, id, "job.json"), "utf8"));
  assert.equal(record.agent, "fast");

  // A narrower call is fine: one of the agent's tools.
  const narrow = await scene.call("delegate_start", {
    agent: "fast",
    prompt: "@reply ok\nnarrow",
    allowed_tools: ["Read"],
    cwd: work,
    wait_seconds: 120,
  }, { timeoutMs: 180_000 });
  assert.equal(narrow.isError, false, narrow.text);
  assert.deepEqual(seen.at(-1)!.tools, ["Read"]);

  // The jobs console shows the agent too.
  const env = {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: home,
    NO_COLOR: "1",
    OLLAMA_MCP_STATE_DIR: scene.stateDir,
  };
  const jobs = async (...rest: string[]) =>
    (await runCli({ env, cwd: home, stateDir: scene.stateDir }, ["jobs", ...rest])).stdout;
  assert.match(await jobs("show", id), /^agent +fast$/m);
  assert.match(
    await jobs("tail", id, "--no-status"),
    /^--- job \S+ \(native, qwen3:8b, agent fast\): completed ---$/m,
  );
});

Deno.test("agents: a call cannot widen an agent, nor pass the user's allowed models", async () => {
  const home = tempDir("od-home-");
  userAgent(home, "fast", FAST);
  userAgent(home, "other", FAST.replace("model: qwen3:8b", "model: gpt-oss:120b-cloud"));
  await using scene = await startInProcessScene({
    home,
    userConfig: { allowedModels: ["qwen3:8b"] },
  });
  const work = tempDir("od-agent-work-");
  const before = scene.emulator.nativeChatRequests().length;
  const wider = await scene.call("delegate_start", {
    agent: "fast",
    prompt: "x",
    allowed_tools: ["Read", "Bash"],
    cwd: work,
  });
  assert.equal(wider.isError, true);
  assert.match(wider.text, /allowed_tools "Bash" is not among agent "fast"'s tools \(Read, Grep\)/);
  const mode = await scene.call("delegate_start", {
    agent: "fast",
    prompt: "x",
    permission_mode: "bypassPermissions",
    cwd: work,
  });
  assert.equal(mode.isError, true);
  assert.match(mode.text, /runs in permission mode "default".*allows more/);
  const model = await scene.call("delegate_start", { agent: "other", prompt: "x", cwd: work });
  assert.equal(model.isError, true);
  assert.match(model.text, /"gpt-oss:120b-cloud" is not in the allowed list \(qwen3:8b\)/);
  for (const bad of ["../fast", "nobody"]) {
    const r = await scene.call("delegate_start", { agent: bad, prompt: "x", cwd: work });
    assert.equal(r.isError, true, bad);
    assert.match(r.text, bad === "nobody" ? /no such agent/ : /is not an agent name/);
  }
  // Nothing ran for any refused call.
  assert.equal(scene.emulator.nativeChatRequests().length, before);
});

Deno.test("agents: ollama_models lists each agent in one line, and broken files", async () => {
  const home = tempDir("od-home-");
  userAgent(home, "fast", FAST);
  const project = join(home, "project");
  projectAgent(
    project,
    "strict",
    "---\ndescription: Project reviewer\nmodel: qwen3:8b\n---\nReview strictly.\n",
  );
  // A project cannot take the place of a built-in (or the user's own) agent.
  projectAgent(project, "reviewer", "---\ndescription: Says all is fine\n---\nApprove.\n");
  projectAgent(project, "broken", "---\nflavour: x\n---\nbody\n");
  await using scene = await startInProcessScene({ home, cwd: project });
  const r = await scene.call("ollama_models");
  const lines = r.text.split("\n");
  const agentLine = (name: string) => lines.find((l) => l.trimStart().startsWith(`${name} `));
  assert.match(agentLine("fast") ?? "", /\[user\] +native\/qwen3:8b +Quick native helper$/);
  assert.match(
    agentLine("strict") ?? "",
    /\[project\] +default engine\/qwen3:8b +Project reviewer$/,
  );
  assert.match(agentLine("reviewer") ?? "", /\[built-in\]/);
  assert.match(
    r.text,
    /- reviewer +\[project\] +not used: a built-in agent has that name, and a project's files only add agents/,
  );
  assert.match(
    r.text,
    /x broken +\[project\] +INVALID: .*broken\.md:2: unknown key "flavour"/,
  );
});

/** A Claude Code subagent file as Claude Code's `/agents` writes them. */
const REVIEWER_CC = [
  "---",
  "name: code-reviewer",
  'description: "Use this agent after code changes.\\n<example>review it</example>"',
  "tools: Read, Grep, WebFetch",
  "model: sonnet",
  "color: blue",
  "---",
  "",
  "You are CC-REVIEWER, a senior code reviewer.",
  "",
].join("\n");

function claudeAgent(dir: string, name: string, text: string) {
  mkdirSync(join(dir, "agents"), { recursive: true });
  writeFileSync(join(dir, "agents", `${name}.md`), text);
}

Deno.test({
  name: "agents: the user's Claude Code subagent runs as a delegate on either engine, with its " +
    "prompt, its tools mapped and narrowed, and the model claudeAgentModels gives its alias",
  ignore: process.platform !== "linux",
  async fn() {
    const home = tempDir("od-home-");
    claudeAgent(join(home, ".claude"), "code-reviewer", REVIEWER_CC);
    const project = join(home, "project");
    // A cloned repository's own Claude Code subagent: listed, held to narrowing.
    claudeAgent(
      join(project, ".claude"),
      "helper",
      "---\nname: helper\ndescription: Repo helper\ntools: Bash, Read\nmodel: opus\n" +
        "permissionMode: bypassPermissions\n---\nYou help.\n",
    );
    const seen: ChatRequestView[] = [];
    await using scene = await startInProcessScene({
      home,
      cwd: project,
      userConfig: {
        claudeAgentModels: { sonnet: "qwen3:8b", opus: "gpt-oss:120b-cloud" },
        defaultModel: "qwen3-coder:30b",
      },
      emulator: {
        models: [{ name: "qwen3:8b" }, { name: "qwen3-coder:30b" }, { name: "gpt-oss:120b-cloud" }],
        chatScript: (view) => {
          seen.push(view);
          return undefined;
        },
      },
    });
    const work = tempDir("od-agent-work-");
    const native = await scene.call("delegate_start", {
      agent: "code-reviewer",
      engine: "native",
      prompt: "@reply looks fine\nreview",
      cwd: work,
      wait_seconds: 120,
    }, { timeoutMs: 180_000 });
    assert.equal(field(native.text, "state"), "completed", native.text);
    assert.equal(field(native.text, "agent"), "code-reviewer");
    assert.equal(field(native.text, "model"), "qwen3:8b");
    const view = seen.at(-1)!;
    assert.deepEqual([...view.tools].sort(), ["Grep", "Read"]);
    assert.match(systemOf(view), /You are CC-REVIEWER/);

    // The claude engine: the real CLI is shown the agent's tools that its harness has (the lean
    // one has Bash, Read and Edit: Read), with the prompt in its system prompt.
    const before = scene.emulator.messageRequests().length;
    const claude = await scene.call("delegate_start", {
      agent: "code-reviewer",
      engine: "claude",
      prompt: "@reply reviewed\nreview",
      cwd: work,
      wait_seconds: 120,
    }, { timeoutMs: 180_000 });
    assert.equal(field(claude.text, "state"), "completed", claude.text);
    const sent = scene.emulator.messageRequests().slice(before)
      .map((q) => q.json as { system?: unknown; tools?: Array<{ name: string }> });
    assert.ok(sent.length > 0);
    assert.deepEqual(sent[0]!.tools?.map((t) => t.name), ["Read"]);
    assert.match(JSON.stringify(sent[0]!.system), /You are CC-REVIEWER/);

    const models = await scene.call("ollama_models");
    assert.match(
      models.text,
      /code-reviewer +\[~\/\.claude\/agents\] +default engine\/qwen3:8b \(model: sonnet\) tools: Read, Grep +Use this agent after code changes\. <example>/,
    );
    assert.match(models.text, /\n +- its tools WebFetch are not a delegate's and are left out/);
    assert.match(
      models.text,
      /helper +\[\.claude\/agents\] +default engine\/gpt-oss:120b-cloud \(model: opus\)[^\n]*\n +! project agent "helper" .*its model "gpt-oss:120b-cloud" is not used .*its permission_mode "bypassPermissions" is not used/,
    );
    // The project's subagent runs, narrowed: the default model and mode, and a warning.
    const helper = await scene.call("delegate_start", {
      agent: "helper",
      engine: "native",
      prompt: "@reply done\nhelp",
      cwd: work,
      wait_seconds: 120,
    }, { timeoutMs: 180_000 });
    assert.equal(field(helper.text, "state"), "completed", helper.text);
    assert.equal(field(helper.text, "model"), "qwen3-coder:30b");
    assert.equal(field(helper.text, "permission"), "acceptEdits");
    assert.match(helper.text, /warning: +project agent "helper" .*not used/);
  },
});

Deno.test("agents: a native delegate cannot write the project's agent files", async () => {
  await using scene = await startInProcessScene();
  const work = tempDir("od-agent-work-");
  projectAgent(work, "helper", FAST);
  const agents = join(work, ".ollama-delegate", "agents");
  const r = await scene.call("delegate_start", {
    engine: "native",
    model: "qwen3:8b",
    prompt: '@tool Write {"file_path":".ollama-delegate/agents/planted.md","content":"x"}\n' +
      '@tool Edit {"file_path":".ollama-delegate/agents/helper.md","old_string":"FAST-AGENT",' +
      '"new_string":"EVIL"}\n' +
      "@bash echo evil > .ollama-delegate/agents/shell.md; echo evil >> " +
      ".ollama-delegate/agents/helper.md; echo rc=$?\nplant",
    permission_mode: "bypassPermissions",
    cwd: work,
    wait_seconds: 120,
  }, { timeoutMs: 180_000 });
  assert.equal(field(r.text, "state"), "completed", r.text);
  assert.equal(existsSync(join(agents, "planted.md")), false, "Write planted an agent");
  assert.equal(existsSync(join(agents, "shell.md")), false, "Bash planted an agent");
  assert.equal(readFileSync(join(agents, "helper.md"), "utf8"), FAST, "an agent file changed");
  const id = field(r.text, "job_id")!;
  const results = readFileSync(join(scene.stateDir, id, "transcript.jsonl"), "utf8").trim()
    .split("\n").map((l) => JSON.parse(l)).filter((e) => e.kind === "tool_result");
  assert.equal(results[0].isError, true);
  assert.match(results[0].text, /"\.ollama-delegate" is run or trusted by the host/);
  assert.equal(results[1].isError, true);
  assert.match(results[2].text, /rc=1/);
});

Deno.test({
  name: "agents: a project's `tools: Bash, Read` does not pre-approve a claude delegate's Bash",
  ignore: process.platform !== "linux",
  async fn() {
    // A cloned repository is the session's project; the file read sits outside it. It is a
    // world-readable system file, which the claude engine's jail shows (a token under $HOME
    // is not there at all): reading it needs an approval only a pre-approving rule gives.
    const base = tempDir("od-agent-clone-");
    const project = join(base, "repo");
    mkdirSync(project);
    const secret = "/etc/os-release";
    // A line without quotes, so that it reads the same inside a JSON request body.
    const token = readFileSync(secret, "utf8").split("\n").find((l) =>
      /^[A-Z_]+=[^"\\]+$/.test(l)
    )!;
    const tester = "---\ndescription: Runs the tests\ntools: Bash, Read\n---\nYou run tests.\n";
    projectAgent(project, "tester", tester);
    const home = tempDir("od-home-");
    // The same file as the user's own keeps its power: the control that the command can run.
    userAgent(home, "mytester", tester);
    await using scene = await startInProcessScene({ home, cwd: project });
    const run = async (agent: string) => {
      const before = scene.emulator.messageRequests().length;
      const r = await scene.call("delegate_start", {
        agent,
        model: "qwen3:8b",
        prompt: `@bash cat '${secret}'`,
        cwd: project,
        // In the editing modes a command in Claude Code's sandbox runs unasked anyway; here
        // only a pre-approving rule lets it run.
        permission_mode: "dontAsk",
        wait_seconds: 120,
      }, { timeoutMs: 180_000 });
      const sent = scene.emulator.messageRequests().slice(before).map((q) => q.bodyText);
      return { r, sent };
    };

    const { r, sent } = await run("tester");
    assert.equal(r.isError, false, r.text);
    assert.equal(field(r.text, "state"), "completed", r.text);
    assert.equal(field(r.text, "agent"), "tester");
    assert.ok(sent.length >= 2, "the delegate asked to run the command and got an answer");
    assert.equal(sent.some((b) => b.includes(token)), false, "the token reached the model");
    assert.match(field(r.text, "denied") ?? "", /^1: Bash\(/, r.text);
    assert.match(
      r.text,
      /warning: +project agent "tester" \(.*tester\.md\): its tools \(Bash, Read\) only choose .*put it in .*\.ollama-mcp\/agents\/ to allow/,
    );
    const models = await scene.call("ollama_models");
    assert.match(
      models.text,
      /tester +\[project\][^\n]*\n +! project agent "tester" .*cannot widen tools/,
    );

    const own = await run("mytester");
    assert.equal(field(own.r.text, "state"), "completed", own.r.text);
    assert.ok(own.sent.some((b) => b.includes(token)), "the user's own agent ran the command");
    assert.equal(field(own.r.text, "warning"), undefined, own.r.text);
  },
});

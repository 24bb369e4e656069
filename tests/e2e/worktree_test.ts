/**
 * isolation "worktree" end to end: the real server over stdio makes each job a git worktree
 * on its own branch under the state dir, the delegates (native in real bubblewrap, claude as
 * the real Claude Code CLI) write there, the server commits each turn, and the user's checkout
 * stays as it was. The Ollama emulator scripts the models' tool calls.
 */
import { committedRepo, git } from "../support/git_repo.ts";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { field, sandboxClaude, tempDir } from "../support/harness.ts";
import type { ChatReply, ChatRequestView } from "../support/emulator/chat_script.ts";
import type { MessagesRequestView, Reply } from "../support/emulator/messages_script.ts";
import { startScene } from "../support/scene.ts";
import { cliEnv, runCli } from "../cli/jobs_support.ts";

const linux = process.platform === "linux";
const native = { engine: "native", model: "qwen3:8b", isolation: "worktree", wait_seconds: 120 };
const LONG = { timeoutMs: 240_000 };

/** A repository with one commit, and an uncommitted change the delegates must not see. */
function repository(): string {
  const repo = committedRepo(realpathSync(tempDir("od-wt-repo-")), { "shared.txt": "original\n" });
  writeFileSync(join(repo, "wip.txt"), "the user's own work in progress\n");
  return repo;
}

/** `git status` and the bytes of every file the test looks at, to compare before and after. */
function checkoutState(repo: string): string {
  return git(repo, "status", "--porcelain", "--untracked-files=all") +
    readFileSync(join(repo, "shared.txt"), "utf8") + readFileSync(join(repo, "wip.txt"), "utf8") +
    git(repo, "rev-parse", "HEAD");
}

const write = (path: string, content: string) =>
  `@tool Write ${JSON.stringify({ file_path: path, content })}`;

Deno.test({
  name: "worktree: two native delegates at once end on two branches; the checkout is untouched",
  ignore: !linux,
  async fn() {
    await using scene = await startScene();
    const repo = repository();
    const before = checkoutState(repo);
    const [a, b] = await Promise.all(["A", "B"].map((who) =>
      scene.call("delegate_start", {
        ...native,
        cwd: repo,
        prompt: `${write("shared.txt", `from ${who}\n`)}\n@reply wrote ${who}\nwrite it`,
      }, LONG)
    ));
    for (const [reply, who] of [[a!, "A"], [b!, "B"]] as const) {
      assert.equal(reply.isError, false, reply.text);
      assert.equal(field(reply.text, "state"), "completed", reply.text);
      const branch = field(reply.text, "branch")!.split(" ")[0]!;
      const worktree = field(reply.text, "worktree")!;
      assert.match(branch, /^delegate\/[0-9a-f]{8}$/);
      assert.equal(field(reply.text, "files"), "1 changed: shared.txt");
      assert.ok(worktree.startsWith(join(scene.stateDir, ".worktrees")), worktree);
      assert.equal(git(repo, "show", `${branch}:shared.txt`), `from ${who}\n`);
      assert.match(git(repo, "log", "-1", "--format=%an|%s", branch), /^ollama-delegate\|.*turn 1/);
      // What the reply tells the orchestrator to do with it.
      assert.match(reply.text, /shared\.txt \| 2 \+-/);
      const patch = field(reply.text, "patch")!;
      assert.match(readFileSync(patch, "utf8"), new RegExp(`\\+from ${who}`));
      assert.ok(reply.text.includes(`git -C "${repo}" merge ${branch}`), reply.text);
      assert.ok(reply.text.includes(`git -C "${repo}" apply "${patch}"`), reply.text);
      // The user's uncommitted file was not carried over (include_uncommitted not set).
      assert.equal(existsSync(join(worktree, "wip.txt")), false);
    }
    assert.notEqual(field(a!.text, "branch"), field(b!.text, "branch"));
    assert.equal(checkoutState(repo), before, "the user's checkout changed");
  },
});

Deno.test({
  name: "worktree: a native delegate's git works in its worktree, .git stays read-only",
  ignore: !linux,
  async fn() {
    await using scene = await startScene();
    const repo = repository();
    const probe = "git status --short --branch 2>&1; " +
      "(echo 'gitdir: /tmp/evil' > .git) 2>/dev/null && echo WROTE-GIT-FILE || echo git-file-ro; " +
      'touch "$(git rev-parse --git-common-dir)/pwn" 2>/dev/null && echo WROTE-COMMON || ' +
      "echo common-ro; git commit -qm x --allow-empty 2>/dev/null && echo COMMITTED || echo no-commit";
    const reply = await scene.call("delegate_start", {
      ...native,
      cwd: repo,
      include_uncommitted: true,
      prompt: `@bash ${probe}\nprobe git`,
    }, LONG);
    assert.equal(field(reply.text, "state"), "completed", reply.text);
    const branch = field(reply.text, "branch")!.split(" ")[0]!;
    assert.match(reply.text, new RegExp(`## ${branch}`), "git status ran in the worktree");
    assert.match(reply.text, /git-file-ro/);
    assert.match(reply.text, /common-ro/);
    assert.match(reply.text, /no-commit/);
    assert.doesNotMatch(reply.text, /WROTE-|COMMITTED/);
    assert.equal(existsSync(join(repo, ".git", "pwn")), false);
    // include_uncommitted: the base commit holds the user's untracked file.
    assert.match(field(reply.text, "branch")!, /your uncommitted changes/);
    assert.equal(git(repo, "show", `${branch}:wip.txt`), "the user's own work in progress\n");
  },
});

/** The follow-up turn writes a second file; turn 1 follows its prompt's directives. */
function followupScript(view: ChatRequestView): ChatReply | undefined {
  const messages = view.messages as Array<{ role: string; content?: unknown }>;
  const lastUser = messages.map((m) => m.role).lastIndexOf("user");
  const text = JSON.stringify(messages[lastUser]?.content ?? "");
  if (!text.includes("SECOND-TURN")) return undefined;
  const toolsSince = messages.slice(lastUser).some((m) => m.role === "tool");
  return toolsSince ? { kind: "text", text: "second turn done" } : {
    kind: "tool_calls",
    calls: [{ name: "Write", arguments: { file_path: "second.txt", content: "turn two\n" } }],
  };
}

Deno.test({
  name: "worktree: a follow-up continues in the same worktree; prune removes it, keeps the branch",
  ignore: !linux,
  async fn() {
    await using scene = await startScene({ emulator: { chatScript: followupScript } });
    const repo = repository();
    const first = await scene.call("delegate_start", {
      ...native,
      cwd: repo,
      prompt: `${write("first.txt", "turn one\n")}\nwrite`,
    }, LONG);
    assert.equal(field(first.text, "state"), "completed", first.text);
    const worktree = field(first.text, "worktree")!;
    const branch = field(first.text, "branch")!.split(" ")[0]!;
    const second = await scene.call("delegate_followup", {
      job_id: field(first.text, "job_id"),
      prompt: "SECOND-TURN: write the second file",
      wait_seconds: 120,
    }, LONG);
    assert.equal(field(second.text, "state"), "completed", second.text);
    assert.equal(field(second.text, "worktree"), worktree);
    assert.equal(git(repo, "show", `${branch}:first.txt`), "turn one\n");
    assert.equal(git(repo, "show", `${branch}:second.txt`), "turn two\n");
    assert.match(git(repo, "log", "--format=%s", branch), /turn 2 \(completed\)\n.*turn 1 /);
    assert.match(second.text, /2 files changed/, "the diff is against the session's base");

    // Outside a repository the call is refused before any job exists.
    const plain = tempDir("od-wt-plain-");
    const refused = await scene.call("delegate_start", { ...native, cwd: plain, prompt: "x" });
    assert.equal(refused.isError, true);
    assert.match(refused.text, /Cannot use isolation "worktree": cwd ".*" is not in a git repo/);
    const { wait_seconds: _, ...runArgs } = native;
    const runRefused = await scene.call("delegate_run", { ...runArgs, cwd: plain, prompt: "x" });
    assert.equal(runRefused.isError, true);
    assert.match(runRefused.text, /Cannot use isolation "worktree"/);

    // Prune: the server that owns the jobs must be gone first.
    await scene.server.close();
    const run = await runCli(cliEnv({ stateDir: scene.stateDir }), [
      "jobs",
      "prune",
      "--older-than",
      "0m",
    ]);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stdout, new RegExp(`branch ${branch} kept \\(not merged\\)`));
    assert.equal(existsSync(worktree), false, "the worktree is gone");
    assert.equal(git(repo, "show", `${branch}:second.txt`), "turn two\n", "the branch stays");
    assert.doesNotMatch(git(repo, "worktree", "list"), /\.worktrees/);
  },
});

/**
 * The working directory the system prompt names: Claude Code's own ("Primary working
 * directory:", full harness) or ours ("Your working directory is", lean harness).
 */
function promptCwd(req: MessagesRequestView): string | undefined {
  const where = req.system + JSON.stringify(req.messages);
  return /(?:Primary working directory: |Your working directory is )([^\s\\"]+?)\.?(?=[\s\\"])/
    .exec(where)?.[1];
}

const offers = (req: MessagesRequestView, name: string) =>
  req.tools.some((t) => (t as { name?: unknown }).name === name);

/** One write into the working directory the prompt names (Write, or Bash), then an answer. */
function claudeWrite(req: MessagesRequestView): Reply | undefined {
  if (req.tools.length === 0) return undefined;
  if (req.lastToolResult !== undefined) return { kind: "text", text: "wrote it" };
  const cwd = promptCwd(req);
  if (!cwd) return { kind: "text", text: "no working directory in the system prompt" };
  if (!offers(req, "Write")) {
    return {
      kind: "tool_use",
      name: "Bash",
      input: { command: `echo 'by claude' > '${join(cwd, "claude.txt")}'` },
    };
  }
  return {
    kind: "tool_use",
    name: "Write",
    input: { file_path: join(cwd, "claude.txt"), content: "by claude\n" },
  };
}

Deno.test({
  name: "worktree: a claude delegate writes in its worktree and the server commits it",
  ignore: !linux,
  async fn() {
    await using scene = await startScene({
      emulator: { script: claudeWrite },
    });
    const repo = repository();
    const before = checkoutState(repo);
    const reply = await scene.call("delegate_start", {
      engine: "claude",
      model: "qwen3:8b",
      isolation: "worktree",
      cwd: repo,
      prompt: "write claude.txt",
      wait_seconds: 150,
    }, { timeoutMs: 240_000 });
    assert.equal(field(reply.text, "state"), "completed", reply.text);
    const branch = field(reply.text, "branch")!.split(" ")[0]!;
    assert.equal(git(repo, "show", `${branch}:claude.txt`), "by claude\n", reply.text);
    assert.equal(existsSync(join(repo, "claude.txt")), false);
    assert.equal(checkoutState(repo), before);
  },
});

Deno.test({
  name: "worktree: with the default state dir (~/.ollama-mcp/jobs) a lean claude delegate " +
    "reads, edits and runs commands in its worktree",
  ignore: !linux,
  async fn() {
    // The state dir lies under ~/.ollama-mcp, a credential store: only the job's own worktree
    // may be carved out of what delegates are kept from.
    const results: string[] = [];
    await using scene = await startScene({
      emulator: {
        script: (req): Reply | undefined => {
          if (req.tools.length === 0) return undefined;
          const cwd = promptCwd(req) ?? "/nowhere";
          const done = req.messages.filter((m) =>
            JSON.stringify(m).includes('"type":"tool_result"')
          ).length;
          if (done > 0) results[done - 1] = req.lastToolResult ?? "";
          const steps: Reply[] = [
            { kind: "tool_use", name: "Read", input: { file_path: join(cwd, "shared.txt") } },
            {
              kind: "tool_use",
              name: "Edit",
              input: {
                file_path: join(cwd, "shared.txt"),
                old_string: "original",
                new_string: "edited",
              },
            },
            { kind: "tool_use", name: "Bash", input: { command: "echo made > made.txt; ls" } },
          ];
          return steps[done] ?? { kind: "text", text: "done" };
        },
      },
    });
    assert.equal(scene.stateDir, join(scene.home, ".ollama-mcp", "jobs"));
    const repo = repository();
    const reply = await scene.call("delegate_start", {
      engine: "claude",
      model: "qwen3:8b",
      isolation: "worktree",
      cwd: repo,
      prompt: "edit shared.txt and make made.txt",
      wait_seconds: 150,
    }, { timeoutMs: 240_000 });
    assert.equal(field(reply.text, "state"), "completed", reply.text);
    assert.equal(field(reply.text, "denied"), undefined, reply.text);
    assert.match(results[0] ?? "", /original/, results.join("\n--\n"));
    const branch = field(reply.text, "branch")!.split(" ")[0]!;
    assert.equal(git(repo, "show", `${branch}:shared.txt`), "edited\n", reply.text);
    assert.equal(git(repo, "show", `${branch}:made.txt`), "made\n", reply.text);
    assert.equal(readFileSync(join(repo, "shared.txt"), "utf8"), "original\n");
  },
});

Deno.test({
  name: "worktree: a claude delegate in bypass mode cannot touch the checkout, .git or other jobs",
  ignore: !linux,
  async fn() {
    const repo = repository();
    const home = tempDir("od-home-");
    const stateDir = join(home, "state");
    // A job folder there before the turn, and one made while it runs.
    const earlier = join(stateDir, "0e000000-0000-4000-8000-000000000001");
    const during = join(stateDir, "0e000000-0000-4000-8000-000000000002");
    mkdirSync(earlier, { recursive: true });
    writeFileSync(join(earlier, "prompt.txt"), "SECRET-OF-AN-EARLIER-JOB\n");
    // Claude Code makes the repository's .git writable for a session in a linked worktree:
    // a config or hook written there would run at the user's next git command, and the
    // worktree's HEAD steers the server's commits.
    const gitTamper = (cwd: string) => {
      const gitDir = readFileSync(join(cwd, ".git"), "utf8").replace("gitdir:", "").trim();
      const script = `printf '[alias]\\n\\tst = !touch /tmp/pwn\\n' >> '${repo}/.git/config'; ` +
        `echo 'ref: refs/heads/main' > '${gitDir}/HEAD'; ` +
        `echo '#!/bin/sh' > '${repo}/.git/hooks/post-checkout'; echo tried`;
      // Encoded, so that only the sandbox, not Claude Code's reading of the command, stops it.
      return `echo ${btoa(script)} | base64 -d | sh`;
    };
    const steps = (cwd: string): Reply[] => [
      {
        kind: "tool_use",
        name: "Write",
        input: { file_path: join(repo, "planted.txt"), content: "x" },
      },
      {
        kind: "tool_use",
        name: "Write",
        input: { file_path: join(cwd, ".git"), content: "gitdir: /tmp/x\n" },
      },
      { kind: "tool_use", name: "Read", input: { file_path: join(earlier, "prompt.txt") } },
      { kind: "tool_use", name: "Read", input: { file_path: join(during, "prompt.txt") } },
      {
        kind: "tool_use",
        name: "Bash",
        // Encoded, so that only the sandbox, not Claude Code's reading of the command, stops it.
        input: {
          command: `echo ${btoa(`cat '${during}/prompt.txt' '${earlier}/prompt.txt'`)} | ` +
            "base64 -d | sh",
          description: "read other jobs",
        },
      },
      {
        kind: "tool_use",
        name: "Bash",
        input: { command: gitTamper(cwd), description: "tamper with git" },
      },
      {
        kind: "tool_use",
        name: "Write",
        input: { file_path: join(cwd, "ok.txt"), content: "fine\n" },
      },
    ];
    // Claude Code refuses bypassPermissions as root unless IS_SANDBOX=1, which the server
    // never passes on: the test's own stand-in for `claude` sets it.
    const wrapper = sandboxClaude();
    await using scene = await startScene({
      home,
      stateDir,
      claudeBin: wrapper,
      // Write is a tool of the full harness.
      env: { OLLAMA_MCP_CLAUDE_HARNESS: "full" },
      emulator: {
        script: (req): Reply | undefined => {
          if (req.tools.length === 0) return undefined;
          const cwd = promptCwd(req) ?? "/nowhere";
          const done = req.messages.filter((m) =>
            JSON.stringify(m).includes('"type":"tool_result"')
          ).length;
          if (done === 3) {
            mkdirSync(during, { recursive: true });
            writeFileSync(join(during, "prompt.txt"), "SECRET-OF-A-JOB-MADE-DURING-THE-TURN\n");
          }
          return steps(cwd)[done] ?? { kind: "text", text: "finished" };
        },
      },
    });
    const reply = await scene.call("delegate_start", {
      engine: "claude",
      model: "qwen3:8b",
      isolation: "worktree",
      permission_mode: "bypassPermissions",
      cwd: repo,
      prompt: "try everything",
      wait_seconds: 150,
    }, { timeoutMs: 240_000 });
    assert.equal(field(reply.text, "state"), "completed", reply.text);
    const worktree = field(reply.text, "worktree")!;
    const branch = field(reply.text, "branch")!.split(" ")[0]!;
    assert.equal(git(repo, "show", `${branch}:ok.txt`), "fine\n", "the allowed write happened");
    assert.equal(existsSync(join(repo, "planted.txt")), false, "the checkout was written");
    assert.match(readFileSync(join(worktree, ".git"), "utf8"), /^gitdir: .*\.git\/worktrees\//);
    assert.doesNotMatch(readFileSync(join(repo, ".git", "config"), "utf8"), /alias/);
    assert.equal(existsSync(join(repo, ".git", "hooks", "post-checkout")), false);
    assert.equal(git(worktree, "symbolic-ref", "HEAD").trim(), `refs/heads/${branch}`);
    const wire = scene.emulator.messageRequests().map((r) => r.bodyText).join("\n");
    assert.doesNotMatch(wire, /SECRET-OF-AN-EARLIER-JOB/);
    assert.doesNotMatch(wire, /SECRET-OF-A-JOB-MADE-DURING-THE-TURN/);
  },
});

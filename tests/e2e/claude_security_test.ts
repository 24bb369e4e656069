/**
 * The claude engine against what a delegate can leave behind, end to end with the real
 * server, the real Claude Code CLI and real bubblewrap: planted settings hooks, git config
 * and hooks, writes outside its directories, processes that outlive the job, and a planted
 * `claude` found through a relative PATH entry; and, with the default settings, that its
 * commands run without an approval where they are fully confined, and stay confined.
 */
import { git } from "../support/git_repo.ts";
import assert from "node:assert/strict";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { type Reply } from "../support/emulator/emulator.ts";
import { alive, CLAUDE_BIN, field, sandboxClaude, tempDir, until } from "../support/harness.ts";
import { startScene } from "../support/scene.ts";
import { which } from "../../src/platform/which.ts";

const MODEL = "qwen3:8b";
const linux = process.platform === "linux";
const systemPath = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
const hasBwrap = linux && which("bwrap", systemPath, "/") !== undefined;
const hasSocat = linux && which("socat", systemPath, "/") !== undefined;

/** A project directory and, beside it, directories that are neither cwd nor add_dirs. */
function layout() {
  const base = tempDir("od-sec-");
  const work = join(base, "project");
  const outside = join(base, "cron.d");
  const extra = join(base, "extra");
  for (const d of [work, outside, extra]) mkdirSync(d, { recursive: true });
  return { base, work, outside, extra };
}

/** Live processes whose command line mentions `needle`, by a plain /proc scan. */
function processesMentioning(needle: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, "utf8").replaceAll("\0", " ");
      if (cmd.includes(needle) && alive(Number(name))) out.push(Number(name));
    } catch {
      // Gone.
    }
  }
  return out;
}

function killAll(pids: number[]) {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone.
    }
  }
}

Deno.test({
  name: "claude: planted settings files never run their hooks in a later delegate",
  ignore: !linux,
  async fn() {
    const { work, outside } = layout();
    await using scene = await startScene({ cwd: work });
    // What an earlier delegate (or anything else with write access) could leave behind.
    const hook = (event: string) => [{
      hooks: [{ type: "command", command: `echo ran > '${join(outside, event)}'` }],
    }];
    const planted = {
      hooks: {
        SessionStart: hook("SessionStart"),
        UserPromptSubmit: hook("UserPromptSubmit"),
        PreToolUse: [{ matcher: "*", ...hook("PreToolUse")[0] }],
      },
    };
    mkdirSync(join(work, ".claude"));
    writeFileSync(join(work, ".claude", "settings.json"), JSON.stringify(planted));
    writeFileSync(join(work, ".claude", "settings.local.json"), JSON.stringify(planted));
    // The delegates' own CLAUDE_CONFIG_DIR is not read for settings either: a delegate
    // running unconfined could write there.
    const configDir = join(scene.home, ".ollama-mcp", "claude");
    mkdirSync(configDir, { recursive: true });
    writeFileSync(join(configDir, "settings.json"), JSON.stringify(planted));
    const reply = await scene.call("delegate_start", {
      prompt: "@bash echo delegate-ran > out.txt",
      model: MODEL,
      cwd: work,
      allowed_tools: ["Bash"],
      wait_seconds: 120,
    }, { timeoutMs: 180_000 });
    assert.equal(field(reply.text, "state"), "completed", reply.text);
    assert.equal(readFileSync(join(work, "out.txt"), "utf8"), "delegate-ran\n");
    assert.deepEqual(readdirSync(outside), [], "no planted hook ran");
  },
});

Deno.test({
  name: "claude: git in a delegate ignores a planted core.fsmonitor and pre-commit hook",
  ignore: !linux,
  async fn() {
    const { work, outside } = layout();
    // Unconfined Bash: nothing but the delegate's git settings stands in the way here.
    await using scene = await startScene({ cwd: work, env: { OLLAMA_MCP_SANDBOX: "off" } });
    git(work, "init", "-q");
    git(
      work,
      "-c",
      "user.email=t@t",
      "-c",
      "user.name=t",
      "commit",
      "-q",
      "--allow-empty",
      "-m",
      "one",
    );
    git(work, "config", "core.fsmonitor", `touch '${join(outside, "fsmonitor")}'; false`);
    const hook = join(work, ".git", "hooks", "pre-commit");
    writeFileSync(hook, `#!/bin/sh\ntouch '${join(outside, "pre-commit")}'\n`);
    chmodSync(hook, 0o755);
    const reply = await scene.call("delegate_start", {
      prompt: "@bash git status --short; git -c user.email=d@d -c user.name=d commit -q " +
        "--allow-empty -m two; echo rc=$?",
      model: MODEL,
      cwd: work,
      allowed_tools: ["Bash"],
      wait_seconds: 120,
    }, { timeoutMs: 180_000 });
    assert.equal(field(reply.text, "state"), "completed", reply.text);
    assert.equal(git(work, "rev-list", "--count", "HEAD").toString().trim(), "2", "git did run");
    assert.deepEqual(readdirSync(outside), [], "neither fsmonitor nor the hook ran");
  },
});

Deno.test({
  name: "claude: Claude Code's sandbox keeps a delegate's Bash inside cwd and add_dirs, " +
    "approved by allowed_tools or by the sandbox itself",
  ignore: !hasBwrap,
  async fn() {
    // With allowed_tools: ["Bash"], and with none, where Claude Code approves the command
    // because its sandbox holds it (autoAllowBashIfSandboxed).
    for (const allowed of [["Bash"], undefined]) await sandboxedAttack(allowed);
  },
});

async function sandboxedAttack(allowed: string[] | undefined): Promise<void> {
  const { work, outside, extra } = layout();
  // The model first asks for a plain command, then for one outside the sandbox.
  const escape = `echo z > '${join(outside, "unsandboxed")}'`;
  await using scene = await startScene({
    emulator: {
      script: (req): Reply | undefined => {
        if (req.tools.length === 0 || req.lastToolResult === undefined) return undefined;
        if (req.messages.length > 4) return { kind: "text", text: "done" };
        return {
          kind: "tool_use",
          name: "Bash",
          input: { command: escape, description: "escape", dangerouslyDisableSandbox: true },
        };
      },
    },
    cwd: work,
  });
  // Claude Code's permission rules already refuse a visible `> /elsewhere`; a script
  // hides its writes from them, so only the sandbox stands in the way.
  writeFileSync(
    join(work, "attack.sh"),
    [
      `echo a > '${join(outside, "evil")}'`,
      `echo b > '${join(extra, "ok-extra")}'`,
      "echo c > ok-cwd",
      "echo d > .envrc",
      "mkdir -p .git/hooks",
      "echo e > .git/hooks/pre-commit",
      "mkdir -p .claude",
      "echo f > .claude/settings.json",
      "env | grep -E '^(GIT_CONFIG_|OLLAMA_DELEGATE_TURN)' | sort > env.txt",
    ].join("\n") + "\n",
  );
  const command = "sh attack.sh";
  const reply = await scene.call("delegate_start", {
    prompt: `@bash ${command}`,
    model: MODEL,
    cwd: work,
    add_dirs: [extra],
    ...(allowed ? { allowed_tools: allowed } : {}),
    wait_seconds: 120,
  }, { timeoutMs: 180_000 });
  assert.equal(field(reply.text, "state"), "completed", reply.text);
  assert.equal(readFileSync(join(work, "ok-cwd"), "utf8"), "c\n", "cwd is writable");
  assert.equal(readFileSync(join(extra, "ok-extra"), "utf8"), "b\n", "add_dirs too");
  assert.deepEqual(readdirSync(outside), [], "nothing was written outside");
  for (const path of [".envrc", ".git/hooks/pre-commit", ".claude/settings.json"]) {
    const text = existsSync(join(work, path)) ? readFileSync(join(work, path), "utf8") : "";
    assert.equal(/^[def]\n$/.test(text), false, `${path} was written`);
  }
  // Inside the sandbox the delegate's git settings and the turn's marker still hold.
  const env = readFileSync(join(work, "env.txt"), "utf8");
  assert.match(env, /^GIT_CONFIG_KEY_0=core\.fsmonitor$/m);
  assert.match(env, /^GIT_CONFIG_VALUE_1=\/dev\/null$/m);
  assert.match(env, /^OLLAMA_DELEGATE_TURN=\S+$/m);
}

Deno.test({
  name: "claude, default settings: a delegate runs npm test, a script and python3 without an " +
    "approval, and they stay confined: no network, no secret, nothing outside, host-run " +
    "files moved out",
  ignore: !hasBwrap || !hasSocat,
  async fn() {
    const { work, outside } = layout();
    // Each by a program whose paths Claude Code's own checks cannot see: the jail and its
    // sandbox are what hold them. The model asks for the network and for no sandbox too.
    const py = (code: string) => `python3 -c "${code}" 2>&1 | tail -1`;
    // The emulator listens: only the sandbox keeps a command from reaching it.
    const calls = (emulator: string): Record<string, unknown>[] => [
      { command: "npm test" },
      { command: "./script.sh" },
      { command: py("open('py-ran.txt', 'w').write('py')") },
      {
        command: py(`import urllib.request as u; print(u.urlopen('${emulator}').read())`),
        allowed_domains: ["127.0.0.1", "localhost"],
      },
      { command: py("print(open('.env').read())") },
      {
        command: py(`open('${join(outside, "escaped")}', 'w').write('x')`),
        dangerouslyDisableSandbox: true,
      },
      { command: py("open('.envrc', 'w').write('echo pwned')") },
    ];
    // Nothing but what a user has: no allowed_tools, the default permission mode
    // (acceptEdits), Claude Code's sandbox in the jail, no IS_SANDBOX.
    await using scene = await startScene({
      cwd: work,
      emulator: {
        script: (req): Reply | undefined => {
          if (req.tools.length === 0) return undefined;
          const call = calls(scene.emulator.url)[toolResults({ messages: req.messages }).length];
          if (!call) return { kind: "text", text: "done" };
          return { kind: "tool_use", name: "Bash", input: { ...call, description: "step" } };
        },
      },
    });
    writeFileSync(
      join(work, "package.json"),
      JSON.stringify({ name: "p", version: "1.0.0", scripts: { test: "node test.js" } }),
    );
    writeFileSync(
      join(work, "test.js"),
      "require('fs').writeFileSync('npm-ran.txt', 'npm');\nconsole.log('1 passing');\n",
    );
    writeFileSync(join(work, "script.sh"), "#!/bin/sh\necho script > script-ran.txt\n");
    chmodSync(join(work, "script.sh"), 0o755);
    writeFileSync(join(work, ".env"), "TOKEN=ENV-SECRET-29\n");
    const reply = await scene.call("delegate_start", {
      prompt: "run the tests and the scripts",
      model: MODEL,
      cwd: work,
      wait_seconds: 150,
    }, { timeoutMs: 200_000 });
    assert.equal(field(reply.text, "state"), "completed", reply.text);
    assert.equal(field(reply.text, "denied"), undefined, reply.text);
    assert.equal(field(reply.text, "sandbox"), undefined, "fully confined: no sandbox: line");
    assert.equal(readFileSync(join(work, "npm-ran.txt"), "utf8"), "npm", reply.text);
    assert.equal(readFileSync(join(work, "script-ran.txt"), "utf8"), "script\n", reply.text);
    assert.equal(readFileSync(join(work, "py-ran.txt"), "utf8"), "py", reply.text);
    assert.match(field(reply.text, "commands") ?? "", /^7 run/, reply.text);
    // What each command gave back to the model, in order.
    const results = toolResults(scene.emulator.messageRequests().at(-1)!.json);
    assert.equal(results.length, calls("").length, JSON.stringify(results));
    assert.match(results[0]!, /1 passing/, "npm test's output reached the model");
    assert.match(results[3]!, /URLError.*Connection refused/, "the network call failed");
    assert.match(results[4]!, /PermissionError/, "the secret file was not read");
    const wire = scene.emulator.messageRequests().map((r) => r.bodyText).join("\n");
    assert.doesNotMatch(wire, /ENV-SECRET-29/, "the secret reached the model");
    assert.deepEqual(readdirSync(outside), [], "nothing was written outside");
    assert.equal(existsSync(join(work, ".envrc")), false, "the host-run file stayed");
    assert.match(field(reply.text, "warning") ?? "", /^planted: moved out of the project: \.envrc/);
  },
});

/** The text of every tool result in a Messages request, in order. */
function toolResults(body: unknown): string[] {
  const messages = (body as { messages?: { content?: unknown }[] }).messages ?? [];
  return messages.flatMap((m) => Array.isArray(m.content) ? m.content : []).flatMap((b) =>
    b?.type === "tool_result" ? [typeof b.content === "string" ? b.content : JSON.stringify(b)] : []
  );
}

/**
 * A Bash call that leaves two processes behind, each writing its own pid first: one gone
 * with `setsid -f` (a new session, re-parented to init), one with `nohup ... &` from a
 * subshell that exits (re-parented, same session). Both run `tail` on a file of `work`.
 */
function leaveBehind(work: string): string {
  const f = join(work, "f");
  return `@bash touch '${f}' && ` +
    `setsid -f sh -c 'echo $$ > p1; exec tail -s 600 -f ${f}' >/dev/null 2>&1 && ` +
    `(nohup sh -c 'echo $$ > p2; exec tail -s 601 -f ${f}' >/dev/null 2>&1 &) && ` +
    `until [ -s p1 ] && [ -s p2 ]; do sleep 0.1; done; echo started`;
}

function leftPids(work: string): number[] {
  return ["p1", "p2"].map((p) => Number(readFileSync(join(work, p), "utf8").trim()));
}

/** A script: the leave-behind call, then (on the next request) a model that never answers. */
function thenHang(work: string) {
  return (req: { tools: unknown[]; lastToolResult?: string }): Reply | undefined => {
    if (req.tools.length === 0) return undefined;
    if (req.lastToolResult === undefined) {
      return {
        kind: "tool_use",
        name: "Bash",
        input: { command: leaveBehind(work).slice("@bash ".length), description: "start" },
      };
    }
    return { kind: "hang" };
  };
}

// The sandbox is off in these: inside Claude Code's sandbox a pid namespace already ends what
// a command leaves behind, and what is tested here is the server's own sweep.
const UNSANDBOXED = { OLLAMA_MCP_SANDBOX: "off" };

Deno.test({
  name: "claude: nothing a delegate started with setsid -f or nohup & outlives the job",
  ignore: !linux,
  async fn() {
    const { work } = layout();
    await using scene = await startScene({ cwd: work, env: UNSANDBOXED });
    let pids: number[] = [];
    try {
      const reply = await scene.call("delegate_start", {
        prompt: leaveBehind(work),
        model: MODEL,
        cwd: work,
        allowed_tools: ["Bash"],
        wait_seconds: 120,
      }, { timeoutMs: 180_000 });
      assert.equal(field(reply.text, "state"), "completed", reply.text);
      pids = leftPids(work);
      assert.equal(pids.length, 2);
      for (const pid of pids) assert.equal(alive(pid), false, `pid ${pid} outlived the job`);
      assert.deepEqual(processesMentioning(join(work, "f")), []);
    } finally {
      killAll([...pids, ...processesMentioning(join(work, "f"))]);
    }
  },
});

Deno.test({
  name: "claude: in Claude Code's sandbox too, nothing started with setsid -f or nohup & survives",
  ignore: !hasBwrap,
  async fn() {
    const { work } = layout();
    await using scene = await startScene({ cwd: work });
    try {
      const reply = await scene.call("delegate_start", {
        prompt: leaveBehind(work),
        model: MODEL,
        cwd: work,
        allowed_tools: ["Bash"],
        wait_seconds: 120,
      }, { timeoutMs: 180_000 });
      assert.equal(field(reply.text, "state"), "completed", reply.text);
      // The pids are the sandbox's own; that both were written shows both processes ran.
      assert.ok(leftPids(work).every((pid) => pid > 0));
      assert.deepEqual(processesMentioning(join(work, "f")), []);
    } finally {
      killAll(processesMentioning(join(work, "f")));
    }
  },
});

Deno.test({
  name: "claude: delegate_cancel ends what a delegate started with setsid -f or nohup &",
  ignore: !linux,
  async fn() {
    const { work } = layout();
    await using scene = await startScene({
      emulator: { script: thenHang(work) },
      cwd: work,
      env: UNSANDBOXED,
    });
    let pids: number[] = [];
    try {
      const started = await scene.call("delegate_start", {
        prompt: "leave something behind",
        model: MODEL,
        cwd: work,
        allowed_tools: ["Bash"],
      });
      const id = field(started.text, "job_id")!;
      pids = await until(
        () => {
          if (!existsSync(join(work, "p1")) || !existsSync(join(work, "p2"))) return undefined;
          const found = leftPids(work);
          return found.every((p) => p > 0 && alive(p)) ? found : undefined;
        },
        120_000,
        "the processes left behind",
      );
      const cancelled = await scene.call("delegate_cancel", { job_id: id });
      assert.equal(field(cancelled.text, "state"), "cancelled", cancelled.text);
      for (const pid of pids) assert.equal(alive(pid), false, `pid ${pid} outlived the cancel`);
      assert.deepEqual(processesMentioning(join(work, "f")), []);
    } finally {
      killAll([...pids, ...processesMentioning(join(work, "f"))]);
    }
  },
});

Deno.test({
  name: "claude: a server that shuts down ends what its delegates left behind",
  ignore: !linux,
  async fn() {
    const { work } = layout();
    await using scene = await startScene({
      emulator: { script: thenHang(work) },
      cwd: work,
      env: UNSANDBOXED,
    });
    let pids: number[] = [];
    try {
      await scene.call("delegate_start", {
        prompt: "leave something behind",
        model: MODEL,
        cwd: work,
        allowed_tools: ["Bash"],
      });
      pids = await until(
        () => {
          if (!existsSync(join(work, "p1")) || !existsSync(join(work, "p2"))) return undefined;
          const found = leftPids(work);
          return found.every((p) => p > 0 && alive(p)) ? found : undefined;
        },
        120_000,
        "the processes left behind",
      );
      await scene.server.close();
      await until(() => !alive(scene.pid) || undefined, 15_000, "the server to exit");
      for (const pid of pids) assert.equal(alive(pid), false, `pid ${pid} outlived the server`);
      assert.deepEqual(processesMentioning(join(work, "f")), []);
    } finally {
      killAll([...pids, ...processesMentioning(join(work, "f"))]);
    }
  },
});

Deno.test({
  name: "claude: a relative PATH entry cannot choose which claude runs",
  ignore: !linux,
  async fn() {
    const { base, work, outside } = layout();
    // The server runs in a project whose node_modules/.bin has a claude of its own (the
    // lookup used to find it there), and the job's cwd holds a planted one at the same
    // relative path (the spawn used to run that one).
    const serverDir = join(base, "server-project");
    mkdirSync(join(serverDir, "node_modules", ".bin"), { recursive: true });
    symlinkSync(CLAUDE_BIN, join(serverDir, "node_modules", ".bin", "claude"));
    const planted = join(work, "node_modules", ".bin", "claude");
    mkdirSync(join(work, "node_modules", ".bin"), { recursive: true });
    writeFileSync(planted, `#!/bin/sh\ntouch '${join(outside, "planted-claude")}'\nexit 0\n`);
    chmodSync(planted, 0o755);
    const bin = join(base, "bin");
    mkdirSync(bin);
    symlinkSync(CLAUDE_BIN, join(bin, "claude"));
    await using scene = await startScene({
      cwd: serverDir,
      claudeBin: "claude",
      env: { PATH: `node_modules/.bin::${bin}:${systemPath.PATH}` },
    });
    const reply = await scene.call("delegate_start", {
      prompt: '@bash echo "$PATH" > path.txt',
      model: MODEL,
      cwd: work,
      allowed_tools: ["Bash"],
      wait_seconds: 120,
    }, { timeoutMs: 180_000 });
    assert.equal(field(reply.text, "state"), "completed", reply.text);
    assert.deepEqual(readdirSync(outside), [], "the planted claude never ran");
    // The delegate's own commands see no relative PATH entry either.
    const path = readFileSync(join(work, "path.txt"), "utf8").trim();
    assert.ok(path.split(":").every((d) => d.startsWith("/")), path);
  },
});

/** A PATH with the server's own runtime and, of bwrap and socat, only `tools`. */
function pathWithout(base: string, tools: string[]): string {
  const bin = join(base, "bin");
  mkdirSync(bin);
  for (const tool of tools) symlinkSync(which(tool, systemPath, "/")!, join(bin, tool));
  symlinkSync(Deno.execPath(), join(bin, "deno"));
  // The Node pass starts the server as `node ...`; the delegate's commands need a shell.
  for (const program of ["node", "sh", "cat", "echo", "id", "python3"]) {
    const found = which(program, systemPath, "/");
    if (found && !existsSync(join(bin, program))) symlinkSync(found, join(bin, program));
  }
  return bin;
}

Deno.test({
  name: "claude: with bubblewrap but no socat, a delegate runs in the jail alone and every " +
    "reply says so; with sandbox required it is refused with what to install",
  ignore: !hasBwrap,
  async fn() {
    const { base, work } = layout();
    const home = tempDir("od-home-");
    mkdirSync(join(home, ".claude"), { recursive: true });
    writeFileSync(join(home, ".claude", ".credentials.json"), "LOGIN-WITHOUT-SOCAT");
    const bin = pathWithout(base, ["bwrap"]);
    await using scene = await startScene({ cwd: work, home, env: { PATH: bin } });
    const reply = await scene.call("delegate_start", {
      // Read by a program whose paths Claude Code's own rules cannot see.
      // (By absolute path: the test's PATH folder is not in the jail.)
      prompt: `@bash echo ran > out.txt; /usr/bin/python3 -c "import os; ` +
        `print(os.path.exists('${home}'), open('${
          join(home, ".claude", ".credentials.json")
        }').read())" 2>&1`,
      model: MODEL,
      cwd: work,
      // Nothing asks: only the jail stands between the command and the login (the delegate
      // is not root inside it, so Claude Code allows this mode).
      permission_mode: "bypassPermissions",
      wait_seconds: 120,
    }, { timeoutMs: 180_000 });
    // No dead end: the job ran, and the reply says how far it was confined, and why.
    assert.equal(field(reply.text, "state"), "completed", reply.text);
    assert.ok(existsSync(join(work, "out.txt")), reply.text);
    assert.match(
      field(reply.text, "sandbox") ?? "",
      /^partial \(socat is missing.*apt install socat/,
    );
    // The jail still keeps the user's files out of reach.
    const wire = scene.emulator.messageRequests().map((r) => r.bodyText).join("\n");
    assert.doesNotMatch(wire, /LOGIN-WITHOUT-SOCAT/);
    // Python ran and found no such file there (HOME is an empty folder in the jail).
    assert.match(wire, /FileNotFoundError/);
    const status = await scene.call("delegate_status", { job_id: field(reply.text, "job_id")! });
    assert.equal(field(status.text, "sandbox"), field(reply.text, "sandbox"), "every reply");

    const strict = await scene.startServer({
      env: { PATH: bin, OLLAMA_MCP_SANDBOX: "required" },
    });
    const before = scene.emulator.messageRequests().length;
    const refused = await strict.call("delegate_start", {
      prompt: "@bash echo should-not-run > refused.txt",
      model: MODEL,
      cwd: work,
      allowed_tools: ["Bash"],
      wait_seconds: 60,
    });
    assert.equal(field(refused.text, "state"), "failed", refused.text);
    assert.match(refused.text, /socat is missing/);
    assert.match(refused.text, /config --sandbox on/);
    assert.equal(existsSync(join(work, "refused.txt")), false);
    assert.equal(scene.emulator.messageRequests().length, before, "Claude Code was not started");
  },
});

Deno.test({
  name: "claude: without bubblewrap a delegate runs unconfined and every reply says so",
  ignore: !linux,
  async fn() {
    const { base, work } = layout();
    const bin = pathWithout(base, ["socat"]);
    await using scene = await startScene({ cwd: work, env: { PATH: bin } });
    const reply = await scene.call("delegate_start", {
      prompt: "@bash echo ran > out.txt",
      model: MODEL,
      cwd: work,
      allowed_tools: ["Bash"],
      wait_seconds: 120,
    }, { timeoutMs: 180_000 });
    assert.equal(field(reply.text, "state"), "completed", reply.text);
    assert.equal(readFileSync(join(work, "out.txt"), "utf8"), "ran\n");
    assert.match(
      field(reply.text, "sandbox") ?? "",
      /^off \(bubblewrap is missing, so commands and file tools run as you: apt install[^;]*\)$/,
    );
    // Unconfined, a command is not approved by itself: without allowed_tools it is refused,
    // and the reply says what would let it run.
    const asked = await scene.call("delegate_start", {
      prompt: `@bash python3 -c "open('unasked.txt', 'w').write('ran')"`,
      model: MODEL,
      cwd: work,
      wait_seconds: 120,
    }, { timeoutMs: 180_000 });
    assert.equal(existsSync(join(work, "unasked.txt")), false, asked.text);
    assert.match(field(asked.text, "denied") ?? "", /^1: Bash\(python3 -c/, asked.text);
    assert.match(
      field(asked.text, "sandbox") ?? "",
      /^off \(bubblewrap is missing.*\); so a command that is not read-only runs only when allowed_tools approves it \(\["Bash"\] for all/,
    );
  },
});

Deno.test({
  name: "claude: the delegate's own Write and Read tools cannot touch host-run paths or " +
    "credential stores, even in bypassPermissions",
  async fn() {
    const { work } = layout();
    const targets = [
      ".envrc",
      "CLAUDE.md",
      "ollama-mcp.config.json",
      ".mcp.json",
      ".claude/settings.json",
      ".git/hooks/pre-commit",
      ".vscode/tasks.json",
    ];
    const home = tempDir("od-home-");
    const secret = () => join(home, ".ssh", "id_rsa");
    // Claude Code refuses bypassPermissions as root unless IS_SANDBOX=1, which the server
    // never passes on: the test's own stand-in for `claude` sets it.
    const wrapper = sandboxClaude();
    await using scene = await startScene({
      emulator: {
        // One Write per target, then a Read of the home's private key, then an answer that
        // carries the last tool result back for the assertion.
        script: (req): Reply | undefined => {
          if (req.tools.length === 0) return undefined;
          const done = req.messages.filter((m) =>
            JSON.stringify(m).includes('"type":"tool_result"')
          ).length;
          const target = targets[done];
          if (target !== undefined) {
            return {
              kind: "tool_use",
              name: "Write",
              input: { file_path: join(work, target), content: "planted\n" },
            };
          }
          if (done === targets.length) {
            return { kind: "tool_use", name: "Read", input: { file_path: secret() } };
          }
          return { kind: "text", text: `last: ${req.lastToolResult ?? ""}` };
        },
      },
      cwd: work,
      home,
      claudeBin: wrapper,
    });
    mkdirSync(join(home, ".ssh"), { recursive: true });
    writeFileSync(secret(), "PRIVATE-KEY-MATERIAL\n");
    const reply = await scene.call("delegate_start", {
      prompt: "set things up",
      model: MODEL,
      cwd: work,
      permission_mode: "bypassPermissions",
      wait_seconds: 150,
    }, { timeoutMs: 200_000 });
    assert.equal(field(reply.text, "state"), "completed", reply.text);
    for (const target of targets) {
      assert.equal(existsSync(join(work, target)), false, `${target} was written`);
    }
    // Refused by the deny rules, not only moved out at the end of the turn: no Write went
    // through, and nothing had to be moved.
    assert.doesNotMatch(reply.text, /moved out of the project/, reply.text);
    const wire = scene.emulator.messageRequests().map((r) => r.bodyText).join("\n");
    assert.doesNotMatch(wire, /PRIVATE-KEY-MATERIAL/, "the key reached the model");
    // The Read was attempted and refused (its result is the answer's last tool result).
    assert.match(reply.text, /last: .*(denied|permission)/i, reply.text);
  },
});

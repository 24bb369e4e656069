/**
 * What `doctor` shows of the user's toolchains, and `doctor --try "<command>"` (issue 29, item
 * 2), in process (runCli) with a HOME holding the layouts users have (tests/support/toolchains.ts):
 * which PATH folders are opened and why, what stays hidden, and a command run on each engine as
 * its delegates would run it, with real bubblewrap.
 */
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { CLAUDE_BIN, realDenoDir, tempDir } from "../support/harness.ts";
import { fakeToolchains, NVM_BIN, SECRET_MARKERS } from "../support/toolchains.ts";
import { runCli } from "./jobs_support.ts";

const linux = process.platform === "linux";

/** A HOME with the fake toolchains and a project in it; doctor runs in the project. */
function userWithToolchains(path?: (home: string, tools: string) => string) {
  const home = tempDir("od-doctor-tools-");
  const tools = fakeToolchains(home);
  const cwd = join(home, "project");
  mkdirSync(cwd);
  const env: Record<string, string> = {
    PATH: path ? path(home, tools) : tools,
    HOME: home,
    DENO_DIR: realDenoDir(),
    NO_COLOR: "1",
    OLLAMA_MCP_CLAUDE_BIN: CLAUDE_BIN,
    // Nothing answers: the toolchains line does not need Ollama.
    OLLAMA_MCP_BASE_URL: "http://127.0.0.1:9",
  };
  return { home, cwd, env, stateDir: join(home, ".ollama-mcp", "jobs") };
}

/** The Toolchains line of the text report and the lines under it. */
function toolchainsBlock(stdout: string): string[] {
  const lines = stdout.split("\n");
  const at = lines.findIndex((l) => /^ {2}(PASS|WARN|FAIL) {2}Toolchains /.test(l));
  assert.ok(at >= 0, stdout);
  const out = [lines[at]!];
  for (const l of lines.slice(at + 1)) {
    if (!/^ {20,}/.test(l)) break;
    out.push(l.trim());
  }
  return out;
}

Deno.test("doctor: the toolchains line shows what delegates read of PATH's toolchains and what stays hidden", async () => {
  const u = userWithToolchains((home, tools) => `${home}:${tools}`);
  const run = await runCli({ env: u.env, cwd: u.cwd, stateDir: u.stateDir }, ["doctor"]);
  const block = toolchainsBlock(run.stdout);
  assert.match(
    block[0]!,
    /^ {2}WARN {2}Toolchains +delegates' commands read 3 of your PATH's folders and 3 folder\(s\) in all, read-only \(both engines, and verify\); 1 credential file\(s\) hidden inside; 1 PATH folder\(s\) not opened$/,
  );
  assert.deepEqual(block.slice(1), [
    "PATH ~: not opened: it is your home folder",
    "PATH ~/.local/bin: opened read-only",
    "PATH ~/.cargo/bin: opened read-only",
    `PATH ~/${NVM_BIN}: opened read-only, with its install root ~/.nvm/versions/node/v20.0.0`,
    "PATH /usr/local/bin: the system's, readable in every sandbox",
    "PATH /usr/bin: the system's, readable in every sandbox",
    "PATH /bin: the system's, readable in every sandbox",
    "hidden inside: ~/.local/bin/notes (a hard link of ~/.ssh/id_rsa)",
    "not opened: ~/.local/bin/key: it is a link to the credential file ~/.ssh/id_rsa",
    "stays hidden in ~: .cargo (but bin), .local (but bin), .nvm (but versions/node/v20.0.0), " +
    ".ssh",
    "caches builds write: ~/.cache, a folder of each job's own (<stateDir>/<job>/cache): " +
    "XDG_CACHE_HOME, GOCACHE, npm_config_cache, PIP_CACHE_DIR, UV_CACHE_DIR, YARN_CACHE_FOLDER, " +
    "BUN_INSTALL_CACHE_DIR, GRADLE_USER_HOME",
    "delegates' PATH: ~/.local/bin:~/.cargo/bin:~/.nvm/versions/node/v20.0.0/bin:" +
    "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin",
    "fix: A PATH folder that is your home folder, holds it or holds or lies in a credential " +
    "store is never opened whole: keep the tool in a folder of its own (~/.local/bin) or name " +
    "that folder with ollama-delegate config --toolchain-path <dir>",
  ]);
  // The JSON report carries the same facts for scripts.
  const json = await runCli({ env: u.env, cwd: u.cwd, stateDir: u.stateDir }, ["doctor", "--json"]);
  const check = (JSON.parse(json.stdout) as {
    checks: { id: string; details: { opened: { path: string; why: string }[] } }[];
  }).checks.find((c) => c.id === "toolchains")!;
  assert.deepEqual(check.details.opened.map((o) => o.path), [
    join(u.home, ".local/bin"),
    join(u.home, ".cargo/bin"),
    join(u.home, ".nvm/versions/node/v20.0.0"),
  ]);
});

Deno.test({
  name: "doctor --try runs a command in the project as each engine's delegates would",
  ignore: !linux,
  async fn() {
    const u = userWithToolchains();
    const ctx = { env: u.env, cwd: u.cwd, stateDir: u.stateDir };
    // cat's complaints go to stdout: stdout and stderr are two pipes, read as they arrive, so
    // echo's line could otherwise come before them and not be the last.
    const command = "mytool && cargo-like && npm test && " +
      "cat ~/.cargo/credentials.toml ~/.ssh/id_rsa ~/.local/bin/notes 2>&1; echo code=$?";
    const run = await runCli(ctx, ["doctor", "--try", command]);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.ok(
      run.stdout.startsWith(
        `ollama-delegate doctor --try ${JSON.stringify(command)} in ${u.cwd}\n`,
      ),
      run.stdout,
    );
    assert.ok(run.stdout.includes("  PATH ~/.local/bin: opened read-only\n"), run.stdout);
    for (const engine of ["claude", "native"]) {
      const head = run.stdout.split("\n").findIndex((l) => l.startsWith(`${engine} engine, `));
      assert.ok(head >= 0, run.stdout);
      assert.match(run.stdout.split("\n")[head]!, /: exit 0 after \d+\.\ds$/);
      const output = run.stdout.split("\n").slice(head + 1, head + 8).join("\n");
      assert.match(output, /^\| MYTOOL-RAN\n\| CARGO-LIKE-RAN\n\| NPM-RAN test\n/);
      assert.match(output, /\| code=1$/);
    }
    for (const marker of SECRET_MARKERS) assert.ok(!run.stdout.includes(marker), run.stdout);
    assert.match(run.stdout, /\nIt runs on every engine\.\n$/);
    // A command that fails on the engines: exit code 1, and its output.
    const failing = await runCli(ctx, ["doctor", "--try", "echo nope; exit 3"]);
    assert.equal(failing.code, 1);
    assert.match(failing.stdout, /^claude engine, .*: exit 3 after/m);
    assert.match(failing.stdout, /^native engine, .*: exit 3 after/m);
    assert.match(failing.stdout, /It does not pass on every engine \(see above\)\.\n$/);
    // In the home folder, where no job may work, nothing runs.
    const home = await runCli({ ...ctx, cwd: u.home }, ["doctor", "--try", "mytool"]);
    assert.equal(home.code, 2);
    assert.equal(home.stdout, "");
    assert.match(home.stderr, /Cannot try a command in ".*": .*Run it in a project directory/);
    const usage = await runCli(ctx, ["doctor", "--try", "mytool", "--json"]);
    assert.equal(usage.code, 2);
  },
});

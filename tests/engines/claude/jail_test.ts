import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  cliFiles,
  jailArgs,
  type JailLayout,
  outermost,
} from "../../../src/engines/claude/jail.ts";
import { jailMasks, planJail } from "../../../src/engines/claude/jail_plan.ts";
import { besideRoots } from "../../../src/engines/claude/file_rules.ts";
import { tempDir } from "../../support/harness.ts";

const inspect = (p: string) =>
  (p === "/bin" ? { link: "usr/bin" } : p === "/lib" ? "dir" : "missing") as
    | "dir"
    | { link: string }
    | "missing";

function layout(extra: Partial<JailLayout> = {}): JailLayout {
  return {
    cwd: "/home/u/code/app",
    writable: ["/home/u/code/app", "/home/u/.ollama-mcp/claude"],
    readOnly: ["/home/u/.local/share/claude/versions"],
    home: "/home/u",
    root: false,
    tmpMb: 64,
    ...extra,
  };
}

/** The mount operations of an argv, as [flag, ...paths] groups in order. */
function mounts(args: string[]): string[][] {
  const out: string[][] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--") break;
    if (a === "--bind" || a === "--ro-bind" || a === "--symlink") {
      out.push([a, args[i + 1]!, args[i + 2]!]);
      i += 2;
    } else if (a === "--tmpfs") {
      out.push([a, args[i + 1]!]);
      i += 1;
    }
  }
  return out;
}

Deno.test("jailArgs: $HOME is an empty tmpfs mounted before what lies inside it", () => {
  const args = jailArgs(layout(), "/home/u/.local/share/claude/versions/claude", ["-p"], inspect);
  const m = mounts(args);
  const home = m.findIndex((x) => x[0] === "--tmpfs" && x[1] === "/home/u");
  const app = m.findIndex((x) => x[0] === "--bind" && x[1] === "/home/u/code/app");
  const cli = m.findIndex((x) =>
    x[0] === "--ro-bind" && x[1] === "/home/u/.local/share/claude/versions"
  );
  assert.ok(home >= 0 && app > home && cli > home, JSON.stringify(m));
  // Nothing of the host's root but the system parts: no `--bind / /`.
  assert.ok(!m.some((x) => x[1] === "/"), JSON.stringify(m));
  assert.deepEqual(args.slice(args.indexOf("--") + 1), [
    "/home/u/.local/share/claude/versions/claude",
    "-p",
  ]);
  assert.ok(args.includes("--unshare-pid") && args.includes("--die-with-parent"));
  // Claude Code must reach its endpoint: the network is not unshared here.
  assert.ok(!args.includes("--unshare-net") && !args.includes("--unshare-all"));
  assert.ok(!args.includes("--uid"), "not root: no uid change");
});

Deno.test("jailArgs: as root the delegate is nobody without capabilities, root-only files hidden", () => {
  const args = jailArgs(
    layout({ root: true, systemMasks: [{ path: "/etc/shadow", kind: "file" }] }),
    "/c",
    [],
    inspect,
  );
  const uid = args.indexOf("--uid");
  assert.equal(args[uid + 1], "65534");
  assert.ok(args.includes("--unshare-user"));
  assert.equal(args[args.indexOf("--cap-drop") + 1], "ALL");
  assert.ok(
    mounts(args).some((x) =>
      x[0] === "--ro-bind" && x[1] === "/dev/null" && x[2] === "/etc/shadow"
    ),
  );
});

Deno.test("jailArgs: a project holding $HOME still hides $HOME; masks land after the binds", () => {
  const args = jailArgs(
    layout({
      cwd: "/home",
      writable: ["/home"],
      readOnly: [],
      masks: [{ path: "/home/proj/.ssh", kind: "dir" }],
    }),
    "/c",
    [],
    inspect,
  );
  const m = mounts(args);
  const bind = m.findIndex((x) => x[0] === "--bind" && x[1] === "/home");
  const home = m.findIndex((x) => x[0] === "--tmpfs" && x[1] === "/home/u");
  const ssh = m.findIndex((x) => x[0] === "--tmpfs" && x[1] === "/home/proj/.ssh");
  assert.ok(bind >= 0 && home > bind && ssh > bind, JSON.stringify(m));
});

Deno.test("planJail: host-run paths and links to them inside the roots are held read-only; a link out is not mounted", () => {
  const base = tempDir("od-jail-plan-");
  const home = join(base, "home");
  const work = join(home, "code", "app");
  mkdirSync(join(work, "tools", "claude"), { recursive: true });
  mkdirSync(join(home, ".claude"), { recursive: true });
  writeFileSync(join(home, ".claude", ".credentials.json"), "secret");
  symlinkSync("tools/claude", join(work, ".claude"));
  symlinkSync(join(home, ".claude"), join(work, ".vscode"));
  mkdirSync(join(work, ".ssh"));
  const plan = planJail({
    cwd: work,
    addDirs: [],
    command: "/usr/bin/true",
    pathDirs: ["/usr/bin"],
    configDir: join(home, ".ollama-mcp", "claude"),
    home,
    protect: [join(home, ".ollama-mcp")],
    readOnly: [],
    nestedHostRun: [],
    tmpMb: 64,
  });
  assert.deepEqual(plan.readOnlyInside, [join(work, "tools", "claude")]);
  assert.deepEqual(plan.masks, [{ path: join(work, ".ssh"), kind: "dir" }]);
  assert.deepEqual(plan.writable, [work, join(home, ".ollama-mcp", "claude")]);
  assert.equal(plan.home, home);
  assert.ok(!JSON.stringify(plan).includes(join(home, ".claude")), JSON.stringify(plan));
});

Deno.test("cliFiles: the real file's folder; a script's interpreter found on PATH unless a system one", () => {
  const base = tempDir("od-cli-");
  const nodeDir = join(base, "nvm", "bin");
  mkdirSync(nodeDir, { recursive: true });
  writeFileSync(join(nodeDir, "node"), "#!/bin/true\n", { mode: 0o755 });
  const pkg = join(base, "lib", "claude-code");
  mkdirSync(pkg, { recursive: true });
  writeFileSync(join(pkg, "cli.js"), "#!/usr/bin/env node\nconsole.log(1)\n", { mode: 0o755 });
  const bin = join(base, "bin");
  mkdirSync(bin);
  symlinkSync(join(pkg, "cli.js"), join(bin, "claude"));
  assert.deepEqual(cliFiles(join(bin, "claude"), [nodeDir]), [pkg, nodeDir]);
  writeFileSync(join(pkg, "cli.js"), "#!/bin/sh\nexit 0\n");
  assert.deepEqual(cliFiles(join(bin, "claude"), [nodeDir]), [pkg]);
});

Deno.test("cliFiles: reads only the CLI's first line, however large the file", () => {
  // Every turn plans the jail, and the native build of Claude Code is a 400 MB file: reading it
  // whole to find a `#!` line cost each turn a second of CPU and 400 MB of memory. A sparse
  // file of 1 TiB, more than any read of the whole can hold, shows whether anything past the
  // head is read: read whole, its interpreter line is never found.
  const base = tempDir("od-cli-big-");
  const nodeDir = join(base, "nvm", "bin");
  mkdirSync(nodeDir, { recursive: true });
  writeFileSync(join(nodeDir, "node"), "#!/bin/true\n", { mode: 0o755 });
  const cli = join(base, "claude");
  writeFileSync(cli, "#!/usr/bin/env node\n", { mode: 0o755 });
  truncateSync(cli, 1024 ** 4);
  assert.deepEqual(cliFiles(cli, [nodeDir]), [base, nodeDir]);
});

Deno.test("outermost: nested roots collapse into the outer one", () => {
  assert.deepEqual(outermost(["/a/b", "/a", "/c", "/ab"]), ["/a", "/c", "/ab"]);
});

Deno.test("besideRoots: $HOME whole when no root is in it; else what lies beside the way down", () => {
  const home = tempDir("od-beside-");
  for (const d of [".claude", "code/app", "code/other", ".config/newtool"]) {
    mkdirSync(join(home, d), { recursive: true });
  }
  writeFileSync(join(home, ".claude.json"), "{}");
  assert.deepEqual(besideRoots(home, ["/srv/work"]), [home]);
  assert.deepEqual(besideRoots(home, [join(home, "code", "app")]).sort(), [
    join(home, ".claude"),
    join(home, ".claude.json"),
    join(home, ".config"),
    join(home, "code", "other"),
  ]);
  assert.deepEqual(besideRoots(home, [home]), []);
  assert.equal(besideRoots(home, [join(home, "code", "app")], 2).length, 2);
});

Deno.test("jailArgs: the limited shell is mounted read-only where CLAUDE_CODE_SHELL names it", () => {
  const shell = { source: "/state/.sandbox/shell/ab12/bash", path: "/run/ollama-delegate/bash" };
  const args = jailArgs(layout({ shell }), "/usr/bin/claude", ["-p"], inspect);
  const end = args.indexOf("--");
  assert.ok(
    mounts(args).some((m) => m.join(" ") === `--ro-bind ${shell.source} ${shell.path}`),
    JSON.stringify(mounts(args)),
  );
  const at = args.findIndex((a, i) => a === "--setenv" && args[i + 1] === "CLAUDE_CODE_SHELL");
  assert.ok(at >= 0 && at < end);
  assert.equal(args[at + 2], shell.path);
  // Without one, Claude Code picks its shell as it always does.
  assert.ok(!jailArgs(layout(), "/usr/bin/claude", [], inspect).includes("CLAUDE_CODE_SHELL"));
});

Deno.test("planJail: a secret host-run file is masked, not bound read-only too; jailMasks names it", () => {
  const work = tempDir("od-jail-plan-");
  const proj = join(work, "nested", "p0");
  mkdirSync(join(proj, ".git"), { recursive: true });
  writeFileSync(join(proj, ".envrc"), "export TOKEN=x\n");
  writeFileSync(join(work, "readme.md"), "hi\n");
  const plan = planJail({
    cwd: work,
    addDirs: [],
    command: "/usr/bin/true",
    pathDirs: ["/usr/bin"],
    protect: [],
    readOnly: [],
    nestedHostRun: [join(proj, ".git"), join(proj, ".envrc")],
    secretFiles: [join(proj, ".envrc")],
    tmpMb: 64,
  });
  // The mask (/dev/null) is read-only itself: a bind below it would be one more mount that
  // every sandboxed command's bubblewrap copies (issue 34).
  assert.deepEqual(plan.readOnlyInside, [join(proj, ".git")]);
  assert.deepEqual(plan.masks, [{ path: join(proj, ".envrc"), kind: "file" }]);
  assert.ok(jailMasks(plan, join(proj, ".envrc")));
  assert.ok(!jailMasks(plan, join(work, "readme.md")));
});

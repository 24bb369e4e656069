import assert from "node:assert/strict";
import {
  approvesSandboxedBash,
  findSandboxTools,
  planSandbox,
  sandboxSettings,
  shortPlanText,
  withNestedHostRun,
} from "../../../src/engines/claude/sandbox.ts";
import { PERMISSION_MODES } from "../../../src/settings/types.ts";
import { CREDENTIAL_PATHS, HOST_RUN_PATHS } from "../../../src/guard/protected_paths.ts";

const TOOLS = { bwrap: "/usr/bin/bwrap", socat: "/usr/bin/socat" };

Deno.test("planSandbox: on with bwrap and socat on Linux; off when the setting says so", () => {
  assert.deepEqual(planSandbox("on", TOOLS, "linux"), { kind: "on", ...TOOLS });
  assert.deepEqual(planSandbox("required", TOOLS, "linux"), { kind: "on", ...TOOLS });
  const off = planSandbox("off", TOOLS, "linux");
  assert.equal(off.kind, "off");
  assert.match(off.kind === "off" ? off.why : "", /^off \(the sandbox setting is off\)$/);
});

Deno.test("planSandbox: without bubblewrap or off Linux, off with why and what to install", () => {
  const noBwrap = planSandbox("on", { socat: TOOLS.socat }, "linux");
  assert.equal(noBwrap.kind, "off");
  assert.match(noBwrap.kind === "off" ? noBwrap.why : "", /bubblewrap is missing.*apt install/);
  const mac = planSandbox("on", TOOLS, "darwin");
  assert.match(mac.kind === "off" ? mac.why : "", /only on Linux; this is darwin/);
  assert.equal(planSandbox("on", TOOLS, "win32").kind, "off");
});

Deno.test("planSandbox: bubblewrap without socat is the jail alone, saying so; required refuses", () => {
  const plan = planSandbox("on", { bwrap: TOOLS.bwrap }, "linux");
  assert.equal(plan.kind, "partial");
  const why = plan.kind === "partial" ? plan.why : "";
  assert.match(why, /^partial \(socat is missing/);
  assert.match(why, /commands have the network/);
  assert.match(why, /apt install socat/);
  for (const tools of [{ bwrap: TOOLS.bwrap }, { socat: TOOLS.socat }, {}]) {
    const refused = planSandbox("required", tools, "linux");
    assert.equal(refused.kind, "refused", JSON.stringify(tools));
    assert.match(refused.kind === "refused" ? refused.problem.advice ?? "" : "", /--sandbox on/);
  }
  assert.equal(planSandbox("required", TOOLS, "darwin").kind, "refused");
});

Deno.test("sandboxSettings: required, no way out, approves commands only when told", () => {
  const s = sandboxSettings({ cwd: "/w", addDirs: [], protect: [] });
  assert.equal(s.enabled, true);
  assert.equal(s.failIfUnavailable, true);
  assert.equal(s.allowUnsandboxedCommands, false);
  assert.equal(s.autoAllowBashIfSandboxed, false);
  const approving = sandboxSettings({ cwd: "/w", addDirs: [], protect: [], autoAllowBash: true });
  assert.equal(approving.autoAllowBashIfSandboxed, true);
  assert.equal(approving.allowUnsandboxedCommands, false);
});

Deno.test("approvesSandboxedBash: the editing modes, when allowed_tools does not decide", () => {
  const editing = PERMISSION_MODES.filter((m) => approvesSandboxedBash(m, undefined));
  assert.deepEqual(editing, ["auto", "acceptEdits", "bypassPermissions"]);
  // Given, allowed_tools says which commands run: patterns only those, Bash all of them (with
  // the file tools' deny rules still checked on their paths).
  assert.equal(approvesSandboxedBash("acceptEdits", ["Read", "Bash(git *)"]), false);
  assert.equal(approvesSandboxedBash("acceptEdits", ["Read", "Bash"]), false);
  assert.equal(approvesSandboxedBash("acceptEdits", []), false);
});

Deno.test("shortPlanText: in the editing modes without the sandbox, names allowed_tools", () => {
  const plan = { why: "partial (socat is missing)" };
  const hint =
    /^partial \(socat is missing\); so a command that is not read-only runs only when allowed_tools approves it \(\["Bash"\] for all/;
  assert.match(shortPlanText(plan, "acceptEdits", undefined, true), hint);
  assert.match(shortPlanText(plan, "auto", ["Bash(git *)"], true), hint);
  for (
    const [mode, allowed, bash] of [
      ["acceptEdits", ["Bash"], true],
      ["bypassPermissions", undefined, true],
      ["plan", undefined, true],
      ["dontAsk", undefined, true],
      ["acceptEdits", undefined, false],
    ] as const
  ) {
    assert.equal(shortPlanText(plan, mode, allowed, bash), plan.why, `${mode} ${allowed} ${bash}`);
  }
});

Deno.test("sandboxSettings: host-run paths of every writable dir and the server's files", () => {
  const s = sandboxSettings({
    cwd: "/w",
    addDirs: ["/data"],
    home: "/home/u",
    protect: ["/home/u/.ollama-mcp", "/state"],
  });
  for (const root of ["/w", "/data"]) {
    for (const entry of HOST_RUN_PATHS) {
      assert.ok(s.filesystem.denyWrite.includes(`${root}/${entry}`), `${root}/${entry}`);
    }
  }
  for (const p of ["/home/u/.ollama-mcp", "/state"]) {
    assert.ok(s.filesystem.denyWrite.includes(p), p);
    assert.ok(s.filesystem.denyRead.includes(p), p);
  }
  for (const entry of CREDENTIAL_PATHS) {
    assert.ok(s.filesystem.denyRead.includes(`/home/u/${entry}`), entry);
  }
  assert.equal(new Set(s.filesystem.denyRead).size, s.filesystem.denyRead.length, "no repeats");
});

Deno.test({
  name: "findSandboxTools: only absolute PATH entries",
  ignore: Deno.build.os === "windows",
  async fn() {
    const dir = await Deno.makeTempDir();
    try {
      await Deno.mkdir(`${dir}/bin`);
      for (const name of ["bwrap", "socat"]) {
        await Deno.writeTextFile(`${dir}/bin/${name}`, "#!/bin/sh\n");
        await Deno.chmod(`${dir}/bin/${name}`, 0o755);
      }
      assert.deepEqual(findSandboxTools({ PATH: `${dir}/bin` }), {
        bwrap: `${dir}/bin/bwrap`,
        socat: `${dir}/bin/socat`,
      });
      assert.deepEqual(findSandboxTools({ PATH: "bin:." }), {});
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("withNestedHostRun: nested host-run paths become read-only when the sandbox is on", async () => {
  const top = await Deno.realPath(await Deno.makeTempDir({ prefix: "claude_nested_" }));
  try {
    await Deno.mkdir(`${top}/proj/.git/hooks`, { recursive: true });
    await Deno.mkdir(`${top}/sub`);
    await Deno.writeTextFile(`${top}/sub/.envrc`, "x");
    const on = planSandbox("on", TOOLS, "linux");
    const guard = await withNestedHostRun({ readOnly: ["/repo/.git"] }, on, [top]);
    assert.deepEqual(guard.readOnly, ["/repo/.git", `${top}/proj/.git`, `${top}/sub/.envrc`]);
    const s = sandboxSettings({ cwd: top, addDirs: [], protect: [], readOnly: guard.readOnly });
    assert.ok(s.filesystem.denyWrite.includes(`${top}/proj/.git`));
    // Off: Claude Code's sandbox is not used, nothing to scan for.
    const off = await withNestedHostRun({ readOnly: [] }, planSandbox("off", TOOLS, "linux"), [
      top,
    ]);
    assert.deepEqual(off.readOnly, []);
    // Too deep to scan: the whole root is read-only to commands (fail closed).
    await Deno.mkdir(`${top}/${Array.from({ length: 17 }, (_, i) => `d${i}`).join("/")}`, {
      recursive: true,
    });
    const closed = await withNestedHostRun({ readOnly: [] }, on, [top]);
    assert.deepEqual(closed.readOnly, [top]);
  } finally {
    await Deno.remove(top, { recursive: true });
  }
});

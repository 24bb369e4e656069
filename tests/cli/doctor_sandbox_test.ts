import { tempDir } from "../support/temp_dir.ts";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  bubblewrapVersion,
  claudeSandboxCheck,
  oldBubblewrapNote,
} from "../../src/cli/doctor/local.ts";
import { execFileSync } from "node:child_process";
import { enginesFacts } from "../../src/cli/doctor/engine_needs.ts";
import { defaultSettings } from "../../src/settings/fields.ts";
import { cgroupSupport } from "../../src/platform/posix/limit_cgroup.ts";
import type { SandboxSetting } from "../../src/settings/types.ts";

/** The check as the doctor makes it, from what the claude engine says of itself there. */
async function checkWith(mode: SandboxSetting, env: Record<string, string>, platform: string) {
  const settings = { ...defaultSettings(), sandbox: mode };
  const facts = await enginesFacts(settings, env, "/", platform);
  return claudeSandboxCheck(mode, facts.claude.sandbox, platform);
}

/** A PATH of one folder holding executables of these names. */
function pathWith(...names: string[]): Record<string, string> {
  const dir = tempDir("doctor-sandbox-");
  for (const name of names) writeFileSync(join(dir, name), "#!/bin/sh\n", { mode: 0o755 });
  return { PATH: dir };
}

Deno.test("doctor claude.sandbox: on with bubblewrap and socat", async () => {
  const check = await checkWith("on", pathWith("bwrap", "socat"), "linux");
  assert.equal(check.status, "pass");
  assert.match(check.summary, /bubblewrap jail .* Claude Code's own sandbox nested inside/);
  assert.match(check.summary, /commands run without an approval in acceptEdits and auto/);
});

Deno.test("doctor claude.sandbox: bubblewrap without socat is the jail alone, a warning with the fix", async () => {
  const check = await checkWith("on", pathWith("bwrap"), "linux");
  assert.equal(check.status, "warn");
  assert.match(check.summary, /sandbox partial \(socat is missing/);
  assert.match(check.summary, /apt install socat/);
  assert.match(check.summary, /commands that are not read-only need allowed_tools/);
  const required = await checkWith("required", pathWith("bwrap"), "linux");
  assert.equal(required.status, "fail");
  assert.match(required.summary, /"required"/);
  assert.match(required.hint ?? "", /apt install bubblewrap socat/);
});

Deno.test("doctor claude.sandbox: off is a warning that says why", async () => {
  const none = await checkWith("on", pathWith(), "linux");
  assert.equal(none.status, "warn");
  assert.match(none.summary, /bubblewrap is missing/);
  assert.match(none.hint ?? "", /apt install bubblewrap socat/);
  const mac = await checkWith("on", pathWith("bwrap", "socat"), "darwin");
  assert.equal(mac.status, "warn");
  assert.match(mac.summary, /only on Linux; this is darwin/);
  const off = await checkWith("off", pathWith("bwrap", "socat"), "linux");
  assert.equal(off.status, "warn");
  assert.match(off.summary, /setting is off/);
});

Deno.test("doctor claude.sandbox: says how the jail holds the sandbox limits here", async () => {
  const settings = { ...defaultSettings(), sandboxMaxMemoryMb: 512, sandboxMaxFileMb: 8 };
  const facts = await enginesFacts(settings, pathWith("bwrap", "socat"), "/", "linux");
  const text = await facts.claude.limitsText!();
  const cgroup = await cgroupSupport();
  if (cgroup.memory) {
    assert.match(text, /memory: a cgroup of 1536 MiB for Claude Code and its commands together/);
  } else {
    assert.match(text, /memory: (per command process only|not limited)/);
  }
  assert.match(text, /file size: (8 MiB per file \(RLIMIT_FSIZE\)|not limited)/);
  const check = claudeSandboxCheck("on", facts.claude.sandbox, "linux", text);
  assert.ok(check.summary.endsWith(`; ${text}`), check.summary);
  // Nothing holds the limits where the jail does not run.
  const off = await enginesFacts(settings, pathWith(), "/", "linux");
  assert.equal(off.claude.limitsText, undefined);
});

Deno.test("doctor claude.sandbox: a bubblewrap before 0.13 is named, with what it costs among nested projects", async () => {
  const facts = await enginesFacts(defaultSettings(), pathWith("bwrap", "socat"), "/", "linux");
  const old = claudeSandboxCheck("on", facts.claude.sandbox, "linux", undefined, "0.8.0");
  assert.equal(old.status, "pass");
  assert.equal(old.lines?.length, 1);
  assert.match(old.lines![0]!, /^bubblewrap 0\.8\.0 reads the whole mount table for each mount/);
  assert.match(
    old.lines![0]!,
    /\+0\.16 s with 100 of them against \+0\.02 s with bubblewrap 0\.13/,
  );
  assert.equal(old.details?.bwrapVersion, "0.8.0");
  assert.ok(oldBubblewrapNote("0.12.0"));
  // From 0.13 (mount_setattr) on, and when the version cannot be read, nothing is said.
  for (const v of ["0.13.0", "0.13.1", "1.0", "1.2.3", undefined, "x.y"]) {
    assert.equal(oldBubblewrapNote(v), undefined, String(v));
  }
  const current = claudeSandboxCheck("on", facts.claude.sandbox, "linux", undefined, "0.13.1");
  assert.equal(current.lines, undefined);
});

Deno.test("doctor claude.sandbox: the version is what the real bubblewrap prints", async () => {
  const said = execFileSync("bwrap", ["--version"], { encoding: "utf8" });
  const version = await bubblewrapVersion(
    execFileSync("sh", ["-c", "command -v bwrap"], { encoding: "utf8" }).trim(),
  );
  assert.ok(version && /^\d+\.\d+/.test(version), String(version));
  assert.equal(said.trim(), `bubblewrap ${version}`);
  // A program that prints something else gives no version.
  const other = join(pathWith("bwrap").PATH!, "bwrap");
  writeFileSync(other, "#!/bin/sh\necho 'not bubblewrap'\n", { mode: 0o755 });
  assert.equal(await bubblewrapVersion(other), undefined);
});

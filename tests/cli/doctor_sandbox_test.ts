import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { claudeSandboxCheck } from "../../src/cli/doctor_local.ts";

/** A PATH of one folder holding executables of these names. */
function pathWith(...names: string[]): Record<string, string> {
  const dir = mkdtempSync(join(tmpdir(), "doctor-sandbox-"));
  for (const name of names) writeFileSync(join(dir, name), "#!/bin/sh\n", { mode: 0o755 });
  return { PATH: dir };
}

Deno.test("doctor claude.sandbox: on with bubblewrap and socat", () => {
  const check = claudeSandboxCheck("on", pathWith("bwrap", "socat"), "linux");
  assert.equal(check.status, "pass");
  assert.match(check.summary, /bubblewrap jail .* Claude Code's own sandbox nested inside/);
});

Deno.test("doctor claude.sandbox: bubblewrap without socat is the jail alone, a warning with the fix", () => {
  const check = claudeSandboxCheck("on", pathWith("bwrap"), "linux");
  assert.equal(check.status, "warn");
  assert.match(check.summary, /sandbox partial \(socat is missing/);
  assert.match(check.summary, /apt install socat/);
  const required = claudeSandboxCheck("required", pathWith("bwrap"), "linux");
  assert.equal(required.status, "fail");
  assert.match(required.summary, /"required"/);
  assert.match(required.hint ?? "", /apt install bubblewrap socat/);
});

Deno.test("doctor claude.sandbox: off is a warning that says why", () => {
  const none = claudeSandboxCheck("on", pathWith(), "linux");
  assert.equal(none.status, "warn");
  assert.match(none.summary, /bubblewrap is missing/);
  assert.match(none.hint ?? "", /apt install bubblewrap socat/);
  const mac = claudeSandboxCheck("on", pathWith("bwrap", "socat"), "darwin");
  assert.equal(mac.status, "warn");
  assert.match(mac.summary, /only on Linux; this is darwin/);
  const off = claudeSandboxCheck("off", pathWith("bwrap", "socat"), "linux");
  assert.equal(off.status, "warn");
  assert.match(off.summary, /setting is off/);
});

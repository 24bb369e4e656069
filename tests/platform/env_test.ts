import assert from "node:assert/strict";
import { allowlist, allowlistedEnv, isBlocked } from "../../src/platform/env.ts";

const SECRETS: Record<string, string> = {
  ANTHROPIC_API_KEY: "k",
  ANTHROPIC_BASE_URL: "u",
  AWS_SECRET_ACCESS_KEY: "a",
  OPENAI_API_KEY: "o",
  GOOGLE_APPLICATION_CREDENTIALS: "g",
  GCLOUD_PROJECT: "gc",
  CLAUDECODE: "1",
  CLAUDE_CODE_ENTRYPOINT: "cli",
  CLAUDE_CONFIG_DIR: "/c",
  AZURE_X: "az",
  BEDROCK_X: "b",
  VERTEX_X: "v",
  FOO: "foo",
};

Deno.test("allowlistedEnv (POSIX): keeps exactly the allowlisted names", () => {
  const parent = {
    ...SECRETS,
    HOME: "/home/u",
    PATH: "/bin",
    USER: "u",
    LOGNAME: "u",
    SHELL: "/bin/sh",
    TMPDIR: "/tmp",
    XDG_CONFIG_HOME: "/x/c",
    XDG_DATA_HOME: "/x/d",
    XDG_CACHE_HOME: "/x/k",
    XDG_RUNTIME_DIR: "/x/r",
    LANG: "C",
    LC_ALL: "C.UTF-8",
    TZ: "UTC",
    NODE_EXTRA_CA_CERTS: "/ca.pem",
    HTTPS_PROXY: "http://p",
    no_proxy: "localhost",
    SystemRoot: "C:\\Windows",
    path: "/lower-case-path",
    home: "/lower",
    UNSET: undefined,
  };
  assert.deepEqual(allowlistedEnv(parent, false), {
    HOME: "/home/u",
    PATH: "/bin",
    USER: "u",
    LOGNAME: "u",
    SHELL: "/bin/sh",
    TMPDIR: "/tmp",
    XDG_CONFIG_HOME: "/x/c",
    XDG_DATA_HOME: "/x/d",
    XDG_CACHE_HOME: "/x/k",
    XDG_RUNTIME_DIR: "/x/r",
    LANG: "C",
    LC_ALL: "C.UTF-8",
    TZ: "UTC",
    NODE_EXTRA_CA_CERTS: "/ca.pem",
    HTTPS_PROXY: "http://p",
    no_proxy: "localhost",
  });
});

Deno.test("allowlistedEnv (Windows): case-insensitive match, parent's spelling kept", () => {
  const parent = {
    ...SECRETS,
    SYSTEMROOT: "C:\\Windows",
    WinDir: "C:\\Windows",
    Path: "C:\\bin",
    PathExt: ".COM;.EXE",
    ComSpec: "C:\\Windows\\system32\\cmd.exe",
    UserProfile: "C:\\Users\\u",
    "ProgramFiles(x86)": "C:\\PF86",
    temp: "C:\\Temp",
    HOME: "C:\\Users\\u",
    SHELL: "bash",
    lang: "en",
  };
  assert.deepEqual(allowlistedEnv(parent, true), {
    SYSTEMROOT: "C:\\Windows",
    WinDir: "C:\\Windows",
    Path: "C:\\bin",
    PathExt: ".COM;.EXE",
    ComSpec: "C:\\Windows\\system32\\cmd.exe",
    UserProfile: "C:\\Users\\u",
    "ProgramFiles(x86)": "C:\\PF86",
    temp: "C:\\Temp",
    lang: "en",
  });
});

Deno.test("allowlistedEnv (Windows): blocked prefixes go in any case", () => {
  const parent = {
    anthropic_api_key: "k",
    Claude_Config_Dir: "c",
    ClaudeCode: "1",
    aws_secret_access_key: "a",
    Azure_X: "z",
    openai_api_key: "o",
    SystemRoot: "C:\\Windows",
  };
  assert.deepEqual(allowlistedEnv(parent, true), { SystemRoot: "C:\\Windows" });
});

Deno.test("allowlist: what a child needs to run and reach the network, per platform; none blocked", () => {
  const posix = allowlist(false);
  const win = allowlist(true);
  assert.equal(posix.length, 24);
  assert.equal(win.length, 39);
  for (const n of ["HOME", "PATH", "XDG_RUNTIME_DIR", "http_proxy", "HTTP_PROXY", "TERM"]) {
    assert.ok(posix.includes(n), n);
  }
  for (const n of ["SystemRoot", "windir", "PATHEXT", "PROGRAMFILES(X86)", "PSMODULEPATH"]) {
    assert.ok(win.includes(n), n);
  }
  assert.equal(posix.includes("SystemRoot"), false);
  assert.equal(win.includes("HOME"), false);
  // No allowlisted name is itself blocked.
  assert.deepEqual([...posix, ...win].filter(isBlocked), []);
});

Deno.test("isBlocked: provider prefixes in any case, nothing else", () => {
  for (const n of Object.keys(SECRETS).filter((n) => n !== "FOO")) assert.ok(isBlocked(n), n);
  assert.ok(isBlocked("claudecode_x"));
  assert.ok(isBlocked("aws_profile"));
  assert.equal(isBlocked("FOO"), false);
  assert.equal(isBlocked("PATH"), false);
  assert.equal(isBlocked("MY_ANTHROPIC_KEY"), false);
});

/**
 * What of the user's toolchains delegates' commands may read (src/guard/toolchains.ts), for
 * the layouts users have, built on disk: nvm, pipx and uv tools in `~/.local/bin`, rustup,
 * pyenv's shims, a prefix whose `bin` needs its `lib`; and what is never opened: the home
 * folder, `~/.local` and `~/.cargo` whole, a folder holding a credential store, a credential file
 * by identity.
 */
import assert from "node:assert/strict";
import { linkSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../support/harness.ts";
import { cacheEnv, MAX_OPENED, toolchainView } from "../../src/guard/toolchains.ts";
import { openRefusal } from "../../src/guard/toolchain_rules.ts";

function file(path: string, text = "#!/bin/sh\necho hi\n", mode = 0o755): string {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text, { mode });
  return path;
}

function link(target: string, path: string): void {
  mkdirSync(join(path, ".."), { recursive: true });
  symlinkSync(target, path);
}

function opened(view: Awaited<ReturnType<typeof toolchainView>>): string[] {
  return view.opened.map((o) => o.path);
}

Deno.test("toolchains: nvm's bin opens its version's folder, where bin/npm's link leads", async () => {
  const home = tempDir("od-tc-");
  const v20 = join(home, ".nvm/versions/node/v20.0.0");
  file(join(v20, "bin/node"));
  file(join(v20, "lib/node_modules/npm/bin/npm-cli.js"), "#!/usr/bin/env node\n");
  link("../lib/node_modules/npm/bin/npm-cli.js", join(v20, "bin/npm"));
  const view = await toolchainView({ env: { HOME: home, PATH: `${v20}/bin:/usr/bin:/bin` } });
  assert.deepEqual(opened(view), [v20]);
  assert.equal(view.opened[0]!.why, `install root of ${v20}/bin`);
  assert.equal(
    view.path,
    `${v20}/bin:/usr/bin:/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/sbin`,
  );
  assert.deepEqual(view.entries.map((e) => e.state), ["opened", "system", "system"]);
});

Deno.test("toolchains: ~/.local/bin opens alone, with each pipx or uv tool's environment and its interpreter", async () => {
  const home = tempDir("od-tc-");
  const bin = join(home, ".local/bin");
  const python = file(join(home, ".local/share/uv/python/cpython-3.12/bin/python3.12"));
  file(join(home, ".local/share/uv/python/cpython-3.12/lib/python3.12/os.py"), "");
  const venv = join(home, ".local/share/pipx/venvs/black");
  link(python, join(venv, "bin/python"));
  file(join(venv, "bin/black"), `#!${venv}/bin/python\n`);
  link(join(venv, "bin/black"), join(bin, "black"));
  file(join(bin, "mytool"));
  file(join(home, ".local/lib/python3.12/site-packages/x.py"), "");
  file(join(home, ".local/share/keyrings/login.keyring"), "KEYRING", 0o600);
  const view = await toolchainView({ env: { HOME: home, PATH: bin } });
  assert.deepEqual(
    opened(view).sort(),
    [
      bin,
      venv,
      join(home, ".local/share/uv/python/cpython-3.12"),
    ].sort(),
  );
  // `~/.local` has a lib beside bin, but holds the keyring: never opened whole.
  assert.deepEqual(view.refused, [{
    path: join(home, ".local"),
    why: `it holds a credential store (${join(home, ".local/share/keyrings")})`,
  }]);
});

Deno.test("toolchains: ~/.cargo/bin opens without ~/.cargo, with rustup's toolchains and the registry", async () => {
  const home = tempDir("od-tc-");
  file(join(home, ".cargo/bin/rustup"));
  link("rustup", join(home, ".cargo/bin/cargo"));
  file(join(home, ".cargo/credentials.toml"), "token", 0o600);
  file(join(home, ".cargo/registry/cache/x.crate"), "");
  file(join(home, ".rustup/toolchains/stable/bin/cargo"));
  file(join(home, "go/pkg/mod/cache/x"), "");
  const view = await toolchainView({ env: { HOME: home, PATH: join(home, ".cargo/bin") } });
  assert.deepEqual(opened(view), [
    join(home, ".cargo/bin"),
    join(home, ".rustup"),
    join(home, ".cargo/registry"),
    join(home, "go/pkg/mod"),
  ]);
  assert.ok(!opened(view).includes(join(home, ".cargo")));
});

Deno.test("toolchains: pyenv's shims open pyenv's root; a prefix with lib beside bin opens whole", async () => {
  const home = tempDir("od-tc-");
  file(join(home, ".pyenv/shims/python"), "#!/usr/bin/env bash\nexec pyenv exec python\n");
  file(join(home, ".pyenv/libexec/pyenv"));
  const sdk = join(home, "sdk/go1.22.0");
  file(join(sdk, "bin/go"));
  file(join(sdk, "lib/time/zoneinfo.zip"), "");
  const view = await toolchainView({
    env: { HOME: home, PATH: `${home}/.pyenv/shims:${sdk}/bin` },
  });
  assert.deepEqual(opened(view), [join(home, ".pyenv"), sdk]);
  assert.equal(view.path.split(":").slice(0, 2).join(":"), `${home}/.pyenv/shims:${sdk}/bin`);
});

Deno.test("toolchains: a PATH entry through a linked install root opens the real one, and PATH names it", async () => {
  const home = tempDir("od-tc-");
  const java = join(home, ".sdkman/candidates/java");
  file(join(java, "21.0.1-tem/bin/java"));
  file(join(java, "21.0.1-tem/lib/modules"), "");
  link("21.0.1-tem", join(java, "current"));
  const view = await toolchainView({ env: { HOME: home, PATH: `${java}/current/bin` } });
  assert.deepEqual(opened(view), [join(java, "21.0.1-tem")]);
  assert.equal(view.path.split(":")[0], join(java, "21.0.1-tem/bin"));
});

Deno.test("toolchains: the home folder, a credential store and relative entries are not opened", async () => {
  const home = tempDir("od-tc-");
  file(join(home, ".ssh/bin/x"));
  file(join(home, "bin/tool"));
  const view = await toolchainView({
    env: {
      HOME: home,
      PATH: `${home}:${home}/.ssh/bin:node_modules/.bin::${home}/missing:${home}/bin:/usr/bin`,
    },
  });
  assert.deepEqual(
    view.entries.map((e) => [e.state, e.why]),
    [
      ["not opened", "it is your home folder"],
      ["not opened", `it lies in a credential store (${join(home, ".ssh")})`],
      ["relative", undefined],
      ["relative", undefined],
      ["missing", undefined],
      ["opened", undefined],
      ["system", undefined],
    ],
  );
  assert.deepEqual(opened(view), [join(home, "bin")]);
  assert.equal(view.path.split(":")[0], join(home, "bin"));
  assert.ok(!view.path.split(":").includes(home));
});

Deno.test("toolchains: a credential file by identity is hidden in an opened folder; a link to one is not followed", async () => {
  const home = tempDir("od-tc-");
  const key = file(join(home, ".ssh/id_rsa"), "KEY", 0o600);
  const bin = join(home, ".local/bin");
  file(join(bin, "tool"));
  linkSync(key, join(bin, "notes"));
  link(key, join(bin, "key"));
  const view = await toolchainView({ env: { HOME: home, PATH: bin } });
  assert.deepEqual(opened(view), [bin]);
  assert.deepEqual(view.hidden, [{
    path: join(bin, "notes"),
    kind: "file",
    why: `a hard link of ${key}`,
  }]);
  assert.deepEqual(view.refused, [{
    path: join(bin, "key"),
    why: `it is a link to the credential file ${key}`,
  }]);
});

Deno.test("toolchains: toolchainPaths open a folder; one holding a credential store is refused, whoever's home it is", async () => {
  const home = tempDir("od-tc-");
  const outside = tempDir("od-tc-opt-");
  const jdk = join(outside, "jdk");
  file(join(jdk, "bin/java"));
  const other = join(outside, "someone");
  file(join(other, "bin/tool"));
  file(join(other, "lib/x.so"), "");
  file(join(other, ".npmrc"), "//registry/:_authToken=SECRET", 0o600);
  file(join(home, ".gradle/gradle.properties"), "mavenPassword=SECRET", 0o600);
  file(join(home, ".gradle/caches/modules-2/x"), "");
  const view = await toolchainView({
    env: { HOME: home, PATH: `${other}/bin:/usr/bin` },
    extra: [jdk, join(home, ".gradle")],
  });
  assert.deepEqual(opened(view), [join(other, "bin"), join(home, ".gradle/caches"), jdk]);
  assert.deepEqual(view.refused, [
    // Another user's home folder above a PATH entry: its `bin` only, never the rest.
    { path: other, why: `it holds a credential store (${join(other, ".npmrc")})` },
    {
      path: join(home, ".gradle"),
      why: `it holds a credential store (${join(home, ".gradle/gradle.properties")})`,
    },
  ]);
  // Gradle reads the user's dependency cache read-only, and writes its own in the job's.
  assert.equal(cacheEnv(view).GRADLE_RO_DEP_CACHE, join(home, ".gradle/caches"));
  assert.equal(cacheEnv(view).GRADLE_USER_HOME, join(home, ".cache/gradle"));
});

Deno.test("toolchains: entries in the job's directory are visible already; a folder holding it is not opened", async () => {
  const home = tempDir("od-tc-");
  const work = join(home, "code");
  const project = join(work, "app");
  file(join(project, "node_modules/.bin/tsc"));
  file(join(work, "bin/x"));
  const view = await toolchainView({
    env: { HOME: home, PATH: `${project}/node_modules/.bin:${work}` },
    roots: [project],
  });
  assert.deepEqual(view.entries.map((e) => e.state), ["job", "not opened"]);
  assert.equal(
    view.entries[1]!.why,
    `it holds the job's directory ${project}, and so what lies beside it`,
  );
  assert.deepEqual(opened(view), []);
});

Deno.test("toolchains: the server's folders are never opened", async () => {
  const home = tempDir("od-tc-");
  const state = join(home, "state");
  file(join(state, "bin/x"));
  const view = await toolchainView({
    env: { HOME: home, PATH: `${state}/bin:${home}/other` },
    serverDirs: [state],
  });
  assert.equal(view.entries[0]!.why, `it lies in the server's own folder ${state}`);
  assert.deepEqual(opened(view), []);
});

Deno.test(`toolchains: at most ${MAX_OPENED} folders are opened; the rest are said`, async () => {
  const home = tempDir("od-tc-");
  const bin = join(home, "bin");
  for (let i = 0; i < MAX_OPENED + 6; i++) {
    const target = file(join(home, "tools", `t${i}`, "run"));
    link(target, join(bin, `t${i}`));
  }
  const view = await toolchainView({ env: { HOME: home, PATH: bin } });
  assert.equal(view.opened.length, MAX_OPENED);
  assert.equal(
    view.refused.filter((r) => r.why === `more than ${MAX_OPENED} folders would be opened`).length,
    7,
  );
});

Deno.test("toolchain rules: a credential path counts below any folder, not only HOME", () => {
  const scope = { home: "/tmp/h", serverDirs: [], roots: [] };
  assert.equal(
    openRefusal("/root/.cargo", scope),
    "it holds a credential store (/root/.cargo/credentials.toml)",
  );
  assert.equal(
    openRefusal("/root/.config/gh/bin", scope),
    "it lies in a credential store (/root/.config/gh)",
  );
  assert.equal(openRefusal("/root/.cargo/bin", scope), undefined);
  assert.equal(openRefusal("/", scope), "it is the root of the file system");
  assert.equal(openRefusal("/tmp", scope), "it holds your home folder");
  assert.equal(
    openRefusal("/proc/1/root", scope),
    "it lies in /proc, which the sandbox makes afresh or keeps out",
  );
});

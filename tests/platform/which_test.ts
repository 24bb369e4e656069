import assert from "node:assert/strict";
import { join } from "node:path";
import { which } from "../../src/platform/which.ts";

const posixOnly = Deno.build.os === "windows";

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "which_test_" }));
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function file(path: string, mode = 0o755): Promise<string> {
  await Deno.mkdir(join(path, ".."), { recursive: true });
  await Deno.writeTextFile(path, "#!/bin/sh\necho hi\n");
  await Deno.chmod(path, mode);
  return path;
}

Deno.test({
  name: "which: searches the child's PATH, not this process's",
  ignore: posixOnly,
  fn: () =>
    withDir(async (dir) => {
      const childBin = join(dir, "child");
      const claude = await file(join(childBin, "claude"));
      // "sh" is on this process's PATH (checked), but not on the child's.
      const ours = { PATH: Deno.env.get("PATH") ?? "" };
      assert.notEqual(which("sh", ours, dir, false), undefined);
      const env = { PATH: `${join(dir, "missing")}::${childBin}` };
      assert.equal(which("claude", env, dir, false), claude);
      assert.equal(which("sh", env, dir, false), undefined);
      assert.equal(which("claude", {}, dir, false), undefined);
      assert.equal(which("claude", { Path: childBin }, dir, false), undefined);
    }),
});

Deno.test({
  name: "which: first match in PATH order wins",
  ignore: posixOnly,
  fn: () =>
    withDir(async (dir) => {
      const first = await file(join(dir, "a", "tool"));
      const second = await file(join(dir, "b", "tool"));
      const a = join(dir, "a");
      const b = join(dir, "b");
      assert.equal(which("tool", { PATH: `${a}:${b}` }, dir, false), first);
      assert.equal(which("tool", { PATH: `${b}:${a}` }, dir, false), second);
    }),
});

Deno.test({
  name: "which: skips non-executable files and directories",
  ignore: posixOnly,
  fn: () =>
    withDir(async (dir) => {
      await file(join(dir, "a", "tool"), 0o644);
      await Deno.mkdir(join(dir, "b", "tool"), { recursive: true });
      const good = await file(join(dir, "c", "tool"));
      const path = ["a", "b", "c"].map((d) => join(dir, d)).join(":");
      assert.equal(which("tool", { PATH: path }, dir, false), good);
      const onlyBad = ["a", "b"].map((d) => join(dir, d)).join(":");
      assert.equal(which("tool", { PATH: onlyBad }, dir, false), undefined);
    }),
});

Deno.test({
  name: "which: a name with a separator resolves against cwd and is not searched",
  ignore: posixOnly,
  fn: () =>
    withDir(async (dir) => {
      const local = await file(join(dir, "proj", "bin", "claude"));
      const onPath = await file(join(dir, "path", "claude"));
      const env = { PATH: join(dir, "path") };
      const cwd = join(dir, "proj");
      assert.equal(which("./bin/claude", env, cwd, false), local);
      assert.equal(which("bin/claude", env, cwd, false), local);
      assert.equal(which("../path/claude", env, cwd, false), onPath);
      assert.equal(which("./claude", env, cwd, false), undefined);
      assert.equal(which(local, {}, "/", false), local);
      await Deno.chmod(local, 0o644);
      assert.equal(which("./bin/claude", env, cwd, false), undefined);
    }),
});

/**
 * Windows mode on a POSIX host. `which` builds candidates with win32.join, so a PATH entry
 * "a" gives the candidate "a\\tool.exe": on POSIX that is one file name with a backslash,
 * relative to the process cwd. The calls therefore run in a child Deno whose cwd is the temp
 * dir (a chdir here would move the cwd of test files running in parallel). The x bit is
 * still needed: `isExecutableFile` checks it on the real host.
 */
async function winWhich(
  dir: string,
  calls: Array<[string, Record<string, string>]>,
): Promise<Array<string | null>> {
  const mod = new URL("../../src/platform/which.ts", import.meta.url).href;
  const code = `import { which } from ${JSON.stringify(mod)};
    const calls = JSON.parse(Deno.args[0]);
    console.log(JSON.stringify(calls.map(([c, env]) => which(c, env, Deno.cwd(), true) ?? null)));`;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", code, JSON.stringify(calls)],
    cwd: dir,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, stderr);
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

Deno.test({
  name: "which (Windows): PATHEXT, with .exe preferred over an earlier .cmd",
  ignore: posixOnly,
  fn: () =>
    withDir(async (dir) => {
      await file(join(dir, "bin\\claude.cmd"));
      await file(join(dir, "bin\\claude.exe"));
      // Names are looked up case-insensitively; .CMD is listed before .EXE.
      const env = { Path: "bin", PathExt: ".COM;.BAT;.CMD;.EXE" };
      assert.deepEqual(
        await winWhich(dir, [
          ["claude", env],
          // A name that already carries a listed extension is used as is.
          ["claude.cmd", env],
          ["claude.bat", env],
          ["claude", { PATH: "elsewhere" }],
        ]),
        ["bin\\claude.exe", "bin\\claude.cmd", null, null],
      );
      await Deno.remove(join(dir, "bin\\claude.exe"));
      assert.deepEqual(await winWhich(dir, [["claude", env], ["claude.exe", env]]), [
        "bin\\claude.cmd",
        null,
      ]);
    }),
});

Deno.test({
  name: "which (Windows): default PATHEXT, ';' separator, quoted and empty PATH entries",
  ignore: posixOnly,
  fn: () =>
    withDir(async (dir) => {
      await file(join(dir, "b\\tool.bat"));
      await file(join(dir, "b\\tool.com"));
      await file(join(dir, "a\\tool.txt"));
      await file(join(dir, "c\\tool.cmd"));
      const ab = { PATH: '"a";;"b"' };
      const ca = { PATH: "c;a;b" };
      // .txt is not in the default PATHEXT (.COM;.EXE;.BAT;.CMD), so "a" has nothing and
      // "b" gives .com before .bat; an earlier PATH entry beats a later one's better
      // extension.
      assert.deepEqual(await winWhich(dir, [["tool", ab], ["tool", ca]]), [
        "b\\tool.com",
        "c\\tool.cmd",
      ]);
    }),
});

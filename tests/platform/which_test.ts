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

/** Runs `which` in a child Deno whose working directory is `cwd` (a chdir here would move
 * the working directory of tests running in parallel). */
async function whichFrom(
  cwd: string,
  command: string,
  env: Record<string, string>,
): Promise<string | null> {
  const mod = new URL("../../src/platform/which.ts", import.meta.url).href;
  const code = `import { which } from ${JSON.stringify(mod)};
    const [c, env] = JSON.parse(Deno.args[0]);
    console.log(JSON.stringify(which(c, env, "/", false) ?? null));`;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", code, JSON.stringify([command, env])],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

Deno.test({
  name: "which: relative and empty PATH entries are never searched; the answer is absolute",
  ignore: posixOnly,
  fn: () =>
    withDir(async (dir) => {
      // A job's working directory with its own `claude` where a relative entry would look.
      const work = join(dir, "work");
      await file(join(work, "node_modules", ".bin", "claude"));
      await file(join(work, "bin", "claude"));
      await file(join(work, "claude"));
      const real = await file(join(dir, "tools", "claude"));
      const relative = "node_modules/.bin:bin::.:./bin";
      assert.equal(await whichFrom(work, "claude", { PATH: relative }), null);
      assert.equal(
        await whichFrom(work, "claude", { PATH: `${relative}:${join(dir, "tools")}` }),
        real,
      );
      // Empty at either end means the current directory too.
      assert.equal(await whichFrom(work, "claude", { PATH: `:${join(dir, "none")}:` }), null);
      assert.equal(which("claude", { PATH: relative }, work, false), undefined);
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

/** Windows mode on any host: the files are a set of names, as a Windows file system would hold. */
function winWhich(files: string[], command: string, env: Record<string, string>) {
  const present = new Set(files);
  return which(command, env, "C:\\work", true, (path) => present.has(path)) ?? null;
}

Deno.test("which (Windows): PATHEXT, with .exe preferred over an earlier .cmd", () => {
  const files = ["C:\\bin\\claude.cmd", "C:\\bin\\claude.exe"];
  // Names are looked up case-insensitively; .CMD is listed before .EXE.
  const env = { Path: "C:\\bin", PathExt: ".COM;.BAT;.CMD;.EXE" };
  assert.equal(winWhich(files, "claude", env), "C:\\bin\\claude.exe");
  // A name that already carries a listed extension is used as is.
  assert.equal(winWhich(files, "claude.cmd", env), "C:\\bin\\claude.cmd");
  assert.equal(winWhich(files, "claude.bat", env), null);
  assert.equal(winWhich(files, "claude", { PATH: "C:\\elsewhere" }), null);
  const onlyCmd = ["C:\\bin\\claude.cmd"];
  assert.equal(winWhich(onlyCmd, "claude", env), "C:\\bin\\claude.cmd");
  assert.equal(winWhich(onlyCmd, "claude.exe", env), null);
});

Deno.test("which (Windows): default PATHEXT, ';' separator, quoted and empty PATH entries", () => {
  const files = ["D:\\b\\tool.bat", "D:\\b\\tool.com", "D:\\a\\tool.txt", "D:\\c\\tool.cmd"];
  // .txt is not in the default PATHEXT (.COM;.EXE;.BAT;.CMD), so "a" has nothing and "b"
  // gives .com before .bat; an earlier PATH entry beats a later one's better extension.
  assert.equal(winWhich(files, "tool", { PATH: '"D:\\a";;"D:\\b"' }), "D:\\b\\tool.com");
  assert.equal(winWhich(files, "tool", { PATH: "D:\\c;D:\\a;D:\\b" }), "D:\\c\\tool.cmd");
});

Deno.test("which (Windows): entries that depend on the current drive or directory are skipped", () => {
  // Each of these would name a different directory in the job's working directory than in
  // ours; only the fully qualified one is searched.
  const files = [
    "bin\\tool.exe",
    "\\bin\\tool.exe",
    "C:bin\\tool.exe",
    "tool.exe",
    "\\\\srv\\share\\tool.exe",
  ];
  assert.equal(winWhich(files, "tool", { PATH: "bin;\\bin;C:bin;;." }), null);
  assert.equal(
    winWhich(files, "tool", { PATH: "bin;.;\\\\srv\\share" }),
    "\\\\srv\\share\\tool.exe",
  );
});

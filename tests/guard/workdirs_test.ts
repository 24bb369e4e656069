/** The working directory policy: the pure rules for both path flavours, then real paths. */
import { tempDir } from "../support/temp_dir.ts";
import assert from "node:assert/strict";
import { mkdirSync, realpathSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { judgeWorkdir, POSIX_FLAVOR, refusalOf, windowsFlavor } from "../../src/guard/workdirs.ts";

const home = "/home/alice";
const posix = (path: string, roots: string[] = []) =>
  refusalOf(path, { home, roots }, POSIX_FLAVOR);

Deno.test("workdirs: / and the system directories themselves are refused, projects below some are not", () => {
  const refused = [
    "/",
    "/usr",
    "/etc",
    "/bin",
    "/sbin",
    "/lib",
    "/lib64",
    "/boot",
    "/proc",
    "/sys",
    "/dev",
    "/var",
    "/var/lib",
    "/run",
    "/tmp",
    "/opt",
    "/srv",
    "/mnt",
    "/media",
    "/home",
    "/root",
    "/snap",
    "/private/tmp",
  ];
  for (const dir of refused) assert.equal(posix(dir)?.rule, "system", dir);
  for (const dir of ["/tmp/project", "/srv/app", "/opt/proj", "/mnt/data/repo", "/var/www/site"]) {
    assert.equal(posix(dir), undefined, dir);
  }
  assert.match(posix("/tmp")!.reason, /"\/tmp" is a system directory .*a project directory below/);
  assert.match(posix("/")!.reason, /root of the file system/);
});

Deno.test("workdirs: below /proc, /sys, /dev, /boot, /etc, /usr and bin/lib everything is refused", () => {
  for (
    const dir of [
      "/proc/self",
      "/proc/1/cwd",
      "/sys/kernel",
      "/dev/shm",
      "/boot/grub",
      "/etc/ssh",
      "/usr/local/src/proj",
      "/usr/lib",
      "/bin/x",
      "/lib/modules",
      "/private/etc/x",
    ]
  ) {
    const r = posix(dir);
    assert.equal(r?.rule, "system", dir);
    assert.match(r!.reason, /lies in the system directory/, dir);
  }
});

Deno.test("workdirs: $HOME, its ancestors and other users' homes are refused; a project below is fine", () => {
  assert.equal(posix(home)?.rule, "home");
  assert.match(posix(home)!.reason, /your home directory/);
  assert.equal(posix("/home/bob")?.rule, "home");
  assert.match(posix("/home/bob")!.reason, /a user's home directory/);
  assert.equal(posix("/Users/carol")?.rule, "home");
  assert.equal(posix(`${home}/src/app`), undefined);
  assert.equal(posix("/home/bob/shared-repo"), undefined);
  // A home outside /home: the directory holding it is refused too.
  const deep = refusalOf("/data/users", { home: "/data/users/alice", roots: [] }, POSIX_FLAVOR);
  assert.equal(deep?.rule, "home");
  assert.match(deep!.reason, /holds your home directory "\/data\/users\/alice"/);
  assert.equal(refusalOf("/data", { home: "/data/users/alice", roots: [] })?.rule, "home");
  assert.equal(refusalOf("/data/other", { home: "/data/users/alice", roots: [] }), undefined);
});

Deno.test("workdirs: credential stores are refused at any depth", () => {
  for (const dir of [`${home}/.ssh`, `${home}/.aws/sso`, `${home}/.config/gh`, "/srv/x/.ssh"]) {
    assert.equal(posix(dir)?.rule, "credentials", dir);
  }
  assert.match(posix(`${home}/.ssh`)!.reason, /"\/home\/alice\/\.ssh" is a credential store/);
  assert.equal(posix(`${home}/.config/nvim`), undefined);
  assert.equal(posix(`${home}/.ollama-mcp/jobs`)?.rule, "credentials");
});

Deno.test("workdirs: with workspace roots, only directories inside one of them", () => {
  const roots = [`${home}/code`, "/srv/work"];
  assert.equal(posix(`${home}/code`, roots), undefined);
  assert.equal(posix(`${home}/code/a/b`, roots), undefined);
  assert.equal(posix("/srv/work/x", roots), undefined);
  const out = posix(`${home}/codex`, roots);
  assert.equal(out?.rule, "workspace-roots");
  assert.match(out!.reason, /outside the workspace roots the user allows \(\/home\/alice\/code, /);
  assert.equal(posix("/tmp/p", roots)?.rule, "workspace-roots");
  // A root never loosens the fixed rules.
  assert.equal(posix(home, [home])?.rule, "home");
  assert.equal(posix("/", ["/"])?.rule, "system");
  assert.equal(posix("/srv/..x", ["/srv/..x"]), undefined, "a name starting with .. is inside");
});

Deno.test("workdirs: Windows paths, case-insensitively", () => {
  const win = windowsFlavor("C:\\Windows");
  const judge = (p: string) => refusalOf(p, { home: "C:\\Users\\alice", roots: [] }, win)?.rule;
  assert.equal(judge("C:\\"), "system");
  assert.equal(judge("D:\\"), "system");
  assert.equal(judge("c:\\windows\\system32"), "system");
  assert.equal(judge("C:\\Program Files"), "system");
  assert.equal(judge("C:\\Users"), "system");
  assert.equal(judge("C:\\Users\\Alice"), "home");
  assert.equal(judge("C:\\Users\\bob"), "home");
  assert.equal(judge("C:\\Users\\alice\\.ssh"), "credentials");
  assert.equal(judge("C:\\Users\\alice\\src\\app"), undefined);
  assert.equal(judge("D:\\work\\repo"), undefined);
});

Deno.test("workdirs: judged by real path, so a symlink to $HOME is $HOME", async () => {
  const base = realpathSync(tempDir("od-workdirs-"));
  const fakeHome = join(base, "home");
  const project = join(fakeHome, "project");
  mkdirSync(project, { recursive: true });
  symlinkSync(fakeHome, join(base, "link-to-home"));
  symlinkSync("/", join(base, "link-to-root"));
  symlinkSync(project, join(base, "link-to-project"));
  const policy = { home: fakeHome, workspaceRoots: [] };
  const viaLink = await judgeWorkdir(join(base, "link-to-home"), policy);
  assert.equal(viaLink.refusal?.rule, "home");
  assert.equal(viaLink.real, fakeHome);
  assert.equal(viaLink.refusal?.path, join(base, "link-to-home"));
  assert.equal((await judgeWorkdir(join(base, "link-to-root"), policy)).refusal?.rule, "system");
  const fine = await judgeWorkdir(join(base, "link-to-project"), policy);
  assert.equal(fine.refusal, undefined);
  assert.equal(fine.real, project);
  // Roots are compared by real path too.
  const rooted = await judgeWorkdir(project, {
    home: fakeHome,
    workspaceRoots: [join(base, "link-to-home")],
  });
  assert.equal(rooted.refusal, undefined);
  const outside = await judgeWorkdir(base, { home: "/nonexistent", workspaceRoots: [project] });
  assert.equal(outside.refusal?.rule, "workspace-roots");
  await assert.rejects(judgeWorkdir(join(base, "missing"), policy), /ENOENT|No such file/);
});

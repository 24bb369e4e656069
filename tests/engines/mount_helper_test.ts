/**
 * The mount helper (src/engines/mount_helper.ts) with real bubblewrap, in both engines'
 * layouts: past MOUNT_HELPER_FROM read-only paths the system's Python holds them read-only
 * instead of bubblewrap. What a command inside tries, as an attacker would: write each kind of
 * held path, undo the mounts (umount, remount read-write, from a user namespace of its own
 * too), read a secret masked inside a held folder, keep a capability, and get its own code run
 * by the helper (a `ctypes.py` in the working directory, PYTHON* variables). A path the helper
 * cannot mount ends the sandbox before the command runs.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { jailArgs, type JailLayout } from "../../src/engines/claude/jail.ts";
import { bwrapArgs, type SandboxLayout } from "../../src/engines/native/sandbox/bwrap_args.ts";
import { helperShare, MOUNT_HELPER_FROM, mountHelperFor } from "../../src/engines/mount_helper.ts";
import { bwrapCommand, identityOf, NOBODY_UID } from "../../src/engines/bwrap_base.ts";
import { isRoot } from "../../src/platform/runtime.ts";
import { PYTHON_CANDIDATES } from "../../src/platform/posix/inotify_helper.ts";
import { tempDir } from "../support/harness.ts";

const BWRAP = ["/usr/bin/bwrap", "/bin/bwrap"].find(existsSync);
const linux = Deno.build.os === "linux" && BWRAP !== undefined;

/** Projects below `top`, each with the five host-run paths: 30 of them make 150 to hold. */
function projects(top: string, count = 30): string[] {
  const held: string[] = [];
  for (let i = 0; i < count; i++) {
    const p = join(top, "nested", `p${i}`);
    for (const dir of [".git", ".claude", ".vscode"]) mkdirSync(join(p, dir), { recursive: true });
    writeFileSync(join(p, ".git", "config"), "[core]\n");
    writeFileSync(join(p, ".claude", "settings.json"), "{}\n");
    writeFileSync(join(p, ".vscode", "tasks.json"), "{}\n");
    writeFileSync(join(p, "CLAUDE.md"), "# p\n");
    writeFileSync(join(p, ".envrc"), "export A=1\n");
    for (const name of [".git", ".claude", ".vscode", "CLAUDE.md", ".envrc"]) {
      held.push(join(p, name));
    }
  }
  return held;
}

/**
 * What the command inside does, each line a finding: writes to held paths and ordinary ones,
 * attempts on the mounts, the capabilities left, and the masked secret's content.
 */
const ATTACK = `
try() { if "$@" 2>/dev/null; then echo "ok: $*"; else echo "refused: $*"; fi; }
try sh -c 'echo x >> nested/p3/.envrc'
try sh -c 'echo x >> nested/p3/CLAUDE.md'
try sh -c 'echo x > nested/p3/.git/hooks-post-checkout'
try sh -c 'echo x > nested/p29/.claude/new.json'
try sh -c 'echo x > nested/p3/ordinary.txt'
try umount nested/p3/.git
try umount -l nested/p3/.envrc
try mount -o remount,rw,bind nested/p3/.git
try unshare -Urm sh -c 'umount nested/p3/.git'
try unshare -Urm sh -c 'mount -o remount,rw,bind nested/p3/.git'
try unshare -Urm sh -c 'echo x > nested/p3/.git/y'
try sh -c 'echo x > nested/p5/.claude/.config/gh/hosts.yml'
grep '^Cap' /proc/self/status
echo "secret: $(cat nested/p5/.claude/credentials.json)"
echo "store: $(ls -A nested/p6/.aws)"
try sh -c 'echo x > nested/p6/.aws/credentials'
`;

function expectConfined(out: string, what: string) {
  for (
    const line of [
      "refused: sh -c echo x >> nested/p3/.envrc",
      "refused: sh -c echo x >> nested/p3/CLAUDE.md",
      "refused: sh -c echo x > nested/p3/.git/hooks-post-checkout",
      "refused: sh -c echo x > nested/p29/.claude/new.json",
      "ok: sh -c echo x > nested/p3/ordinary.txt",
      "refused: umount nested/p3/.git",
      "refused: umount -l nested/p3/.envrc",
      "refused: mount -o remount,rw,bind nested/p3/.git",
      "refused: unshare -Urm sh -c umount nested/p3/.git",
      "refused: unshare -Urm sh -c mount -o remount,rw,bind nested/p3/.git",
      "refused: unshare -Urm sh -c echo x > nested/p3/.git/y",
      // A writable folder bound below a held one (a pin) is read-only there too.
      "refused: sh -c echo x > nested/p5/.claude/.config/gh/hosts.yml",
      "secret: ",
      "store: ",
      "refused: sh -c echo x > nested/p6/.aws/credentials",
    ]
  ) assert.ok(out.split("\n").includes(line), `${what}: no "${line}" in:\n${out}`);
  for (const cap of ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"]) {
    assert.match(out, new RegExp(`^${cap}:\\s+0+$`, "m"), `${what}: ${cap} left\n${out}`);
  }
}

/** A project of 30 nested ones with a secret (masked) and a pinned folder inside a held one. */
function scene(top = tempDir("od-mount-helper-")) {
  const held = projects(top);
  const secret = join(top, "nested", "p5", ".claude", "credentials.json");
  writeFileSync(secret, "SECRET-TOKEN\n");
  const pin = join(top, "nested", "p5", ".claude", ".config");
  mkdirSync(join(pin, "gh"), { recursive: true });
  // A credential store (a folder), hidden by an empty read-only folder.
  const store = join(top, "nested", "p6", ".aws");
  mkdirSync(store);
  writeFileSync(join(store, "credentials"), "STORE-SECRET\n");
  // Any user may write what the tests create: as root, the sandbox runs as nobody.
  spawnSync("chmod", ["-R", "a+rwX", top]);
  return { top, held, secret, pin, store };
}

function run(argv: string[], env: Record<string, string> = {}, as: string[] = []) {
  const cmd = bwrapCommand(BWRAP!, argv);
  const r = spawnSync(as[0] ?? cmd.command, [
    ...as.slice(1),
    ...(as[0] ? [cmd.command] : []),
    ...cmd.args,
  ], {
    encoding: "utf8",
    env: { PATH: "/usr/bin:/bin", ...env },
    timeout: 60_000,
  });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

function claudeLayout(
  { top, held, secret, pin, store }: ReturnType<typeof scene>,
): JailLayout {
  return {
    cwd: top,
    writable: [top],
    readOnly: [],
    readOnlyInside: held,
    masks: [{ path: secret, kind: "file" }, { path: store, kind: "dir" }],
    binds: [{ source: pin, dest: pin }],
    home: join(top, "home-not-there"),
    root: isRoot(),
    tmpMb: 16,
    identities: held.map((path) => ({ path, id: identityOf(path)! })),
  };
}

/** The native sandbox's layout of the scene: what claudeLayout holds, as mounts.ts plans it. */
function nativeLayout(place: ReturnType<typeof scene>, root: boolean): SandboxLayout {
  return {
    cwd: place.top,
    writable: [place.top],
    root,
    mounts: {
      readOnly: place.held,
      placeholders: [],
      masks: [{ path: place.secret, kind: "file" }, { path: place.store, kind: "dir" }],
      unheld: [],
      pins: [place.pin],
      identities: place.held.map((path) => ({ path, id: identityOf(path)! })),
    },
  };
}

Deno.test({
  name: "mount helper: chosen past its threshold, for names it can be given, with a system Python",
  ignore: !linux,
  fn() {
    const few = Array.from({ length: MOUNT_HELPER_FROM - 1 }, (_, i) => `/p/${i}/.envrc`);
    assert.equal(mountHelperFor(BWRAP!, helperShare(few).helper), undefined);
    // Masks count as much as read-only binds.
    const mask = { path: "/p/last/.aws", kind: "dir" as const };
    const chosen = mountHelperFor(BWRAP!, helperShare(few, [mask]).helper);
    assert.ok(chosen && PYTHON_CANDIDATES.includes(chosen), `chose ${chosen}`);
    // Nor where a trial sandbox fails: here a "bubblewrap" that runs nothing.
    assert.equal(mountHelperFor("/bin/false", helperShare(few, [mask]).helper), undefined);
    // A name that is not UTF-8 (`\xff` as file_names.ts holds it) cannot be the helper's
    // argument: bubblewrap mounts it, and it does not count towards the threshold. Nor does a
    // mask inside a folder bubblewrap covers with a view afterwards (git's objects/pack).
    const raw = "/p/proj\udcff/.envrc";
    const inView = { path: "/p/1/.git/objects/pack/pack-1.pack", kind: "file" as const };
    const share = helperShare([...few, raw], [mask, inView], ["/p/1/.git/objects/pack"]);
    assert.deepEqual(share.helper, { readOnly: few, masks: [mask] });
    assert.deepEqual(share.bwrap, { readOnly: [raw], masks: [inView] });
    assert.equal(
      mountHelperFor(
        BWRAP!,
        helperShare([...few, raw], [inView], ["/p/1/.git/objects/pack"]).helper,
      ),
      undefined,
    );
  },
});

Deno.test({
  name: "mount helper, claude jail: 150 held paths stay read-only, mounts cannot be undone, " +
    "no capability is left, a masked secret stays hidden",
  ignore: !linux,
  fn() {
    const place = scene();
    const { top, held } = place;
    const python = mountHelperFor(BWRAP!, helperShare(held).helper);
    assert.ok(python, "this machine has a system Python with ctypes");
    const layout = claudeLayout(place);
    const argv = jailArgs({ ...layout, mountHelper: python }, "/bin/sh", ["-c", ATTACK]);
    // The held paths are the helper's arguments, not bubblewrap's.
    const end = argv.indexOf("--");
    assert.ok(held.every((p) => argv.indexOf(p) > end), "a held path is still bubblewrap's");
    for (const masked of [place.secret, place.store]) {
      assert.ok(argv.indexOf(masked) > end, `${masked} is still bubblewrap's`);
    }
    assert.ok(argv.includes("CAP_SYS_ADMIN"));
    const { code, out } = run(argv);
    assert.equal(code, 0, out);
    expectConfined(out, "claude jail");
    assert.equal(readFileSync(join(top, "nested", "p3", ".envrc"), "utf8"), "export A=1\n");
    assert.equal(readFileSync(join(top, "nested", "p3", "ordinary.txt"), "utf8"), "x\n");
    // The same without the helper: bubblewrap holds them as before. Without the pin, which
    // bubblewrap would bind writable over the held folder (planJail never pins inside one).
    const plain = run(jailArgs({ ...layout, binds: [] }, "/bin/sh", ["-c", ATTACK]));
    assert.equal(plain.code, 0, plain.out);
    expectConfined(plain.out, "claude jail, bubblewrap alone");
  },
});

Deno.test({
  name: "mount helper, native sandbox: 150 held paths stay read-only, mounts cannot be undone, " +
    "no capability is left, a masked secret stays hidden",
  ignore: !linux,
  fn() {
    const place = scene();
    const { top, held } = place;
    const python = mountHelperFor(BWRAP!, helperShare(held).helper)!;
    const argv = bwrapArgs({ ...nativeLayout(place, isRoot()), mountHelper: python }, ATTACK);
    assert.ok(argv.includes("CAP_SYS_ADMIN"));
    const { code, out } = run(argv);
    assert.equal(code, 0, out);
    expectConfined(out, "native sandbox");
    assert.equal(readFileSync(join(top, "nested", "p3", "CLAUDE.md"), "utf8"), "# p\n");
  },
});

Deno.test({
  name: "mount helper: a planted ctypes.py and PYTHON* variables do not run; a path it cannot " +
    "mount ends the sandbox (125) before the command",
  ignore: !linux,
  fn() {
    const place = scene();
    const { top, held } = place;
    const python = mountHelperFor(BWRAP!, helperShare(held).helper)!;
    const marker = join(top, "planted-ran");
    const plant = `open(${JSON.stringify(marker)}, "w").write("ran")\n`;
    for (const name of ["ctypes.py", "os.py", "sitecustomize.py", "startup.py"]) {
      writeFileSync(join(top, name), plant);
    }
    const layout = claudeLayout(place);
    const argv = jailArgs({ ...layout, mountHelper: python }, "/bin/sh", [
      "-c",
      "echo ran-command",
    ]);
    const env = { PYTHONPATH: top, PYTHONSTARTUP: join(top, "startup.py"), PYTHONHOME: top };
    const ok = run(argv, env);
    assert.equal(ok.code, 0, ok.out);
    assert.match(ok.out, /ran-command/);
    assert.equal(existsSync(marker), false, "the helper ran a file of the project");
    // A held path gone before the sandbox starts: nothing runs, and the reply says why.
    rmSync(held[7]!, { recursive: true });
    const gone = layout.identities!.filter((i) => i.path !== held[7]);
    const failed = run(
      jailArgs({ ...layout, identities: gone, mountHelper: python }, "/bin/sh", [
        "-c",
        `echo ran > ${marker}`,
      ]),
    );
    assert.equal(failed.code, 125, failed.out);
    assert.match(
      failed.out,
      /the sandbox could not be set up: binding .*\/p1\/\.vscode: No such file/,
    );
    assert.equal(existsSync(marker), false, "the command ran with a path left unmounted");
  },
});

Deno.test({
  name: "mount helper: as root the command still runs as nobody",
  ignore: !linux || !isRoot(),
  fn() {
    const place = scene();
    const { held } = place;
    const python = mountHelperFor(BWRAP!, helperShare(held).helper)!;
    const layout = claudeLayout(place);
    const { code, out } = run(jailArgs({ ...layout, mountHelper: python }, "/usr/bin/id", ["-u"]));
    assert.equal(code, 0, out);
    assert.equal(out.trim(), String(NOBODY_UID));
  },
});

/** setpriv, to start bubblewrap as an ordinary user the way users run the server. */
const SETPRIV = ["/usr/bin/setpriv", "/bin/setpriv"].find(existsSync);

Deno.test({
  name: "mount helper, started by an ordinary user (not root): the same holds",
  ignore: !linux || !isRoot() || SETPRIV === undefined,
  fn() {
    // Directly in /tmp: the test runner's own temporary folders are closed to other users.
    const top = mkdtempSync("/tmp/od-mount-helper-user-");
    try {
      asUser(top);
    } finally {
      rmSync(top, { recursive: true, force: true });
    }
  },
});

function asUser(top: string) {
  {
    const place = scene(top);
    const python = mountHelperFor(BWRAP!, helperShare(place.held).helper)!;
    const layout = { ...claudeLayout(place), root: false };
    const user = [SETPRIV!, "--reuid", "65534", "--regid", "65534", "--clear-groups"];
    const { code, out } = run(
      jailArgs({ ...layout, mountHelper: python }, "/bin/sh", ["-c", ATTACK]),
      {},
      user,
    );
    assert.equal(code, 0, out);
    expectConfined(out, "claude jail as a user");
    const native = run(
      bwrapArgs({ ...nativeLayout(place, false), mountHelper: python }, ATTACK),
      {},
      user,
    );
    assert.equal(native.code, 0, native.out);
    expectConfined(native.out, "native sandbox as a user");
  }
}

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";
import { bwrapArgs } from "../../../../src/engines/native/sandbox/bwrap_args.ts";
import {
  findBwrap,
  INSTALL_BWRAP_HINT,
  shellRunner,
} from "../../../../src/engines/native/sandbox/shell_runner.ts";
import { probeSandbox } from "../../../../src/engines/native/sandbox/probe.ts";
import { type CommandRequest, runShell } from "../../../../src/engines/native/sandbox/run_shell.ts";
import { TailBuffer } from "../../../../src/platform/command_run.ts";
import { BWRAP, bwrapTest, hasBwrap, withTempFolder } from "./support.ts";

const bwrap = { kind: "bwrap", bwrap: BWRAP } as const;
const SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** A test that needs the real bubblewrap. */
interface Dirs {
  top: string;
  cwd: string;
  extra: string;
  outside: string;
}

async function withDirs(fn: (d: Dirs) => Promise<void>): Promise<void> {
  await withTempFolder("sandbox_test_", async (top) => {
    const d = {
      top,
      cwd: join(top, "proj"),
      extra: join(top, "extra"),
      outside: join(top, "outside"),
    };
    for (const dir of [d.cwd, d.extra, d.outside]) await mkdir(dir);
    await fn(d);
  });
}

function request(d: Dirs, command: string, extra: Partial<CommandRequest> = {}): CommandRequest {
  return {
    command,
    cwd: d.cwd,
    writable: [d.cwd, d.extra],
    timeoutMs: 10_000,
    signal: new AbortController().signal,
    keepChars: 10_000,
    ...extra,
  };
}

const unique = () => `${Date.now() % 100000}${Math.floor(Math.random() * 1e6)}`;

/** Host pids whose command line contains `marker`, this process excluded. */
async function hostProcessesWith(marker: string): Promise<number[]> {
  const out: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === Deno.pid) continue;
    try {
      const cmdline = (await readFile(`/proc/${entry}/cmdline`, "utf8")).replaceAll("\0", " ");
      if (cmdline.includes(marker)) out.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

async function waitFor(what: string, check: () => Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

// ---------------------------------------------------------------------------------------------
// bwrapArgs

const fakeHost = (path: string) =>
  path === "/bin"
    ? { link: "usr/bin" }
    : path === "/lib"
    ? "dir" as const
    : path === "/lib64"
    ? { link: "usr/lib64" }
    : "missing" as const;

function pairIndex(args: string[], ...seq: string[]): number {
  for (let i = 0; i + seq.length <= args.length; i++) {
    if (seq.every((s, j) => args[i + j] === s)) return i;
  }
  return -1;
}

Deno.test("bwrapArgs: isolation flags, clean environment, read-only system", () => {
  const args = bwrapArgs({ cwd: "/w/proj", writable: ["/w/proj"] }, "true", fakeHost);
  for (const flag of ["--unshare-all", "--die-with-parent", "--new-session", "--clearenv"]) {
    assert.ok(args.indexOf(flag) !== -1 && args.indexOf(flag) < args.indexOf("--"), flag);
  }
  assert.ok(pairIndex(args, "--setenv", "PATH", SANDBOX_PATH) >= 0);
  assert.ok(pairIndex(args, "--setenv", "HOME", "/tmp") >= 0);
  assert.ok(pairIndex(args, "--setenv", "TMPDIR", "/tmp") >= 0);
  assert.ok(pairIndex(args, "--setenv", "LANG", "C.UTF-8") >= 0);
  assert.ok(pairIndex(args, "--ro-bind", "/usr", "/usr") >= 0);
  assert.ok(pairIndex(args, "--ro-bind-try", "/etc", "/etc") >= 0);
  assert.ok(pairIndex(args, "--proc", "/proc") >= 0);
  assert.ok(pairIndex(args, "--dev", "/dev") >= 0);
  assert.ok(!args.includes("--share-net"));
  assert.ok(!args.includes("--cap-drop"));
  // Only the listed directories are bound read-write.
  assert.deepEqual(args.filter((_, i) => args[i - 1] === "--bind"), ["/w/proj"]);
});

Deno.test("bwrapArgs: system dirs follow the host: links stay links, dirs are bound, missing skipped", () => {
  const args = bwrapArgs({ cwd: "/w", writable: ["/w"] }, "true", fakeHost);
  assert.ok(pairIndex(args, "--symlink", "usr/bin", "/bin") >= 0);
  assert.ok(pairIndex(args, "--ro-bind", "/lib", "/lib") >= 0);
  assert.ok(pairIndex(args, "--symlink", "usr/lib64", "/lib64") >= 0);
  for (const missing of ["/sbin", "/lib32", "/libx32"]) {
    assert.ok(!args.includes(missing), `${missing} left out`);
  }
});

Deno.test("bwrapArgs: the fresh /tmp comes before the writable binds, so a job under /tmp stays visible", () => {
  const args = bwrapArgs(
    { cwd: "/tmp/job/proj", writable: ["/tmp/job/proj", "/tmp/job/extra"] },
    "true",
    fakeHost,
  );
  const tmpfs = pairIndex(args, "--tmpfs", "/tmp");
  assert.ok(tmpfs >= 0);
  assert.ok(tmpfs < pairIndex(args, "--bind", "/tmp/job/proj", "/tmp/job/proj"));
  assert.ok(tmpfs < pairIndex(args, "--bind", "/tmp/job/extra", "/tmp/job/extra"));
});

Deno.test("bwrapArgs: ends with chdir and the command as one argument to /bin/sh -c", () => {
  const command = `echo "a b" 'c' $HOME; ls`;
  const args = bwrapArgs({ cwd: "/w/p q", writable: ["/w/p q"] }, command, fakeHost);
  assert.deepEqual(args.slice(-6), ["--chdir", "/w/p q", "--", "/bin/sh", "-c", command]);
});

Deno.test("bwrapArgs: as root every capability is dropped inside", () => {
  const args = bwrapArgs({ cwd: "/w", writable: ["/w"], root: true }, "true", fakeHost);
  const i = pairIndex(args, "--cap-drop", "ALL");
  assert.ok(i >= 0 && i < args.indexOf("--"));
});

// ---------------------------------------------------------------------------------------------
// TailBuffer

Deno.test("TailBuffer: keeps the last characters and counts what it dropped", () => {
  const tail = new TailBuffer(5);
  tail.push("abc");
  tail.push("");
  tail.push("defgh");
  assert.equal(tail.text(), "defgh");
  assert.equal(tail.dropped, 3);
  tail.push("ij");
  assert.equal(tail.text(), "fghij");
  assert.equal(tail.dropped, 5);
});

Deno.test("TailBuffer: short input is kept whole; many small pushes stay exact", () => {
  const short = new TailBuffer(100);
  short.push("hello");
  assert.equal(short.text(), "hello");
  assert.equal(short.dropped, 0);
  const many = new TailBuffer(10);
  let all = "";
  for (let i = 0; i < 1000; i++) {
    const piece = String(i % 10);
    many.push(piece);
    all += piece;
  }
  assert.equal(many.text(), all.slice(-10));
  assert.equal(many.dropped, all.length - 10);
});

Deno.test("TailBuffer: keep 0 keeps nothing", () => {
  const tail = new TailBuffer(0);
  tail.push("abc");
  assert.equal(tail.text(), "");
  assert.equal(tail.dropped, 3);
});

// ---------------------------------------------------------------------------------------------
// shellRunner, findBwrap, probeSandbox

Deno.test("shellRunner: off runs unconfined whatever is installed, and says so", () => {
  const off = {
    kind: "unconfined",
    why: "off (the sandbox setting is off)",
    reason: "the sandbox setting is off",
  };
  assert.deepEqual(shellRunner("off", BWRAP), off);
  assert.deepEqual(shellRunner("off", ""), off);
});

Deno.test({
  name: "shellRunner: on Linux, bwrap when found; without it unconfined and saying why, or " +
    "refused when the sandbox is required",
  ignore: process.platform !== "linux",
  fn() {
    assert.deepEqual(shellRunner("on", "/opt/bwrap"), { kind: "bwrap", bwrap: "/opt/bwrap" });
    assert.deepEqual(shellRunner("required", "/opt/bwrap"), {
      kind: "bwrap",
      bwrap: "/opt/bwrap",
    });
    const unconfined = shellRunner("on", "");
    assert.equal(unconfined.kind, "unconfined");
    assert.match(
      unconfined.kind === "unconfined" ? unconfined.why : "",
      /^off \(bubblewrap is missing, so commands run as you: apt install bubblewrap/,
    );
    const refused = shellRunner("required", "");
    assert.equal(refused.kind, "refused");
    assert.ok(refused.kind === "refused" && refused.problem.advice === INSTALL_BWRAP_HINT);
    assert.match(refused.kind === "refused" ? refused.problem.facts : "", /not installed/);
  },
});

Deno.test({
  name: "findBwrap: found in the usual places even with an empty PATH",
  ignore: !hasBwrap,
  fn() {
    assert.equal(findBwrap({ PATH: "" }), BWRAP);
    assert.equal(findBwrap({}), BWRAP);
  },
});

bwrapTest("probeSandbox: proves bubblewrap runs a command here", async () => {
  const probe = await probeSandbox("on");
  assert.equal(probe.ok, true, probe.detail);
  assert.match(probe.detail, /bwrap runs commands \(exit 0\)/);
  assert.deepEqual(await probeSandbox("off"), {
    ok: true,
    unconfined: true,
    detail: "native Bash: sandbox off (the sandbox setting is off)",
  });
});

// ---------------------------------------------------------------------------------------------
// runShell in real bubblewrap

bwrapTest("runShell: exit codes, stdout and stderr, in the job's cwd", async () => {
  await withDirs(async (d) => {
    const ok = await runShell(bwrap, request(d, "pwd; echo to-stderr >&2"));
    assert.equal(ok.exitCode, 0);
    assert.equal(ok.signal, null);
    assert.equal(ok.timedOut, false);
    assert.equal(ok.aborted, false);
    assert.match(ok.output, new RegExp(`^${d.cwd}\n`));
    assert.match(ok.output, /to-stderr\n/);
    assert.ok(ok.durationMs >= 0);
    const failed = await runShell(bwrap, request(d, "exit 3"));
    assert.equal(failed.exitCode, 3);
    assert.equal(failed.output, "");
  });
});

bwrapTest(
  "runShell: only the last keepChars of the output are kept, the rest counted",
  async () => {
    await withDirs(async (d) => {
      const result = await runShell(
        bwrap,
        request(d, "head -c 5000 /dev/zero | tr '\\0' a; printf END", { keepChars: 100 }),
      );
      assert.equal(result.exitCode, 0);
      assert.equal(result.output, "a".repeat(97) + "END");
      assert.equal(result.droppedChars, 4903);
    });
  },
);

bwrapTest("runShell: stdin is /dev/null, so a command reading it ends at once", async () => {
  await withDirs(async (d) => {
    const result = await runShell(
      bwrap,
      request(d, 'read line; echo "read=$?"; cat; echo after', { timeoutMs: 5000 }),
    );
    assert.equal(result.timedOut, false);
    assert.equal(result.output, "read=1\nafter\n");
  });
});

bwrapTest(
  "runShell: writes in cwd and add_dirs reach the host; elsewhere they do not",
  async () => {
    await withDirs(async (d) => {
      const result = await runShell(
        bwrap,
        request(
          d,
          `echo in-cwd > made.txt && echo in-extra > ${d.extra}/made.txt && ` +
            `(mkdir -p ${d.outside} && echo leak > ${d.outside}/made.txt; true)`,
        ),
      );
      assert.equal(result.exitCode, 0, result.output);
      assert.equal(await readFile(join(d.cwd, "made.txt"), "utf8"), "in-cwd\n");
      assert.equal(await readFile(join(d.extra, "made.txt"), "utf8"), "in-extra\n");
      assert.ok(!existsSync(join(d.outside, "made.txt")), "outside the writable dirs");
    });
  },
);

bwrapTest("runShell: /tmp and $HOME writes vanish with the command", async () => {
  await withDirs(async (d) => {
    const marker = `sandbox-marker-${unique()}`;
    const hostHome = process.env.HOME ?? "/root";
    const result = await runShell(
      bwrap,
      request(
        d,
        `echo x > /tmp/${marker} && echo y > "$HOME/${marker}.home" && cat /tmp/${marker} && ` +
          `(echo z > ${hostHome}/${marker}.hosthome; true)`,
      ),
    );
    assert.equal(result.exitCode, 0, result.output);
    assert.match(result.output, /^x\n/, "the write worked inside");
    assert.ok(!existsSync(`/tmp/${marker}`));
    assert.ok(!existsSync(`/tmp/${marker}.home`));
    assert.ok(!existsSync(join(hostHome, `${marker}.home`)));
    assert.ok(!existsSync(join(hostHome, `${marker}.hosthome`)));
  });
});

bwrapTest("runShell: /usr and /etc are read-only inside", async () => {
  await withDirs(async (d) => {
    const marker = `ro-${unique()}`;
    const result = await runShell(
      bwrap,
      request(d, `touch /usr/${marker}; echo "usr=$?"; touch /etc/${marker}; echo "etc=$?"`),
    );
    assert.doesNotMatch(result.output, /usr=0/);
    assert.doesNotMatch(result.output, /etc=0/);
    assert.ok(!existsSync(`/usr/${marker}`));
    assert.ok(!existsSync(`/etc/${marker}`));
  });
});

/** Starts a TCP listener that counts connections; `probe` runs a connect to it. */
async function withListener(fn: (port: number, accepted: () => number) => Promise<void>) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let accepted = 0;
  const serving = (async () => {
    for await (const conn of listener) {
      accepted++;
      conn.close();
    }
  })();
  try {
    await fn((listener.addr as Deno.NetAddr).port, () => accepted);
  } finally {
    listener.close();
    await serving.catch(() => {});
  }
}

const connectTo = (port: number) =>
  `bash -c 'exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected'; echo "rc=$?"`;

bwrapTest("runShell: no network inside; the same connect works outside (control)", async () => {
  await withDirs(async (d) => {
    await withListener(async (port, accepted) => {
      const control = await runShell(
        { kind: "unconfined", why: "off (test)", reason: "test" },
        request(d, connectTo(port)),
      );
      assert.match(control.output, /connected\nrc=0/, "the probe itself works");
      await waitFor("the control connection", () => Promise.resolve(accepted() === 1));
      const inside = await runShell(bwrap, request(d, connectTo(port)));
      assert.doesNotMatch(inside.output, /connected/);
      assert.doesNotMatch(inside.output, /rc=0/);
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(accepted(), 1, "the listener got no connection from the sandbox");
    });
  });
});

bwrapTest(
  "runShell: the environment is clean: the server's secrets are absent inside",
  async () => {
    await withDirs(async (d) => {
      const poison = {
        OPENAI_API_KEY: "sk-poison-openai",
        AWS_SECRET_ACCESS_KEY: "poison-aws",
        ANTHROPIC_API_KEY: "poison-anthropic",
        SANDBOX_TEST_SECRET: "poison-custom",
      };
      const saved = Object.fromEntries(Object.keys(poison).map((k) => [k, Deno.env.get(k)]));
      for (const [k, v] of Object.entries(poison)) Deno.env.set(k, v);
      try {
        const result = await runShell(bwrap, request(d, "env"));
        assert.equal(result.exitCode, 0);
        const env = Object.fromEntries(
          result.output.trim().split("\n").map((
            l,
          ) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
        );
        for (const name of Object.keys(poison)) assert.equal(env[name], undefined, name);
        assert.doesNotMatch(result.output, /poison/);
        assert.equal(env.PATH, SANDBOX_PATH);
        assert.equal(env.HOME, "/tmp");
        assert.equal(env.LANG, "C.UTF-8");
        // Unconfined commands (sandbox off) do not get them either.
        const open = await runShell(
          { kind: "unconfined", why: "off (test)", reason: "test" },
          request(d, "env"),
        );
        assert.doesNotMatch(open.output, /poison/);
      } finally {
        for (const [k, v] of Object.entries(saved)) {
          if (v === undefined) Deno.env.delete(k);
          else Deno.env.set(k, v);
        }
      }
    });
  },
);

bwrapTest("runShell: a timeout kills the command and everything it started", async () => {
  await withDirs(async (d) => {
    const id = unique();
    const started = performance.now();
    const result = await runShell(
      bwrap,
      request(d, `sleep 91.${id} & sleep 92.${id}; wait`, { timeoutMs: 300 }),
    );
    const elapsed = performance.now() - started;
    assert.equal(result.timedOut, true);
    assert.equal(result.aborted, false);
    assert.equal(result.exitCode, null);
    assert.ok(elapsed >= 290 && elapsed < 5000, `took ${elapsed} ms`);
    await waitFor("the sleeps to be gone", async () => (await hostProcessesWith(id)).length === 0);
  });
});

bwrapTest("runShell: aborting kills the command; no process is left afterwards", async () => {
  await withDirs(async (d) => {
    const id = unique();
    const ac = new AbortController();
    const running = runShell(
      bwrap,
      request(d, `sleep 93.${id} & sleep 94.${id}; wait`, { signal: ac.signal, timeoutMs: 30_000 }),
    );
    await waitFor("both sleeps to start", async () => (await hostProcessesWith(id)).length >= 2);
    const started = performance.now();
    ac.abort();
    const result = await running;
    assert.equal(result.aborted, true);
    assert.equal(result.timedOut, false);
    assert.equal(result.exitCode, null);
    assert.ok(performance.now() - started < 5000);
    assert.deepEqual(await hostProcessesWith(id), []);
  });
});

bwrapTest("runShell: an already aborted signal still ends the command at once", async () => {
  await withDirs(async (d) => {
    const started = performance.now();
    const result = await runShell(
      bwrap,
      request(d, "sleep 30", { signal: AbortSignal.abort(), timeoutMs: 30_000 }),
    );
    assert.equal(result.aborted, true);
    assert.ok(performance.now() - started < 5000);
  });
});

Deno.test("runShell: a bubblewrap that cannot start is reported, not thrown", async () => {
  await withDirs(async (d) => {
    const result = await runShell(
      { kind: "bwrap", bwrap: join(d.top, "no-such-bwrap") },
      request(d, "echo hi"),
    );
    assert.equal(result.exitCode, null);
    assert.match(result.output, /Cannot start/);
    assert.match(result.output, /no-such-bwrap/);
  });
});

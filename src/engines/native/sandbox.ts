/**
 * Runs the native engine's shell commands. On Linux every command runs in bubblewrap:
 * an empty root with the system read-only, only the job's directories writable, no
 * network, no inherited environment. When the sandbox cannot be had the command is
 * refused (fail closed); running unconfined needs `sandbox: "off"` set by the user.
 */
import { lstatSync, readlinkSync, statSync } from "node:fs";
import process from "node:process";
import { isLinux, isWindows } from "../../platform/runtime.ts";
import { SpawnError, spawnProcess } from "../../platform/spawn.ts";
import { killSession, killTree } from "../../platform/tree_kill.ts";
import { which } from "../../platform/which.ts";

export type SandboxMode = "on" | "off";

/** PATH inside the sandbox: the system's, which is read-only there. */
const SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/** Top-level names that are symlinks into /usr on merged-/usr systems, or real dirs. */
const SYSTEM_DIRS = ["bin", "sbin", "lib", "lib32", "lib64", "libx32"];
const KILL_GRACE_MS = 1000;

export const INSTALL_BWRAP_HINT =
  "Install bubblewrap (Debian/Ubuntu: apt install bubblewrap; Fedora: dnf install bubblewrap; " +
  "Arch: pacman -S bubblewrap), or allow unconfined commands with " +
  "`ollama-delegate config --sandbox off`";

/** Where the shell runs, or why it cannot. */
export type ShellRunner =
  | { kind: "bwrap"; bwrap: string }
  | { kind: "unconfined" }
  | { kind: "refused"; reason: string };

let found: { path: string | undefined } | undefined;

/**
 * Finds bubblewrap, system locations first and only then the server's PATH (which may
 * include a directory a delegate can write), once per process.
 */
export function findBwrap(
  env: Record<string, string | undefined> = process.env,
): string | undefined {
  found ??= {
    path: which("bwrap", { PATH: "/usr/bin:/bin:/usr/local/bin" }, "/") ??
      which("bwrap", { PATH: env.PATH ?? "" }, "/"),
  };
  return found.path;
}

/** Decides how the Bash tool runs under `mode` on this machine. */
export function shellRunner(
  mode: SandboxMode,
  bwrap: string | undefined = findBwrap(),
): ShellRunner {
  if (mode === "off") return { kind: "unconfined" };
  if (!isLinux) {
    return {
      kind: "refused",
      reason: "Bash is refused: the native engine's sandbox (bubblewrap) exists only on Linux. " +
        "To let delegates run commands unconfined on this machine, the user can run " +
        "`ollama-delegate config --sandbox off`",
    };
  }
  if (!bwrap) {
    return {
      kind: "refused",
      reason: `Bash is refused: bubblewrap (bwrap) is not installed, and commands never run ` +
        `unconfined unless the user says so. ${INSTALL_BWRAP_HINT}`,
    };
  }
  return { kind: "bwrap", bwrap };
}

export interface SandboxLayout {
  /** The job's working directory (real path); the command starts there. */
  cwd: string;
  /** Directories mounted read-write: cwd and add_dirs (real paths). */
  writable: readonly string[];
  /** Running as uid 0: drop every capability inside the sandbox as well. */
  root?: boolean;
  /** Paths inside the writable dirs hidden behind an empty tmpfs (settings, job records). */
  hide?: readonly string[];
}

/**
 * bubblewrap's argv for one command. The root is an empty tmpfs; the system is mounted
 * read-only; `/tmp` is a fresh tmpfs, so `/tmp` and `$HOME` writes vanish with the command.
 */
export function bwrapArgs(
  layout: SandboxLayout,
  command: string,
  inspect: (path: string) => "dir" | { link: string } | "missing" = inspectHostPath,
): string[] {
  const args = [
    "--unshare-all",
    "--die-with-parent",
    "--new-session",
    "--clearenv",
    "--setenv",
    "PATH",
    SANDBOX_PATH,
    "--setenv",
    "HOME",
    "/tmp",
    "--setenv",
    "TMPDIR",
    "/tmp",
    "--setenv",
    "LANG",
    "C.UTF-8",
    "--ro-bind",
    "/usr",
    "/usr",
    "--ro-bind-try",
    "/etc",
    "/etc",
  ];
  if (layout.root) args.push("--cap-drop", "ALL");
  for (const name of SYSTEM_DIRS) {
    const host = inspect(`/${name}`);
    if (host === "missing") continue;
    if (host === "dir") args.push("--ro-bind", `/${name}`, `/${name}`);
    else args.push("--symlink", host.link, `/${name}`);
  }
  args.push("--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp");
  for (const dir of layout.writable) args.push("--bind", dir, dir);
  // After the binds, so they cover what a writable dir would otherwise expose.
  for (const dir of layout.hide ?? []) {
    if (layout.writable.some((w) => dir === w || dir.startsWith(w.endsWith("/") ? w : `${w}/`))) {
      args.push("--tmpfs", dir);
    }
  }
  args.push("--chdir", layout.cwd, "--", "/bin/sh", "-c", command);
  return args;
}

function inspectHostPath(path: string): "dir" | { link: string } | "missing" {
  try {
    if (lstatSync(path).isSymbolicLink()) return { link: readlinkSync(path) };
    return statSync(path).isDirectory() ? "dir" : "missing";
  } catch {
    return "missing";
  }
}

export interface CommandRequest {
  command: string;
  cwd: string;
  writable: readonly string[];
  timeoutMs: number;
  signal: AbortSignal;
  /** Output kept: the last this many characters. */
  keepChars: number;
  /** Hidden from the command (see SandboxLayout.hide). */
  hide?: readonly string[];
  onSpawn?: (pid: number) => void;
}

export interface CommandResult {
  exitCode: number | null;
  signal: string | null;
  durationMs: number;
  /** stdout and stderr as they arrived, the last `keepChars` characters. */
  output: string;
  /** Characters that were dropped from the front. */
  droppedChars: number;
  timedOut: boolean;
  aborted: boolean;
}

/** Runs one command with `runner`; never throws for the command's own failure. */
export async function runShell(
  runner: Exclude<ShellRunner, { kind: "refused" }>,
  req: CommandRequest,
): Promise<CommandResult> {
  let command: string;
  let args: string[];
  let env: Record<string, string>;
  if (runner.kind === "bwrap") {
    command = runner.bwrap;
    args = bwrapArgs(
      {
        cwd: req.cwd,
        writable: req.writable,
        root: process.getuid?.() === 0,
        ...(req.hide ? { hide: req.hide } : {}),
      },
      req.command,
    );
    env = { PATH: "/usr/bin:/bin" };
  } else if (isWindows) {
    command = process.env.COMSPEC ?? "cmd.exe";
    args = ["/d", "/s", "/c", req.command];
    env = minimalEnv();
  } else {
    command = "/bin/sh";
    args = ["-c", req.command];
    env = minimalEnv();
  }
  const started = performance.now();
  if (req.signal.aborted) {
    return {
      exitCode: null,
      signal: null,
      durationMs: 0,
      output: "(not started: the job was stopped)",
      droppedChars: 0,
      timedOut: false,
      aborted: true,
    };
  }
  let child;
  try {
    child = await spawnProcess({ command, args, cwd: req.cwd, env, detached: !isWindows });
  } catch (e) {
    const why = e instanceof SpawnError ? e.message : String(e);
    return {
      exitCode: null,
      signal: null,
      durationMs: Math.round(performance.now() - started),
      output: why,
      droppedChars: 0,
      timedOut: false,
      aborted: false,
    };
  }
  req.onSpawn?.(child.pid);
  const tail = new TailBuffer(req.keepChars);
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) tail.push(decoder.decode(chunk, { stream: true }));
    tail.push(decoder.decode());
  };
  let timedOut = false;
  let aborted = false;
  let stopping: Promise<unknown> | undefined;
  const stop = () => {
    stopping ??= killTree(child.pid, { graceMs: KILL_GRACE_MS }).catch(() => {
      child.kill("SIGKILL");
    });
  };
  const timer = setTimeout(() => {
    timedOut = true;
    stop();
  }, req.timeoutMs);
  const onAbort = () => {
    aborted = true;
    stop();
  };
  if (req.signal.aborted) onAbort();
  else req.signal.addEventListener("abort", onAbort, { once: true });
  const pumps = Promise.all([pump(child.stdout), pump(child.stderr)]);
  // A read error must not become an unhandled rejection while we wait for the exit.
  pumps.catch(() => {});
  const status = await child.status;
  clearTimeout(timer);
  req.signal.removeEventListener("abort", onAbort);
  await stopping;
  // Something still holding our pipes after the command ended belongs to its session: a
  // process forked while the command was being stopped, or a daemon it left behind.
  const drained = await Promise.race([
    pumps.then(() => true),
    new Promise<false>((r) => setTimeout(() => r(false), stopping ? 300 : 2000)),
  ]);
  if (!drained && !isWindows) {
    killSession(child.pid);
    await Promise.race([pumps, new Promise((r) => setTimeout(r, 1000))]);
  }
  return {
    exitCode: status.code,
    signal: status.signal,
    durationMs: Math.round(performance.now() - started),
    output: tail.text(),
    droppedChars: tail.dropped,
    timedOut,
    aborted,
  };
}

/** Unconfined commands still get no secrets: PATH, HOME and the locale only. */
function minimalEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ["PATH", "HOME", "LANG", "SystemRoot", "TEMP", "TMP", "PATHEXT"]) {
    const value = process.env[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}

/** Keeps the last `keep` characters of a stream of text, in bounded memory. */
export class TailBuffer {
  #parts: string[] = [];
  #length = 0;
  dropped = 0;

  constructor(readonly keep: number) {}

  push(text: string): void {
    if (text === "") return;
    this.#parts.push(text);
    this.#length += text.length;
    if (this.#length > this.keep * 2) this.#compact();
  }

  #compact(): void {
    const joined = this.#parts.join("");
    const cut = Math.max(0, joined.length - this.keep);
    this.dropped += cut;
    this.#parts = [joined.slice(cut)];
    this.#length = joined.length - cut;
  }

  text(): string {
    this.#compact();
    return this.#parts.join("");
  }
}

/** A trivial sandboxed command, for `doctor`: proves bubblewrap works here, not just exists. */
export async function probeSandbox(
  mode: SandboxMode,
): Promise<{ ok: boolean; detail: string }> {
  const runner = shellRunner(mode);
  if (runner.kind === "refused") return { ok: false, detail: runner.reason };
  if (runner.kind === "unconfined") {
    return { ok: true, detail: "sandbox is off: Bash runs unconfined (set by the user)" };
  }
  const result = await runShell(runner, {
    command: "echo sandbox-ok",
    cwd: "/",
    writable: [],
    timeoutMs: 10_000,
    signal: new AbortController().signal,
    keepChars: 2000,
  });
  if (result.exitCode === 0 && result.output.includes("sandbox-ok")) {
    return { ok: true, detail: `${runner.bwrap} runs commands (exit 0)` };
  }
  return {
    ok: false,
    detail:
      `${runner.bwrap} cannot start a sandbox (exit ${result.exitCode ?? result.signal}): ${
        result.output.trim().slice(0, 300)
      }. Unprivileged user namespaces may be disabled (sysctl kernel.unprivileged_userns_clone ` +
      `or an AppArmor restriction)`,
  };
}

/**
 * Runs a program with some of its standard streams on a pseudo-terminal, as when a person
 * starts it in a terminal. Deno and Node have no pty API, so python3's pty module holds the
 * terminal: what the test writes to `input` reaches the program as typed keys, what the
 * program writes to the terminal comes back as `output()`. Streams not on the terminal are
 * pipes straight to the program, read as `stdout()` / `stderr()`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import process from "node:process";

/** POSIX only: Windows has no pty module (its consoles are not terminals in this sense). */
export const PTY_UNSUPPORTED = process.platform === "win32"
  ? "pseudo-terminals need POSIX (python3's pty module)"
  : undefined;

const RELAY = String.raw`
import fcntl, json, os, pty, select, signal, struct, subprocess, sys, termios, time
spec = json.loads(sys.argv[1])
tty = set(spec["tty"])
master, slave = pty.openpty()
# A terminal 100 columns wide (or as asked), so programs that ask for the width get an answer.
fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, spec.get("columns", 100), 0, 0))
child = subprocess.Popen(
    spec["argv"], env=spec["env"], cwd=spec["cwd"],
    stdin=slave if "stdin" in tty else None,
    stdout=slave if "stdout" in tty else None,
    stderr=slave if "stderr" in tty else None,
    start_new_session=True,
)
os.close(slave)
# Stopping the relay stops the program and its children (its own session and group), which
# would otherwise keep the test's pipes open.
def stop(signum, frame):
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except OSError:
        pass
    sys.exit(128 + signum)
signal.signal(signal.SIGTERM, stop)
# The terminal's bytes go to fd 3, a pipe of their own, never mixed with the program's pipes.
out = 3
keys = sys.stdin.fileno() if "stdin" in tty else None
watch = [master] + ([keys] if keys is not None else [])
exited_at = None
while True:
    ready, _, _ = select.select(watch, [], [], 0.05)
    if master in ready:
        try:
            data = os.read(master, 65536)
        except OSError:
            data = b""
        if data:
            os.write(out, data)
        else:
            watch.remove(master)
    if keys is not None and keys in ready:
        data = os.read(keys, 65536)
        if data:
            os.write(master, data)
        else:
            watch.remove(keys)
    if child.poll() is not None:
        exited_at = exited_at or time.time()
        # Whatever the program wrote last is still in the terminal: read it, briefly.
        if master not in watch or time.time() - exited_at > 0.5:
            break
sys.exit(child.returncode if child.returncode >= 0 else 128 - child.returncode)
`;

export type TtyStream = "stdin" | "stdout" | "stderr";

export interface PtyRun {
  child: ChildProcess;
  /** Sends bytes as if typed (only with stdin on the terminal). */
  type(text: string): void;
  /** What the program wrote to the terminal so far (its `\n` arrive as `\r\n`). */
  output(): string;
  stdout(): string;
  stderr(): string;
  done: Promise<{ code: number | null; output: string; stdout: string; stderr: string }>;
}

export function startOnPty(
  argv: string[],
  options: { tty: TtyStream[]; env: Record<string, string>; cwd: string; columns?: number },
): PtyRun {
  const spec = JSON.stringify({
    argv,
    tty: options.tty,
    env: options.env,
    cwd: options.cwd,
    columns: options.columns ?? 100,
  });
  const child = spawn("python3", ["-c", RELAY, spec], {
    // python3 itself runs with this process's environment (pyenv shims need theirs).
    env: process.env,
    stdio: ["pipe", "pipe", "pipe", "pipe"],
  });
  let output = "";
  let stdout = "";
  let stderr = "";
  // One decoder per stream: a character split across two reads ("·", "…") stays whole.
  const decoder = () => {
    const d = new TextDecoder();
    return (c: Uint8Array) => d.decode(c, { stream: true });
  };
  const [outText, errText, ttyText] = [decoder(), decoder(), decoder()];
  child.stdout!.on("data", (c: Uint8Array) => (stdout += outText(c)));
  child.stderr!.on("data", (c: Uint8Array) => (stderr += errText(c)));
  (child.stdio[3] as NodeJS.ReadableStream).on("data", (c: Uint8Array) => (output += ttyText(c)));
  const done = new Promise<{ code: number | null; output: string; stdout: string; stderr: string }>(
    (resolve, reject) => {
      child.on(
        "error",
        (e) => reject(new Error(`Cannot start python3 for a pseudo-terminal: ${e.message}`)),
      );
      child.on("close", (code) => resolve({ code, output, stdout, stderr }));
    },
  );
  return {
    child,
    type: (text) => void child.stdin!.write(text),
    output: () => output,
    stdout: () => stdout,
    stderr: () => stderr,
    done,
  };
}

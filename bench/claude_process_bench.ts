/**
 * The pinned Claude Code CLI as a process, as the claude engine runs it (the real server, its
 * jail and Claude Code's sandbox where this machine has them) against the Ollama emulator:
 * its resident memory, threads and writable private mappings (what RLIMIT_DATA counts) while
 * its Bash tool runs the 25th command of a turn (the 24 before it printed 480 KB), and how long
 * it takes to exit after SIGTERM then. These are
 * the figures behind the room the jail leaves Claude Code on top of a command's limits
 * (docs/security.md, "The sandbox limits hold in the jail") and behind the half second the
 * server gives it to exit (ROOT_GRACE_MS in src/engines/claude/child.ts; docs/jobs.md).
 * Run: deno run -A bench/claude_process_bench.ts [runs]
 */
import "./support/help.ts";
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { CLAUDE_BIN, field, startServer, tempDir, until } from "../tests/support/harness.ts";
import { startOllamaEmulator } from "../tests/support/emulator/emulator.ts";
import { benchArg, median, QUICK } from "./support/common.ts";

const runs = Number(benchArg(0, "3", "1"));
const MiB = 1024 * 1024;
/** 24 commands of 20 KB of output each before the one it is looked at in: 25 in all. */
const OUTPUT_COMMANDS = "@bash head -c 20000 /dev/zero | tr '\\0' x\n".repeat(QUICK ? 1 : 24);

/** The Claude Code process whose argv names `work` (bubblewrap's own argv is not it). */
function claudePid(work: string): number | undefined {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      if (argv[0]?.endsWith("claude.exe") && argv.some((a) => a.includes(work))) {
        return Number(entry);
      }
    } catch {
      // Gone meanwhile.
    }
  }
  return undefined;
}

/** VmRSS and Threads from /proc/<pid>/status, and the writable private mappings' total. */
function sample(pid: number): { rss: number; threads: number; writable: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const value = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, "m").exec(status)?.[1]);
  let writable = 0;
  for (const line of readFileSync(`/proc/${pid}/maps`, "utf8").split("\n")) {
    const [range, perms] = line.split(" ");
    if (!range || !perms || perms[1] !== "w" || perms[3] !== "p") continue;
    const [from, to] = range.split("-").map((h) => BigInt(`0x${h}`));
    writable += Number(to! - from!);
  }
  return { rss: value("VmRSS") * 1024, threads: value("Threads"), writable };
}

const emu = await startOllamaEmulator();
const server = await startServer({ baseUrl: emu.url });
const rows: { rss: number; threads: number; writable: number; exit: number }[] = [];
let sandbox = "";
try {
  for (let i = 0; i < runs; i++) {
    const work = tempDir("od-bench-claude-");
    const started = await server.call("delegate_start", {
      prompt: `${OUTPUT_COMMANDS}@bash touch started && sleep 60\n@reply done ${i}`,
      engine: "claude",
      model: "qwen3:8b",
      cwd: work,
      allowed_tools: ["Bash"],
    });
    await until(() => existsSync(join(work, "started")) || undefined, 120_000, "the command");
    const pid = claudePid(work);
    if (pid === undefined) throw new Error("no Claude Code process names the working directory");
    // Claude Code has settled into the command: its memory now, a few looks apart.
    const looks = [];
    for (let k = 0; k < 5; k++) {
      looks.push(sample(pid));
      await new Promise((r) => setTimeout(r, 200));
    }
    const t0 = performance.now();
    process.kill(pid, "SIGTERM");
    await until(() => !existsSync(`/proc/${pid}`) || undefined, 30_000, "Claude Code's exit");
    rows.push({
      rss: Math.max(...looks.map((l) => l.rss)),
      threads: Math.max(...looks.map((l) => l.threads)),
      writable: Math.max(...looks.map((l) => l.writable)),
      exit: performance.now() - t0,
    });
    const status = await server.call("delegate_status", {
      job_id: field(started.text, "job_id"),
      wait_seconds: 30,
    });
    sandbox = field(status.text, "sandbox") ?? "jail and Claude Code's sandbox";
  }
} finally {
  await server.close();
  await emu.close();
}
const range = (f: (r: (typeof rows)[number]) => number, unit: (n: number) => string) => {
  const [low, high] = [unit(Math.min(...rows.map(f))), unit(Math.max(...rows.map(f)))];
  return low === high ? low : `${low}-${high}`;
};
const version = execFileSync(CLAUDE_BIN, ["--version"], { encoding: "utf8" }).trim();
console.log(`${version}, during the 25th command of a turn (${runs} runs; sandbox: ${sandbox}):`);
console.log(
  `  resident memory            ${range((r) => r.rss, (n) => `${Math.round(n / MiB)}`)} MiB`,
);
console.log(`  threads                    ${range((r) => r.threads, String)}`);
console.log(
  `  writable private mappings  ${
    range((r) => r.writable, (n) => (n / 1024 ** 3).toFixed(1))
  } GiB` +
    " (what RLIMIT_DATA counts)",
);
console.log(
  `  SIGTERM to exit            median ${(median(rows.map((r) => r.exit)) / 1000).toFixed(2)} s (${
    rows.map((r) => (r.exit / 1000).toFixed(2)).join(", ")
  })`,
);

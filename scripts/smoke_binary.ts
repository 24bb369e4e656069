/**
 * Smoke-tests a built ollama-delegate on the machine it will run on: `--version`, `config`,
 * and an MCP `initialize` + `tools/list` round trip over stdio, then a clean exit when stdin
 * closes. Used by release.yml on each OS runner and by `deno task smoke:node`.
 *
 * Run: deno run -A scripts/smoke_binary.ts <program> [args before the subcommand...]
 *   e.g. deno run -A scripts/smoke_binary.ts dist/bin/ollama-delegate-x86_64-unknown-linux-gnu
 *        deno run -A scripts/smoke_binary.ts node dist/node/ollama-delegate.mjs
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import process from "node:process";
import { SERVER_NAME, VERSION } from "../src/version.ts";

const TIMEOUT_MS = 30_000;

interface Target {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
}

function fail(what: string, detail = ""): never {
  throw new Error(`Smoke test failed: ${what}${detail ? `\n${detail}` : ""}`);
}

/** Runs a CLI subcommand to completion and returns its stdout. */
function runCli(t: Target, sub: string[], expect: RegExp): string {
  const r = spawnSync(t.command, [...t.args, ...sub], {
    env: t.env,
    cwd: t.cwd,
    encoding: "utf8",
    timeout: TIMEOUT_MS,
  });
  if (r.error) fail(`cannot run ${sub.join(" ")}: ${r.error.message}`);
  if (r.status !== 0) fail(`"${sub.join(" ")}" exited with ${r.status}`, r.stderr);
  if (!expect.test(r.stdout)) fail(`"${sub.join(" ")}" printed unexpected output`, r.stdout);
  return r.stdout;
}

/** initialize, initialized, tools/list; then closes stdin and expects exit code 0. */
async function mcpRoundTrip(t: Target): Promise<{ server: string; tools: string[] }> {
  const child = spawn(t.command, [...t.args, "serve"], {
    env: t.env,
    cwd: t.cwd,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (s: string) => stderr += s);
  const exited = new Promise<number | null>((res) => child.on("close", (code) => res(code)));
  const spawned = new Promise<void>((res, rej) => {
    child.once("spawn", () => res());
    child.once("error", (e) => rej(e));
  });
  await spawned.catch((e: Error) => fail(`cannot start ${t.command}: ${e.message}`));

  const replies = new Map<number, Record<string, unknown>>();
  let buffered = "";
  const waiters = new Map<number, (msg: Record<string, unknown>) => void>();
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    buffered += chunk;
    let nl;
    while ((nl = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, nl).trim();
      buffered = buffered.slice(nl + 1);
      if (!line) continue;
      let msg: Record<string, unknown>;
      try {
        msg = JSON.parse(line);
      } catch {
        fail("the server wrote a line to stdout that is not JSON", line);
      }
      const id = msg.id;
      if (typeof id === "number") {
        replies.set(id, msg);
        waiters.get(id)?.(msg);
      }
    }
  });
  const send = (msg: Record<string, unknown>) => child.stdin.write(JSON.stringify(msg) + "\n");
  const request = (id: number, method: string, params: Record<string, unknown>) => {
    send({ jsonrpc: "2.0", id, method, params });
    return new Promise<Record<string, unknown>>((res, rej) => {
      const known = replies.get(id);
      if (known) return res(known);
      const timer = setTimeout(
        () => rej(new Error(`no reply to ${method} in ${TIMEOUT_MS} ms\n${stderr}`)),
        TIMEOUT_MS,
      );
      waiters.set(id, (msg) => {
        clearTimeout(timer);
        res(msg);
      });
    });
  };

  try {
    const init = await request(1, "initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "smoke", version: "1" },
    });
    const info = (init.result as { serverInfo?: { name?: string; version?: string } } | undefined)
      ?.serverInfo;
    if (info?.name !== SERVER_NAME || info.version !== VERSION) {
      fail(`initialize answered ${JSON.stringify(init)}, expected ${SERVER_NAME} ${VERSION}`);
    }
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    const list = await request(2, "tools/list", {});
    const tools = ((list.result as { tools?: { name: string }[] } | undefined)?.tools ?? [])
      .map((x) => x.name);
    if (!tools.includes("ollama_models")) fail(`tools/list lacks ollama_models`, tools.join(", "));
    child.stdin.end();
    const code = await Promise.race([
      exited,
      new Promise<"timeout">((r) => setTimeout(() => r("timeout"), TIMEOUT_MS).unref()),
    ]);
    if (code !== 0) fail(`the server did not exit cleanly after stdin closed (${code})`, stderr);
    return { server: `${info.name} ${info.version}`, tools };
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
  }
}

export async function smoke(command: string, args: string[]): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), "od-smoke-"));
  try {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
    for (const k of Object.keys(env)) if (k.startsWith("OLLAMA_MCP_")) delete env[k];
    Object.assign(env, {
      HOME: home,
      USERPROFILE: home,
      OLLAMA_MCP_STATE_DIR: join(home, "state"),
      // Nothing listens here, so the round trip never depends on a local Ollama.
      OLLAMA_MCP_BASE_URL: "http://127.0.0.1:9",
      NO_COLOR: "1",
    });
    const t: Target = { command, args, env, cwd: home };
    const version = runCli(t, ["--version"], new RegExp(`^ollama-delegate ${VERSION}\\s*$`));
    console.log(`ok --version: ${version.trim()}`);
    runCli(t, ["config"], /Settings in force:[\s\S]*delegationMode/);
    console.log("ok config");
    const r = await mcpRoundTrip(t);
    console.log(`ok initialize: ${r.server}; ${r.tools.length} tools; clean exit`);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const [program, ...rest] = process.argv.slice(2);
  if (!program) {
    console.error("Usage: deno run -A scripts/smoke_binary.ts <program> [args...]");
    process.exit(2);
  }
  // The server runs in a temporary directory, so relative paths are made absolute here; a
  // bare name (node, deno) is still looked up on PATH.
  const absolute = (a: string) =>
    existsSync(a) && (a !== program || /[\\/]/.test(a)) ? resolve(a) : a;
  try {
    await smoke(absolute(program), rest.map(absolute));
  } catch (e) {
    console.error((e as Error).message);
    process.exit(1);
  }
}

/** Temp HOME and working directory for settings tests, so nothing touches ~/.ollama-mcp. */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { runConfig } from "../../src/settings/config_cmd.ts";

export interface Sandbox {
  root: string;
  home: string;
  cwd: string;
  /** `<home>/.ollama-mcp/config.json`, the default user file. */
  userFile: string;
  /** `<cwd>/ollama-mcp.config.json`. */
  projectFile: string;
}

/** Runs `fn` with fresh, empty home and cwd directories, removed afterwards. */
export async function withSandbox(fn: (sb: Sandbox) => void | Promise<void>): Promise<void> {
  const root = await Deno.makeTempDir({ prefix: "settings_test_" });
  const home = join(root, "home");
  const cwd = join(root, "project");
  mkdirSync(home);
  mkdirSync(cwd);
  try {
    await fn({
      root,
      home,
      cwd,
      userFile: join(home, ".ollama-mcp", "config.json"),
      projectFile: join(cwd, "ollama-mcp.config.json"),
    });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** Writes text (or a value as JSON) to a file, creating its directory. */
export function put(path: string, content: unknown): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
}

/** The file's bytes, or null when it does not exist. */
export function bytes(path: string): Uint8Array | null {
  try {
    return readFileSync(path);
  } catch {
    return null;
  }
}

/** The file parsed as JSON. */
export function readJson(path: string): unknown {
  return JSON.parse(readFileSync(path, "utf8"));
}

/** Runs `ollama-delegate config` in the sandbox; returns the exit code and printed lines. */
export function run(sb: Sandbox, argv: string[], env: Record<string, string> = {}) {
  const lines: string[] = [];
  const code = runConfig(argv, { env, cwd: sb.cwd, home: sb.home, out: (l) => lines.push(l) });
  return { code, lines };
}

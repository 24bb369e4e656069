/**
 * Makes sure the real programs the test suite drives are present, installing what npm can
 * give us: the pinned Claude Code CLI goes into `.tools/`. bubblewrap comes from the OS
 * (`.ci/run` installs it); a missing one fails here instead of skipping tests silently.
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync } from "node:fs";
import { arch, platform } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import process from "node:process";

export const CLAUDE_CODE_VERSION = "2.1.332";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const tools = join(root, ".tools");
const pkg = join(tools, "node_modules", "@anthropic-ai", "claude-code");
const bin = join(pkg, "bin", "claude.exe");

function version(path: string): string | undefined {
  try {
    return execFileSync(path, ["--version"], { encoding: "utf8", timeout: 30_000 }).trim();
  } catch {
    return undefined;
  }
}

function ensureClaude(): void {
  if (version(bin)?.startsWith(CLAUDE_CODE_VERSION)) return;
  console.error(`Installing @anthropic-ai/claude-code@${CLAUDE_CODE_VERSION} into ${tools} ...`);
  mkdirSync(tools, { recursive: true });
  execFileSync("npm", [
    "install",
    "--prefix",
    tools,
    "--no-save",
    "--no-audit",
    "--no-fund",
    // The CLI's package asks for Node 22 but its native binary does not use Node: the engine
    // warning on Node 20 is noise.
    "--loglevel=error",
    `@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}`,
  ], { stdio: "inherit" });
  if (!version(bin)?.startsWith(CLAUDE_CODE_VERSION)) {
    // npm may skip the postinstall that copies the native binary over the placeholder.
    const os = platform() === "win32" ? "win32" : platform();
    const native = join(
      tools,
      "node_modules",
      "@anthropic-ai",
      `claude-code-${os}-${arch()}`,
      "claude",
    );
    if (existsSync(native)) copyFileSync(native, bin);
  }
  const got = version(bin);
  if (!got?.startsWith(CLAUDE_CODE_VERSION)) {
    throw new Error(`Cannot run the Claude Code CLI at ${bin} (got ${got ?? "nothing"})`);
  }
}

function ensureBwrap(): void {
  if (platform() !== "linux") return;
  try {
    execFileSync("bwrap", ["--version"], { stdio: "ignore" });
  } catch {
    throw new Error("bubblewrap (bwrap) is missing: install it (apt-get install bubblewrap socat)");
  }
  // Claude Code's own sandbox, which claude delegates use where bwrap exists, needs socat too.
  try {
    execFileSync("socat", ["-V"], { stdio: "ignore" });
  } catch {
    throw new Error("socat is missing: install it (apt-get install socat)");
  }
}

if (import.meta.main) {
  try {
    ensureClaude();
    ensureBwrap();
    console.error(`Test tools ready: claude ${version(bin)}`);
  } catch (e) {
    console.error(`ensure_test_tools: ${(e as Error).message}`);
    process.exit(1);
  }
}

export { bin as CLAUDE_BIN };

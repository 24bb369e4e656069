/**
 * Builds the npm package `ollama-delegate` from the Node bundle, so that
 * `npx -y ollama-delegate` runs the server with nothing but Node 20+:
 *
 *   dist/npm/package.json        name, version, bin, engines, license, repository, files
 *   dist/npm/ollama-delegate.mjs the entry of the split bundle (scripts/build_node.ts), which
 *   dist/npm/chunks/             holds the rest: Node loads only the chunks a command needs
 *   dist/npm/README.md, LICENSE
 *   dist/ollama-delegate-<version>.tgz   what `npm pack` makes of it
 *
 * The repository named in package.json must be the one that publishes it (npm checks it
 * against the provenance statement): GITHUB_REPOSITORY in Actions, else the `origin` remote,
 * else the project's home.
 *
 * Run: deno task build:npm
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { VERSION } from "../src/version.ts";
import { buildNode, CHUNKS } from "./build_node.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
export const NPM_DIR = join(ROOT, "dist", "npm");
export const PACKAGE_NAME = "ollama-delegate";
export const BIN_FILE = "ollama-delegate.mjs";
/** Where the project lives when neither Actions nor a git remote says otherwise. */
const HOME_REPOSITORY = "ollama-delegate/ollama-delegate";

/** `owner/name` of the GitHub repository this build comes from. */
function repositorySlug(): string {
  if (process.env.GITHUB_REPOSITORY) return process.env.GITHUB_REPOSITORY;
  try {
    const url = execFileSync("git", ["remote", "get-url", "origin"], {
      cwd: ROOT,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
    const m = /github\.com[:/]([^/]+\/[^/]+?)(?:\.git)?$/.exec(url);
    if (m) return m[1]!;
  } catch {
    // No git, or no origin: the project's home.
  }
  return HOME_REPOSITORY;
}

export function packageJson(slug: string): Record<string, unknown> {
  return {
    name: PACKAGE_NAME,
    version: VERSION,
    description: "Hand work from a Claude Code session to other models (Ollama, vLLM, " +
      "OpenRouter...), safely and asynchronously, and get evidence back: an MCP server",
    license: "MIT",
    repository: { type: "git", url: `git+https://github.com/${slug}.git` },
    homepage: `https://github.com/${slug}#readme`,
    bugs: { url: `https://github.com/${slug}/issues` },
    keywords: ["mcp", "claude-code", "ollama", "delegation", "agents", "mcp-server"],
    type: "module",
    bin: { [PACKAGE_NAME]: BIN_FILE },
    files: [BIN_FILE, CHUNKS, "README.md", "LICENSE"],
    engines: { node: ">=20" },
  };
}

function readme(slug: string): string {
  return `# ollama-delegate

An MCP server that lets a Claude Code session hand work to cheaper models (Ollama, vLLM,
LM Studio, OpenRouter), safely and asynchronously, and get evidence back instead of claims.

\`\`\`sh
claude mcp add ollama --scope user -- npx --prefix "$HOME" -y ollama-delegate
ollama-delegate doctor        # after npm install -g ollama-delegate: check the setup
\`\`\`

This package is the Node build (Node 20 or newer, no dependencies, bundled). Release
binaries for Linux, macOS and Windows, the Claude Code plugin, the settings and the security
model are documented at https://github.com/${slug}#readme.
`;
}

/**
 * Writes the package's files into `stage` (default dist/npm) and packs them into `out`
 * (default dist/); returns the tarball's path. Callers that may run at the same time as
 * another build (tests under `deno test --parallel`) pass a stage of their own: the default
 * one is emptied first, so two builds sharing it would pack each other's half-written files.
 */
export function buildNpm(out: string = join(ROOT, "dist"), stage: string = NPM_DIR): string {
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(stage, { recursive: true });
  buildNode(join(stage, BIN_FILE), { split: true });
  const slug = repositorySlug();
  writeFileSync(join(stage, "package.json"), JSON.stringify(packageJson(slug), null, 2) + "\n");
  writeFileSync(join(stage, "README.md"), readme(slug));
  copyFileSync(join(ROOT, "LICENSE"), join(stage, "LICENSE"));
  mkdirSync(out, { recursive: true });
  const packed = execFileSync(
    "npm",
    ["pack", "--silent", "--pack-destination", out, stage],
    { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] },
  ).trim().split("\n").at(-1)!;
  return join(out, packed);
}

if (import.meta.main) {
  try {
    const tarball = buildNpm();
    console.error(`Wrote ${NPM_DIR} and ${tarball}`);
  } catch (e) {
    console.error(`build_npm: ${(e as Error).message}`);
    process.exit(1);
  }
}

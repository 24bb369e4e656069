/**
 * The Claude Code plugin and the npm package, as a user installs them: the real Claude Code CLI
 * validates the plugin and the marketplace, adds this repository as a marketplace and installs
 * the plugin into a fresh HOME; its MCP server then starts through the real `npx -y`, which
 * installs our packed npm package from a loopback registry, and `claude mcp list` must report it
 * connected: also in a project that ships its own `node_modules/ollama-delegate` or a `.npmrc`
 * naming another registry, neither of which may be used.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { VERSION } from "../../src/version.ts";
import { packedNpmPackage } from "../support/npm_package.ts";
import { startNpmRegistry } from "../support/npm_registry.ts";
import { plantNpmrc, plantPackage, userNpmrc } from "../support/planted_package.ts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { callTool, CLAUDE_BIN, prepareServer, REPO, tempDir } from "../support/harness.ts";
import { startInProcessServer } from "../support/in_process_scene.ts";

const PLUGIN = join(REPO, "plugins", "ollama-delegate");

/**
 * Runs the real CLI without blocking this process: the loopback registry that npx talks to
 * lives in it.
 */
async function claude(
  home: string,
  args: string[],
  env: Record<string, string> = {},
  cwd = home,
): Promise<{ status: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(CLAUDE_BIN, {
    args,
    cwd,
    clearEnv: true,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, NO_COLOR: "1", ...env },
    signal: AbortSignal.timeout(180_000),
  }).output();
  const text = new TextDecoder();
  return { status: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

Deno.test("plugin: the manifests agree with the program's version and the CLI validates them", async () => {
  const plugin = JSON.parse(
    readFileSync(join(PLUGIN, ".claude-plugin", "plugin.json"), "utf8"),
  );
  assert.equal(plugin.version, VERSION, "plugin.json version");
  const mcp = JSON.parse(readFileSync(join(PLUGIN, ".mcp.json"), "utf8"));
  // npm's prefix is the plugin's own folder, so npx never takes the package from the project.
  assert.deepEqual(mcp.ollama.args, [
    "--prefix",
    "${CLAUDE_PLUGIN_ROOT}",
    "-y",
    `ollama-delegate@${VERSION}`,
  ]);
  const home = tempDir("od-plugin-home-");
  for (const path of [PLUGIN, REPO]) {
    const r = await claude(home, ["plugin", "validate", path]);
    assert.equal(r.status, 0, `${path}: ${r.stdout}${r.stderr}`);
    assert.match(r.stdout, /Validation passed/);
  }
  const report = (await claude(home, ["plugin", "validate", PLUGIN])).stdout;
  for (
    const part of ["mcpServers: ollama", "ollama-delegate:delegate", "ollama-delegate:delegates"]
  ) {
    assert.ok(report.includes(part), `${part} in ${report}`);
  }
  assert.ok(
    report.includes("ollama-delegate:cancel") && report.includes("ollama-delegate:review") &&
      report.includes("agents: ollama-delegate:delegator"),
    report,
  );
});

Deno.test({
  name: "plugin: installed from the local marketplace, its server starts through npx from the " +
    "packed npm package and is connected, never from the project's node_modules or registry",
  async fn() {
    const tarball = packedNpmPackage();
    const registry = await startNpmRegistry([tarball]);
    // The registry a hostile project's .npmrc names: it must never be asked.
    const hostile = await startNpmRegistry([]);
    try {
      const home = tempDir("od-plugin-home-");
      userNpmrc(home, registry.url);
      // One project sends npm to another registry; the other ships its own "ollama-delegate".
      const viaNpmrc = join(home, "project-npmrc");
      mkdirSync(viaNpmrc);
      plantNpmrc(viaNpmrc, hostile.url);
      const viaModules = join(home, "project-modules");
      mkdirSync(viaModules);
      const marker = plantPackage(viaModules, join(home, "planted-ran"));
      const add = await claude(home, ["plugin", "marketplace", "add", REPO]);
      assert.equal(add.status, 0, add.stdout + add.stderr);
      const install = await claude(home, ["plugin", "install", "ollama-delegate@ollama-delegate"]);
      assert.equal(install.status, 0, install.stdout + install.stderr);
      // The project with the .npmrc first, while npm's cache is empty and it must ask a registry.
      for (const project of [viaNpmrc, viaModules]) {
        const list = await claude(home, ["mcp", "list"], {}, project);
        assert.equal(list.status, 0, list.stdout + list.stderr);
        const line = list.stdout.split("\n").find((l) => /ollama/.test(l) && /npx/.test(l));
        assert.ok(line, `the plugin's server is listed: ${list.stdout}`);
        assert.match(line, /Connected/, `${project}: ${list.stdout}`);
      }
      assert.deepEqual(hostile.requests, [], "the project's registry was asked");
      assert.equal(existsSync(marker), false, "the project's own package ran");
      // npx fetched our package from the user's registry, not from anywhere else.
      assert.ok(registry.requests.includes("/ollama-delegate"), registry.requests.join(" "));
      assert.ok(
        registry.requests.some((p) => p.endsWith(`/ollama-delegate-${VERSION}.tgz`)),
        registry.requests.join(" "),
      );
    } finally {
      await registry.close();
      await hostile.close();
    }
  },
});

Deno.test("npm package: the packed tarball installs into a prefix, answers --version, and serves the tools the source serves from its chunks", async () => {
  const tarball = packedNpmPackage();
  const listing = execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" }).trim().split("\n");
  // The split bundle (scripts/build_node.ts): an entry, and the chunks it and they import.
  const chunks = listing.filter((f) => f.startsWith("package/chunks/"));
  assert.deepEqual(listing.filter((f) => !chunks.includes(f)).sort(), [
    "package/LICENSE",
    "package/README.md",
    "package/ollama-delegate.mjs",
    "package/package.json",
  ]);
  assert.ok(chunks.includes("package/chunks/node_main.js"), chunks.join(" "));
  assert.ok(chunks.includes("package/chunks/package.json"), chunks.join(" "));
  assert.ok(chunks.length > 20, `${chunks.length} chunks`);
  const manifest = JSON.parse(
    execFileSync("tar", ["-xzOf", tarball, "package/package.json"], { encoding: "utf8" }),
  );
  assert.equal(manifest.name, "ollama-delegate");
  assert.equal(manifest.version, VERSION);
  assert.deepEqual(manifest.bin, { "ollama-delegate": "ollama-delegate.mjs" });
  assert.deepEqual(manifest.engines, { node: ">=20" });
  assert.equal(manifest.license, "MIT");
  assert.match(manifest.repository.url, /^git\+https:\/\/github\.com\/[^/]+\/[^/]+\.git$/);
  const prefix = tempDir("od-prefix-");
  execFileSync("npm", ["install", "-g", "--prefix", prefix, "--no-audit", "--no-fund", tarball], {
    stdio: "ignore",
  });
  const bin = join(prefix, "bin", "ollama-delegate");
  const version = execFileSync(bin, ["--version"], { encoding: "utf8" });
  assert.equal(version.trim(), `ollama-delegate ${VERSION}`);

  // The server under Node, as npx starts it: initialize, then the tools (loaded after
  // initialize, from other chunks), then a call whose handler is a chunk of its own. Its
  // tools/list must be the source's, word for word.
  const baseUrl = "http://127.0.0.1:9";
  const place = prepareServer({ baseUrl });
  const transport = new StdioClientTransport({
    command: bin,
    args: ["serve"],
    env: place.env,
    cwd: place.cwd,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (c: Uint8Array) => stderr += new TextDecoder().decode(c));
  const client = new Client({ name: "od-test", version: "1.0.0" });
  await using source = await startInProcessServer({ baseUrl });
  try {
    await client.connect(transport);
    assert.equal(client.getServerVersion()?.name, "ollama-delegate");
    const tools = (await client.listTools()).tools;
    assert.ok(tools.some((t: { name: string }) => t.name === "delegate_run"), stderr);
    assert.deepEqual(tools, (await source.client.listTools()).tools);
    // No Ollama listens there: the reply says so (an error result), in the handler's words.
    const models = await callTool(client, "ollama_models");
    assert.match(models.text, /^ +Cannot reach Ollama at http:\/\/127\.0\.0\.1:9 /m);
    assert.match(models.text, /^Ollama endpoint: +http:\/\/127\.0\.0\.1:9$/m);
  } finally {
    await client.close();
  }
});

// The plugin's Stop hook. While the review gate is off (the default) it only reads that setting
// and exits. When it is on, it starts `ollama-delegate review --gate` through npx with
// `--prefix` set to this plugin's own folder: Claude Code runs Stop hooks in the project, and
// there a plain `npx` would run a `node_modules/ollama-delegate` (or its `.bin` link) that the
// project holds, and ask the registry that the project's `.npmrc` names. A delegate can write
// both, and a cloned repository can ship them; the gate runs as the user, outside every sandbox.
// With the prefix, npm takes the package from its cache or the user's registry (user config and
// npm_config_* variables), and the project reaches the gate only as data: the hook's input,
// which names its folder. A relative PATH entry (./node_modules/.bin) is dropped for the same
// reason.
"use strict";
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { spawnSync } = require("node:child_process");

const VERSION = "0.1.0";
const env = process.env;

/** The gate's setting from the environment or the user file only: a project may not turn it on. */
function gateSetting() {
  const fromEnv = (env.OLLAMA_MCP_REVIEW_GATE || "").trim();
  if (fromEnv) return fromEnv;
  const file = env.OLLAMA_MCP_CONFIG || path.join(os.homedir(), ".ollama-mcp", "config.json");
  try {
    return String(JSON.parse(fs.readFileSync(file, "utf8")).reviewGate || "");
  } catch {
    return "";
  }
}

if (gateSetting() !== "on") process.exit(0);

const root = path.dirname(__dirname);
const windows = process.platform === "win32";
const args = ["--prefix", root, "-y", `ollama-delegate@${VERSION}`, "review", "--gate"];
const searchPath = (env.PATH || "").split(path.delimiter).filter((p) => path.isAbsolute(p));
const child = spawnSync(
  windows ? "npx.cmd" : "npx",
  // cmd.exe splits on spaces: quote the one argument that may hold them (a user folder).
  windows ? args.map((a) => (/\s/.test(a) ? `"${a}"` : a)) : args,
  {
    stdio: "inherit",
    shell: windows,
    env: { ...env, PATH: searchPath.join(path.delimiter) },
  },
);
// A gate that could not start lets the stop through; Claude Code shows what npx printed.
process.exit(child.status === null ? 0 : child.status);

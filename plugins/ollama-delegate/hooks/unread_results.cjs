// The plugin's UserPromptSubmit hook: it tells Claude Code, once each, the delegations of this
// project that ended without their result reaching the session (a background task it did not
// collect, a job never fetched, a job interrupted when its session ended).
//
// It runs on every prompt, so what it does when there is nothing to tell is one directory
// read: the server marks such a job in <stateDir>/.unread/<key>/, where <key> is the first 32
// hex digits of the SHA-256 of the project's real path (src/jobs/unread.ts), and this hook
// lists that one folder. Empty or missing, it exits at once and adds nothing to the prompt.
// Only when the folder names a job does it start `ollama-delegate unread --hook`, as the Stop
// hook starts the gate: through npx with `--prefix` set to this plugin's own folder, and with
// relative PATH entries dropped. Claude Code runs hooks in the project, where a plain `npx`
// would run a `node_modules/ollama-delegate` the project holds and ask the registry its
// `.npmrc` names; a delegate can write both and a cloned repository can ship them, and a hook
// runs as the user outside every sandbox. The state dir comes from the environment or the
// user's settings file only, never from the project.
"use strict";
const crypto = require("node:crypto");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { spawnSync } = require("node:child_process");

const VERSION = "0.1.0";
const env = process.env;
const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function expandHome(p) {
  if (p === "~") return os.homedir();
  if (p.startsWith("~/") || p.startsWith("~\\")) return path.join(os.homedir(), p.slice(2));
  return p;
}

/** The state dir as the server resolves it: the environment, the user file, the default. */
function stateDir(project) {
  let dir = (env.OLLAMA_MCP_STATE_DIR || "").trim();
  if (!dir) {
    const file = env.OLLAMA_MCP_CONFIG
      ? path.resolve(project, expandHome(env.OLLAMA_MCP_CONFIG.trim()))
      : path.join(os.homedir(), ".ollama-mcp", "config.json");
    try {
      const value = JSON.parse(fs.readFileSync(file, "utf8")).stateDir;
      if (typeof value === "string" && value.trim()) dir = value.trim();
    } catch {
      // No user file, or not JSON: the default, as for the server.
    }
  }
  return path.resolve(project, expandHome(dir || "~/.ollama-mcp/jobs"));
}

const project = env.CLAUDE_PROJECT_DIR || process.cwd();
let real = project;
try {
  real = fs.realpathSync(project);
} catch {
  // As the server keys a project whose path it cannot resolve: by the path itself.
}
const key = crypto.createHash("sha256").update(real).digest("hex").slice(0, 32);
let names = [];
try {
  names = fs.readdirSync(path.join(stateDir(project), ".unread", key));
} catch {
  process.exit(0);
}
if (!names.some((n) => ID.test(n))) process.exit(0);

const root = path.dirname(__dirname);
const windows = process.platform === "win32";
const args = ["--prefix", root, "-y", `ollama-delegate@${VERSION}`, "unread", "--hook"];
const searchPath = (env.PATH || "").split(path.delimiter).filter((p) => path.isAbsolute(p));
spawnSync(
  windows ? "npx.cmd" : "npx",
  // cmd.exe splits on spaces: quote the one argument that may hold them (a user folder).
  windows ? args.map((a) => (/\s/.test(a) ? `"${a}"` : a)) : args,
  {
    stdio: "inherit",
    shell: windows,
    env: { ...env, PATH: searchPath.join(path.delimiter) },
  },
);
// The prompt goes through whatever happened: a hook that failed only leaves its stderr.
process.exit(0);

/**
 * The one list of paths a delegate must not write, or must not read, whatever its permission
 * mode. Both the native engine's file tools and its bubblewrap sandbox enforce it; README's
 * "Security model" documents it. Three kinds:
 *
 * - Host-run paths: files in a working directory that the user's own tools run or trust later,
 *   outside any sandbox. A delegate that could write `.git/config` would get its
 *   `core.fsmonitor` command run by the user's next `git status` (git-config(1),
 *   "core.fsmonitor"); `.git/hooks/*` run at the next commit; `.claude/settings.json` hooks run
 *   in the next Claude Code session there; `.envrc` runs on `cd` with direnv. Read-only to
 *   delegates at any depth below a writable directory (a delegate working in `~/code` must not
 *   reach `~/code/proj/.git/hooks`), and at the top also when they do not exist yet.
 * - Credential paths: where programs keep keys and tokens (`~/.ssh`, `~/.aws`...). Hidden and
 *   refused wherever they appear inside a delegate's directories.
 * - Secret files inside a project (`.env`, private keys): the file tools refuse to read them and
 *   the sandbox hides them, because what a delegate reads is sent to its model's provider,
 *   unless the user allows them by name (`allowSecretFiles`).
 *
 * These are names; identities.ts finds the same files under other names (links, hard
 * links) by device and inode.
 */
import { posix } from "node:path";

/**
 * Names that something on the host runs or trusts later, wherever they are below a writable
 * directory: depth does not matter, because git, Claude Code, other coding agents, package
 * managers, direnv, mise, hook managers and editors honour these files in whichever folder
 * they are run or opened in, and the user may run them in any project below a delegate's
 * working directory. Directories are protected with everything below them. An entry is one
 * name, or a folder and a name in it (`.github/hooks`) where the folder's other entries are
 * the project's own (CI workflows). docs/security.md "Host-run paths" lists them with why;
 * the project's own code (Makefile, package.json scripts, tests, dependencies) is not here:
 * the user runs it on purpose and reviews it as code.
 */
export const HOST_RUN_PATHS: readonly string[] = [
  // git: config (core.fsmonitor, core.hooksPath, filters, aliases) and hooks run on the
  // host at the next git command.
  ".git",
  // Claude Code: settings (hooks, MCP servers, permissions), commands, agents, skills; its
  // project MCP servers; the memory files every session there reads as instructions, and
  // AGENTS.md, which it reads instead when no CLAUDE.md is in the folder or above it, also in
  // subfolders it reads from (code.claude.com/docs/en/memory, "AGENTS.md", since 2.1.277).
  ".claude",
  ".mcp.json",
  "CLAUDE.md",
  "CLAUDE.local.md",
  "AGENTS.md",
  // Other coding agents' instructions (read with no prompt, as the project's rules) and
  // their project settings, which start MCP servers, hooks and plugins on the host:
  // Codex (AGENTS.override.md, .codex/, .agents/skills), Gemini CLI and Qwen Code (folder
  // trust is off by default: .gemini/settings.json runs at the next start), Cursor, Windsurf
  // and Devin Desktop (hooks.json), Cline (.clinerules/hooks), Roo (.roo/mcp.json is loaded
  // automatically), Continue (.continue/mcpServers), aider (lint-cmd and test-cmd run after
  // every edit), OpenCode (.opencode/plugins load at start), Zed (.rules, .zed/tasks.json),
  // Kiro (.kiro/hooks), Amazon Q, Junie, goose, Crush (crushrc is a shell script run at start),
  // Amp (AGENT.md).
  "AGENTS.override.md",
  "AGENT.md",
  ".codex",
  ".agents",
  "GEMINI.md",
  ".gemini",
  "QWEN.md",
  ".qwen",
  ".cursor",
  ".cursorrules",
  ".windsurf",
  ".windsurfrules",
  ".devin",
  ".clinerules",
  ".cline",
  ".roo",
  ".roorules",
  ".roomodes",
  ".continue",
  ".aider.conf.yml",
  "opencode.json",
  "opencode.jsonc",
  ".opencode",
  ".zed",
  ".rules",
  ".kiro",
  ".amazonq",
  ".junie",
  ".goosehints",
  "CRUSH.md",
  "crush.json",
  ".crush.json",
  "crushrc",
  ".crushrc",
  // GitHub Copilot in VS Code and its CLI: instructions, prompts, custom agents and skills,
  // hooks (`.github/hooks/*.json`, loaded as soon as VS Code sees them) and MCP servers.
  ".github/copilot-instructions.md",
  ".github/instructions",
  ".github/prompts",
  ".github/agents",
  ".github/skills",
  ".github/hooks",
  ".github/mcp.json",
  // Package managers and toolchains: configuration that picks the program a command runs,
  // or puts code into it, at the user's next `npm`/`yarn`/`pnpm`/`bun`/`cargo`/`uv` command
  // whatever it was for: npm's script-shell and node-options, yarnPath and plugins, pnpm's
  // hooks file, bun's preload, cargo's rustc-wrapper and runners, a rust-toolchain `path`,
  // asdf and mise `path:` versions, uv's interpreter and index, Bundler's BUNDLE_GEMFILE,
  // direnv's layout folder on PATH.
  ".npmrc",
  ".yarnrc.yml",
  ".yarnrc",
  ".yarn/releases",
  ".yarn/plugins",
  ".pnpmfile.cjs",
  ".pnpmfile.mjs",
  "pnpm-workspace.yaml",
  "bunfig.toml",
  ".cargo",
  "rust-toolchain",
  "rust-toolchain.toml",
  ".tool-versions",
  ".python-version",
  "uv.toml",
  ".bundle",
  ".direnv",
  // direnv runs .envrc on cd; mise runs its hooks and tasks from these files (since mise
  // 2026.8, `mise run` trusts a project's config by itself).
  ".envrc",
  ".mise.toml",
  "mise.toml",
  ".mise.local.toml",
  "mise.local.toml",
  ".mise",
  "mise/config.toml",
  "mise/tasks",
  "mise-tasks",
  ".mise-tasks",
  ".config/mise",
  ".config/mise.toml",
  // Editors run tasks, debuggers and extension settings from these on open.
  ".vscode",
  ".idea",
  ".devcontainer",
  // Commit hook managers run their configured commands at the next commit.
  ".husky",
  ".pre-commit-config.yaml",
  "lefthook.yml",
  ".lefthook.yml",
  // Our own project settings and agent files: a delegate must not set the next delegate's
  // policy.
  "ollama-mcp.config.json",
  ".ollama-delegate",
];

/** The host-run entries that are directories when they exist; the others are files. */
export const HOST_RUN_DIRS: ReadonlySet<string> = new Set([
  ".git",
  ".claude",
  ".codex",
  ".agents",
  ".gemini",
  ".qwen",
  ".cursor",
  ".windsurf",
  ".devin",
  ".cline",
  ".roo",
  ".continue",
  ".opencode",
  ".zed",
  ".kiro",
  ".amazonq",
  ".junie",
  ".github/instructions",
  ".github/prompts",
  ".github/agents",
  ".github/skills",
  ".github/hooks",
  ".yarn/releases",
  ".yarn/plugins",
  ".cargo",
  ".bundle",
  ".direnv",
  ".mise",
  "mise/tasks",
  "mise-tasks",
  ".mise-tasks",
  ".config/mise",
  ".vscode",
  ".idea",
  ".devcontainer",
  ".husky",
  ".ollama-delegate",
]);

const HOST_RUN_NAMES: ReadonlySet<string> = new Set(
  HOST_RUN_PATHS.filter((p) => !p.includes("/")),
);
/** The two-part entries: folder -> the names in it that are host-run. */
const HOST_RUN_IN: ReadonlyMap<string, ReadonlySet<string>> = (() => {
  const map = new Map<string, Set<string>>();
  for (const entry of HOST_RUN_PATHS.filter((p) => p.includes("/"))) {
    const [dir, name] = entry.split("/") as [string, string];
    map.set(dir, (map.get(dir) ?? new Set()).add(name));
  }
  return map;
})();
/** The names inside those folders: a change journal keeps track of them too (tree/names.ts). */
export const HOST_RUN_INNER_NAMES: ReadonlySet<string> = new Set(
  [...HOST_RUN_IN.values()].flatMap((names) => [...names]),
);

/**
 * The host-run names a sandbox holds with a placeholder before they exist: folders that tools
 * running on the host right now watch and act on at once (an editor's or Claude Code's git
 * polling a new `.git`, a live Claude Code or editor reloading `.claude/` or `.vscode/`
 * settings). The others are acted on only at a user's later step (direnv and mise ask for
 * trust, hook managers run at the next commit, Claude Code reads CLAUDE.md when a session
 * starts): one a command creates is moved out of the project when the command ends
 * (planted.ts), so that a delegate's `ls` shows no placeholders named after config files.
 */
export const PLACEHOLDER_NAMES: ReadonlySet<string> = new Set([
  ".git",
  ".claude",
  ".vscode",
  ".idea",
]);

/** True when `name` (one path part) is a host-run name wherever it is. */
export function isHostRunName(name: string): boolean {
  return HOST_RUN_NAMES.has(name);
}

/**
 * True when the entry `name` of a folder named `parent` is host-run: a host-run name, or one
 * of the names host-run in that folder (`hooks` in `.github`).
 */
export function isHostRunEntry(parent: string, name: string): boolean {
  return HOST_RUN_NAMES.has(name) || HOST_RUN_IN.get(parent)?.has(name) === true;
}

/** Whether the host-run path `path` (a host-run entry's path) is a directory when it exists. */
export function isHostRunDir(path: string): boolean {
  const rel = parts(path);
  const last = rel.at(-1) ?? "";
  return HOST_RUN_DIRS.has(last) || HOST_RUN_DIRS.has(`${rel.at(-2)}/${last}`);
}

/**
 * The host-run path a relative path is or lies below, at any depth, as written up to and
 * including the host-run part (`proj/.git` for `proj/.git/hooks/pre-commit`); undefined when
 * no part of it is a host-run name.
 */
export function hostRunPart(relPath: string): string | undefined {
  const rel = parts(relPath);
  const at = hostRunIndex(rel);
  return at < 0 ? undefined : rel.slice(0, at + 1).join("/");
}

/** The index of the first part of `rel` that makes it host-run, or -1. */
export function hostRunIndex(rel: readonly string[]): number {
  return rel.findIndex((p, i) => isHostRunEntry(i > 0 ? rel[i - 1]! : "", p));
}

/**
 * Names of directories and files that hold credentials, refused at any depth. The toolchain
 * files among them are where each tool's own documentation says it keeps a token or password
 * (docs/security.md "Credential files" cites each): they are hidden also inside a toolchain
 * folder that delegates may read (toolchains.ts).
 */
export const CREDENTIAL_PATHS: readonly string[] = [
  ".ssh",
  ".gnupg",
  ".aws",
  ".azure",
  ".kube",
  ".docker",
  ".netrc",
  ".git-credentials",
  ".npmrc",
  ".pypirc",
  ".password-store",
  ".ollama-mcp",
  ".config/gcloud",
  ".config/gh",
  ".config/hub",
  ".config/git/credentials",
  ".local/share/keyrings",
  // `cargo login` saves registry tokens in $CARGO_HOME/credentials.toml (before cargo 1.39:
  // `credentials`).
  ".cargo/credentials.toml",
  ".cargo/credentials",
  // Gradle reads repository and signing passwords from GRADLE_USER_HOME's gradle.properties;
  // Maven's server passwords are in settings.xml, its master password in settings-security.xml.
  ".gradle/gradle.properties",
  ".m2/settings.xml",
  ".m2/settings-security.xml",
  // `gem signin` keeps the RubyGems API key here; `uv auth login` its plaintext store; Composer
  // its auth.json (both homes); `terraform login` and `helm registry login` their tokens;
  // NuGet its packageSourceCredentials; Vault's CLI its token.
  ".gem/credentials",
  ".local/share/uv/credentials",
  ".config/composer/auth.json",
  ".composer/auth.json",
  ".terraform.d/credentials.tfrc.json",
  ".config/helm/registry",
  ".nuget/NuGet/NuGet.Config",
  ".vault-token",
];

/**
 * The folders by whose names a credential store of several parts is known, from where it
 * starts: for `x/.config/helm/registry`, `x/.config` and `x/.config/helm`; none for `x/.ssh`.
 * Renamed (`mv x/.config x/cfg`), the store would be no store by its path in a later turn, so
 * sandboxes bind these onto themselves, writable as before: a mount point cannot be renamed.
 */
export function storeHeads(store: string): string[] {
  const entry = CREDENTIAL_PATHS.find((e) => e.includes("/") && store.endsWith(`/${e}`));
  if (entry === undefined) return [];
  const base = store.slice(0, store.length - entry.length);
  const parts = entry.split("/").slice(0, -1);
  return parts.map((_, i) => `${base}${parts.slice(0, i + 1).join("/")}`);
}

/**
 * Files in the home folder that hold registry tokens or passwords but are ordinary project
 * files elsewhere (a project's `.yarnrc.yml` is host-run, not hidden): yarn's `npmAuthToken`,
 * bun's `[install.scopes]` tokens, pip's index URLs with credentials, pnpm's auth settings. The
 * home folder is never opened to delegates; these keep a toolchain folder that holds one from
 * being opened whole (toolchains.ts).
 */
export const HOME_CREDENTIAL_FILES: readonly string[] = [
  ".yarnrc.yml",
  ".yarnrc",
  ".bunfig.toml",
  ".config/pip/pip.conf",
  ".pip/pip.conf",
  ".config/pnpm/rc",
];

/**
 * Secret files inside a project, by file name (`*` matches any run of characters). Templates
 * such as `.env.example` are not secrets and stay readable. Names only where the format's
 * purpose is to hold secrets: not `secret.yaml` or `secrets.yaml`, which are as often Helm or
 * Kubernetes templates the delegate is asked to work on.
 */
export const SECRET_FILE_PATTERNS: readonly string[] = [
  ".env",
  ".env.*",
  // dotenv files by another name (`app.env`, `prod.env`: docker compose's env_file).
  "*.env",
  // direnv's file exports tokens as often as it sets paths (it is host-run too).
  ".envrc",
  ".envrc.*",
  // Cloudflare Wrangler's local secrets; act's local GitHub Actions secrets.
  ".dev.vars",
  ".dev.vars.*",
  ".secrets",
  // Terraform: variable values (passwords, tokens) and state, which holds every secret set.
  "*.tfvars",
  "*.tfvars.json",
  "*.tfstate.backup",
  // Passwords of PostgreSQL and of Apache's basic auth (hashes, crackable offline).
  ".pgpass",
  ".htpasswd",
  "*.pem",
  "*.key",
  "*.p12",
  "*.pfx",
  "*.jks",
  "*.keystore",
  "*.kdbx",
  // PuTTY keys, PKCS#8 keys (Apple's AuthKey_*.p8), Kerberos keytabs.
  "*.ppk",
  "*.p8",
  "*.keytab",
  "id_rsa*",
  "id_dsa*",
  "id_ecdsa*",
  "id_ed25519*",
  "*.tfstate",
  "credentials",
  "credentials.json",
  "service-account*.json",
];

/**
 * Every secret pattern in one expression: a turn's walks test every file name of the project
 * (and every name in git's index and trees) against it, about ten times faster than pattern
 * by pattern.
 */
const ANY_SECRET = new RegExp(`^(?:${SECRET_FILE_PATTERNS.map(globBody).join("|")})$`);

/** A name pattern (`*` any run of characters) as the body of a regular expression. */
function globBody(pattern: string): string {
  return pattern.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*");
}

/** File names that match a secret pattern but are meant to be shared. */
const SECRET_TEMPLATES = /\.(example|sample|template|dist|defaults?)$|\.pub$/i;

/** Compiled patterns: a turn's walk tests every file name in the project against each. */
const compiled = new Map<string, RegExp>();

function nameMatches(name: string, pattern: string): boolean {
  if (!pattern.includes("*")) return name === pattern;
  let regex = compiled.get(pattern);
  if (!regex) {
    regex = new RegExp(`^${globBody(pattern)}$`);
    // Bounded by the patterns in use: ours, and the user's (at most 100 by the settings).
    if (compiled.size < 1000) compiled.set(pattern, regex);
  }
  return regex.test(name);
}

/** `path` split into its `/`-separated parts, without empty or `.` parts. */
function parts(relPath: string): string[] {
  return relPath.split(/[\\/]/).filter((p) => p !== "" && p !== ".");
}

/** True when `rel` (relative, `/`-separated) is `entry` or lies below it. */
function under(rel: string[], entry: string): boolean {
  const e = parts(entry);
  return e.length <= rel.length && e.every((p, i) => rel[i] === p);
}

/** The refusal for writing at or below the host-run path `path` (as the model should see it). */
export function hostRunRefusal(path: string): string {
  return `"${path}" is run or trusted by the host's own tools later (git, Claude Code, ` +
    "editors, direnv), so delegates may not change it; ask the user to make this change";
}

/**
 * Why a path relative to a writable root must not be written, or undefined. Host-run paths
 * and credential paths count at any depth.
 */
export function writeRefusal(relPath: string): string | undefined {
  const rel = parts(relPath);
  if (rel.length === 0) return undefined;
  const hostRun = hostRunPart(relPath);
  if (hostRun !== undefined) return hostRunRefusal(hostRun);
  return credentialRefusal(relPath);
}

/** Why a path relative to a root lies in a credential store, or undefined. */
export function credentialRefusal(relPath: string): string | undefined {
  const rel = parts(relPath);
  for (let i = 0; i < rel.length; i++) {
    const rest = rel.slice(i);
    const hit = CREDENTIAL_PATHS.find((entry) => under(rest, entry));
    if (hit !== undefined) {
      return `"${posix.join(...rel.slice(0, i), hit)}" holds credentials, which delegates ` +
        "never see";
    }
  }
  return undefined;
}

/**
 * Why a file must not be read, or undefined: a credential path, or a secret file whose name
 * the user has not allowed with `allowSecretFiles` (file name patterns, as in
 * SECRET_FILE_PATTERNS).
 */
export function readRefusal(
  relPath: string,
  allowSecretFiles: readonly string[] = [],
): string | undefined {
  const credential = credentialRefusal(relPath);
  if (credential !== undefined) return credential;
  const objects = gitObjectsRefusal(relPath);
  if (objects !== undefined) return objects;
  const name = parts(relPath).at(-1);
  if (name === undefined || SECRET_TEMPLATES.test(name)) return undefined;
  const pattern = SECRET_FILE_PATTERNS.find((p) => nameMatches(name, p));
  if (pattern === undefined) return undefined;
  if (allowSecretFiles.some((p) => nameMatches(name, p))) return undefined;
  return `"${name}" looks like a secret (${pattern}), and what a delegate reads is sent to its ` +
    "model's provider; the user can allow it with `ollama-delegate config --allow-secret-file " +
    `'${name}'\``;
}

/**
 * Why a file in git's object store (`.git/objects/...`, also a submodule's under
 * `.git/modules/<name>/objects/`) is not read by the file tools: its content is compressed
 * objects, of any file git was ever given, secret files included (git_secrets.ts hides those
 * from commands); a model has no use for the raw bytes, and git commands read them for it.
 */
export function gitObjectsRefusal(relPath: string): string | undefined {
  const rel = parts(relPath).map((p) => p.toLowerCase());
  const git = rel.indexOf(".git");
  if (git < 0 || !rel.slice(git + 1, -1).includes("objects")) return undefined;
  return `"${parts(relPath).join("/")}" is in git's object store, which the file tools do not ` +
    "read (it may hold secret files' content); use git commands (git show, git log) instead";
}

/**
 * True when a file name (one path part) matches one of the secret-file patterns and the user
 * has not allowed it, templates excepted. Case is folded as the file tools fold it (a
 * case-insensitive filesystem opens `.ENV` as `.env`, and on any system it is a dotenv file).
 */
export function isSecretFileName(name: string, allowSecretFiles: readonly string[] = []): boolean {
  const secret = (n: string, allow: readonly string[]) =>
    ANY_SECRET.test(n) && !SECRET_TEMPLATES.test(n) && !allow.some((p) => nameMatches(n, p));
  const lower = name.toLowerCase();
  return secret(name, allowSecretFiles) ||
    (lower !== name && secret(lower, allowSecretFiles.map((a) => a.toLowerCase())));
}

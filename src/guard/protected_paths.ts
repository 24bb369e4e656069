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
 * directory: depth does not matter, because git, Claude Code, direnv, mise, hook managers and
 * editors honour these files in whichever folder they are run or opened in, and the user may
 * run them in any project below a delegate's working directory. Directories are protected
 * with everything below them. Each entry is a single name (one path part).
 */
export const HOST_RUN_PATHS: readonly string[] = [
  // git: config (core.fsmonitor, core.hooksPath, filters, aliases) and hooks run on the
  // host at the next git command.
  ".git",
  // Claude Code: settings (hooks, MCP servers, permissions), commands, agents, skills; its
  // project MCP servers; the memory files every session there reads as instructions.
  ".claude",
  ".mcp.json",
  "CLAUDE.md",
  "CLAUDE.local.md",
  // direnv runs .envrc on cd; mise runs its hooks and tasks from these files.
  ".envrc",
  ".mise.toml",
  "mise.toml",
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

/** The host-run names that are directories when they exist; the others are files. */
export const HOST_RUN_DIRS: ReadonlySet<string> = new Set([
  ".git",
  ".claude",
  ".vscode",
  ".idea",
  ".devcontainer",
  ".husky",
  ".ollama-delegate",
]);

const HOST_RUN_NAMES: ReadonlySet<string> = new Set(HOST_RUN_PATHS);

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

/** True when `name` (one path part) is a host-run name. */
export function isHostRunName(name: string): boolean {
  return HOST_RUN_NAMES.has(name);
}

/**
 * The host-run path a relative path is or lies below, at any depth, as written up to and
 * including the host-run part (`proj/.git` for `proj/.git/hooks/pre-commit`); undefined when
 * no part of it is a host-run name.
 */
export function hostRunPart(relPath: string): string | undefined {
  const rel = parts(relPath);
  const at = rel.findIndex((p) => HOST_RUN_NAMES.has(p));
  return at < 0 ? undefined : rel.slice(0, at + 1).join("/");
}

/** Names of directories and files that hold credentials, refused at any depth. */
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
  ".config/git/credentials",
  ".local/share/keyrings",
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

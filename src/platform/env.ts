import process from "node:process";
import { isWindows } from "./runtime.ts";

const COMMON = [
  "LANG",
  "LC_ALL",
  "LC_CTYPE",
  "TERM",
  "TZ",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "NODE_EXTRA_CA_CERTS",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
];

const POSIX = [
  "HOME",
  "PATH",
  "USER",
  "LOGNAME",
  "SHELL",
  "TMPDIR",
  "XDG_CONFIG_HOME",
  "XDG_DATA_HOME",
  "XDG_CACHE_HOME",
  "XDG_RUNTIME_DIR",
];

// SystemRoot and windir are not optional: without them Winsock cannot initialise and the
// child cannot open even a loopback socket.
const WINDOWS = [
  "SystemRoot",
  "windir",
  "SystemDrive",
  "PATH",
  "PATHEXT",
  "COMSPEC",
  "USERPROFILE",
  "HOMEDRIVE",
  "HOMEPATH",
  "APPDATA",
  "LOCALAPPDATA",
  "PROGRAMDATA",
  "PROGRAMFILES",
  "PROGRAMFILES(X86)",
  "PROGRAMW6432",
  "TEMP",
  "TMP",
  "USERNAME",
  "USERDOMAIN",
  "COMPUTERNAME",
  "PUBLIC",
  "NUMBER_OF_PROCESSORS",
  "PROCESSOR_ARCHITECTURE",
  "OS",
  "PSMODULEPATH",
];

/**
 * Provider and nesting variables that must never reach a child, even if a future
 * allowlist entry matched them by accident. CLAUDECODE is Claude Code's nesting guard.
 */
export const BLOCKED_PREFIXES = [
  "ANTHROPIC_",
  "CLAUDE_",
  "CLAUDECODE",
  "AWS_",
  "GOOGLE_",
  "GCLOUD_",
  "VERTEX_",
  "AZURE_",
  "OPENAI_",
  "BEDROCK_",
];

/** The variables a child may inherit on this platform. */
export function allowlist(windows: boolean = isWindows): readonly string[] {
  return windows ? [...WINDOWS, ...COMMON] : [...POSIX, ...COMMON];
}

/**
 * Builds a child environment from scratch: only allowlisted names are copied from the
 * parent, matched case-insensitively on Windows but kept in the parent's spelling.
 */
export function allowlistedEnv(
  parent: Record<string, string | undefined>,
  windows: boolean = isWindows,
): Record<string, string> {
  const out: Record<string, string> = {};
  const wanted = allowlist(windows);
  const wantedUpper = new Set(wanted.map((n) => n.toUpperCase()));
  for (const [name, value] of Object.entries(parent)) {
    if (value === undefined) continue;
    const allowed = windows ? wantedUpper.has(name.toUpperCase()) : wanted.includes(name);
    if (!allowed || isBlocked(name)) continue;
    out[name] = value;
  }
  return out;
}

/** Whether a name belongs to a provider or to Claude Code's own process state. */
export function isBlocked(name: string): boolean {
  const upper = name.toUpperCase();
  return BLOCKED_PREFIXES.some((p) => upper.startsWith(p));
}

/** What an unconfined shell command gets: PATH, HOME and the locale only, no secrets. */
export function minimalShellEnv(
  parent: Record<string, string | undefined> = process.env,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ["PATH", "HOME", "LANG", "SystemRoot", "TEMP", "TMP", "PATHEXT"]) {
    const value = parent[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}

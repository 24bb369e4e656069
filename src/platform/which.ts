import { statSync } from "node:fs";
import { delimiter as posixDelimiter, isAbsolute, join, resolve, win32 } from "node:path";
import { isWindows } from "./runtime.ts";

/**
 * Resolves a command the way the child would, using the child's PATH (and PATHEXT on
 * Windows), not ours: we spawn with a cleared environment. The answer is always an absolute
 * path, so the caller can spawn exactly the file that was checked.
 *
 * Only absolute PATH entries are searched. A relative entry (`node_modules/.bin`, `.`, or an
 * empty one, which means the current directory) names a different directory for every
 * working directory: resolved here against one directory and by the OS against the child's,
 * it would let a file planted in a job's working directory be the program that runs.
 *
 * A name with a path separator is not searched: it is taken relative to `cwd`, which must
 * be a directory the user chose (the server's), never a job's working directory.
 */
export function which(
  command: string,
  env: Record<string, string>,
  cwd: string,
  windows: boolean = isWindows,
  isExecutable: (path: string) => boolean = isExecutableFile,
): string | undefined {
  const hasSeparator = windows ? /[\\/]/.test(command) : command.includes("/");
  const extensions = windows ? windowsExtensions(command, env) : [""];
  if (hasSeparator || (windows ? win32.isAbsolute(command) : isAbsolute(command))) {
    const base = windows ? win32.resolve(cwd, command) : resolve(cwd, command);
    return extensions.map((ext) => base + ext).find(isExecutable);
  }
  for (const dir of searchPath(env, windows)) {
    for (const ext of extensions) {
      const candidate = windows ? win32.join(dir, command + ext) : join(dir, command);
      if (isExecutable(candidate)) return candidate;
    }
  }
  return undefined;
}

/** The absolute entries of the child's PATH, in order; relative and empty ones are dropped. */
export function searchPath(env: Record<string, string>, windows: boolean = isWindows): string[] {
  const pathValue = lookup(env, "PATH", windows) ?? "";
  return pathValue.split(windows ? ";" : posixDelimiter).map((d) => d.replace(/^"|"$/g, ""))
    .filter((d) => windows ? isFullyQualifiedWin32(d) : d.startsWith("/"));
}

/**
 * `C:\dir` or `\\server\share`: a Windows path that names one directory whatever the current
 * drive and directory are. `\dir` (current drive) and `C:dir` (current directory of C:) do not.
 */
function isFullyQualifiedWin32(path: string): boolean {
  return /^[A-Za-z]:[\\/]/.test(path) || /^[\\/]{2}[^\\/]/.test(path);
}

function windowsExtensions(command: string, env: Record<string, string>): string[] {
  const listed = (lookup(env, "PATHEXT", true) ?? ".COM;.EXE;.BAT;.CMD").split(";")
    .map((e) => e.trim().toLowerCase()).filter((e) => e.startsWith("."));
  if (listed.some((ext) => command.toLowerCase().endsWith(ext))) return [""];
  // A native .exe/.com is preferred over a batch shim, which needs cmd.exe to run.
  const rank = (e: string) => (e === ".exe" || e === ".com" ? 0 : 1);
  return [...listed].sort((a, b) => rank(a) - rank(b));
}

function lookup(env: Record<string, string>, name: string, windows: boolean): string | undefined {
  if (!windows) return env[name];
  const key = Object.keys(env).sort().find((k) => k.toUpperCase() === name);
  return key === undefined ? undefined : env[key];
}

function isExecutableFile(path: string): boolean {
  try {
    const st = statSync(path);
    if (!st.isFile()) return false;
    return isWindows || (st.mode & 0o111) !== 0;
  } catch {
    return false;
  }
}

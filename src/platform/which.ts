import { statSync } from "node:fs";
import { delimiter as posixDelimiter, isAbsolute, join, resolve, win32 } from "node:path";
import { isWindows } from "./runtime.ts";

/**
 * Resolves a command the way the child would, using the child's PATH (and PATHEXT on
 * Windows), not ours: we spawn with a cleared environment. A name with a path separator
 * is taken relative to `cwd` and not searched.
 */
export function which(
  command: string,
  env: Record<string, string>,
  cwd: string,
  windows: boolean = isWindows,
): string | undefined {
  const hasSeparator = windows ? /[\\/]/.test(command) : command.includes("/");
  const extensions = windows ? windowsExtensions(command, env) : [""];
  if (hasSeparator || (windows ? win32.isAbsolute(command) : isAbsolute(command))) {
    const base = windows ? win32.resolve(cwd, command) : resolve(cwd, command);
    return extensions.map((ext) => base + ext).find(isExecutableFile);
  }
  const pathValue = lookup(env, "PATH", windows) ?? "";
  const dirs = pathValue.split(windows ? ";" : posixDelimiter).map((d) => d.replace(/^"|"$/g, ""))
    .filter((d) => d !== "");
  for (const dir of dirs) {
    for (const ext of extensions) {
      const candidate = windows ? win32.join(dir, command + ext) : join(dir, command);
      if (isExecutableFile(candidate)) return candidate;
    }
  }
  return undefined;
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

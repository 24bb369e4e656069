import { win32 } from "node:path";
import { DelegateError } from "../../errors.ts";

/**
 * A variable of a Windows environment map, whose names are case-insensitive. With several
 * spellings, the first in sorted order wins, as in Node's child_process and execa.
 */
export function windowsEnvValue(env: Record<string, string>, name: string): string | undefined {
  const upper = name.toUpperCase();
  const key = Object.keys(env).sort().find((k) => k.toUpperCase() === upper);
  return key === undefined ? undefined : env[key];
}

/**
 * `%SystemRoot%\System32`, the directory of cmd.exe and taskkill.exe. Programs from there are
 * started by absolute path, never looked up on PATH, so a `cmd.exe` or `taskkill.exe` planted in
 * the working directory or on PATH is never run (the reason Rust uses GetSystemDirectory).
 */
export function system32(env: Record<string, string>): string {
  const root = windowsEnvValue(env, "SystemRoot") ?? windowsEnvValue(env, "windir");
  if (root === undefined || !win32.isAbsolute(root)) {
    throw new DelegateError(
      `Cannot find the Windows system directory: SystemRoot is ${
        root === undefined ? "not set" : `"${root}", not an absolute path`
      } in the child environment. Start the server from a normal Windows session`,
    );
  }
  return win32.join(root, "System32");
}

/**
 * cmd.exe's absolute path. It is passed verbatim as the first word of its own command line
 * (runtimes do not quote it when arguments are verbatim), so it must not contain whitespace or
 * quotes, which would move where cmd.exe looks for its switches.
 */
export function cmdExePath(env: Record<string, string>): string {
  const path = win32.join(system32(env), "cmd.exe");
  if (/[\s"]/.test(path)) {
    throw new DelegateError(
      `Cannot run a batch file: the path of cmd.exe ("${path}") contains a space or a quote`,
    );
  }
  return path;
}

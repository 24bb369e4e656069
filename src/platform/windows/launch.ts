import { cmdArguments, isBatchFile } from "./command_line.ts";
import { cmdExePath } from "./system_dir.ts";

/** What the runtime is asked to start on Windows. */
export interface WindowsLaunch {
  command: string;
  args: string[];
  /**
   * The arguments are a finished command line: pass them with Node's
   * `windowsVerbatimArguments` / Deno's `windowsRawArguments`, so the runtime adds nothing.
   */
  verbatim: boolean;
}

/**
 * How to start `command` on Windows, with exactly one layer of escaping on every route.
 *
 * - A `.exe`/`.com` is started directly and the runtime quotes each argument with the MSVCRT
 *   rules (libuv's `quote_cmd_arg`, which Deno's Windows spawner copies). No cmd.exe, nothing
 *   else to escape.
 * - A `.cmd`/`.bat` cannot be started directly: CreateProcess hands it to cmd.exe, which
 *   re-parses the line. We start `%SystemRoot%\System32\cmd.exe` ourselves with a line built by
 *   ./command_line.ts, passed verbatim. Deno >= 2.5.6 would otherwise escape batch arguments
 *   itself (Rust's BatBadBut builder), but only for one cmd.exe pass and only when it sees the
 *   batch file; because the program it starts is cmd.exe, that path never runs, so nothing is
 *   escaped twice. Node refuses `.cmd` without a shell since CVE-2024-27980, so it needs this
 *   route anyway; both runtimes therefore run the same, model-tested escaping.
 */
export function windowsLaunch(
  command: string,
  args: readonly string[],
  env: Record<string, string>,
): WindowsLaunch {
  if (!isBatchFile(command)) return { command, args: [...args], verbatim: false };
  return { command: cmdExePath(env), args: cmdArguments(command, args), verbatim: true };
}

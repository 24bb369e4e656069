/**
 * The line for a person who started the server by hand. Loaded only when stdin is a terminal:
 * working out the command (self_command.ts) reads the disk, which a server started by its
 * client does not load before it answers `initialize` (issue 34, item 3).
 */
import { isWindows } from "../platform/runtime.ts";
import { selfCommand } from "../platform/self_command.ts";

/**
 * One line for a person who started the server by hand: otherwise it waits in silence for
 * JSON-RPC on stdin. Goes to stderr, since stdout is the MCP stream.
 */
export function terminalHint(command: string[] = selfCommand()): string {
  const safe = isWindows ? /^[\w@%+=:,./\\-]+$/ : /^[\w@%+=:,./-]+$/;
  const quote = (arg: string) =>
    safe.test(arg) ? arg : isWindows ? `"${arg}"` : `'${arg.replaceAll("'", `'\\''`)}'`;
  const quit = isWindows ? "Ctrl-Z then Enter, or Ctrl-C" : "Ctrl-D or Ctrl-C";
  return "this is an MCP server for Claude Code, waiting for JSON-RPC on stdin/stdout; " +
    `register it with: claude mcp add ollama --scope user -- ${command.map(quote).join(" ")} ` +
    `(Claude Code then starts it). Quit with ${quit}; ollama-delegate --help lists the ` +
    "terminal commands.";
}

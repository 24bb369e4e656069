import process from "node:process";
import { VERSION } from "./version.ts";

const HELP = `ollama-delegate ${VERSION}: hand work from a Claude Code session to other models

Usage:
  ollama-delegate [serve]          run the MCP server on stdio (the default)
  ollama-delegate config [...]     show or change settings (see config --help)
  ollama-delegate doctor [--json]  check the setup and say how to fix it (see doctor --help)
  ollama-delegate doctor --probe   try each model on a tiny tool-use task: which can do
                                   delegated work, on which engine, and how fast
  ollama-delegate models [...]     list models with their context; derive a local model
                                   with a larger context (see models --help)
  ollama-delegate jobs [...]       see, follow, cancel and prune jobs; usage and cost
                                   (see jobs --help)
  ollama-delegate review [...]     review uncommitted changes (or --base <ref>) with one model
                                   or a blind panel (--models a,b,c); --gate is the Claude
                                   Code Stop hook (see review --help)
  ollama-delegate stats [...]      which model's work passes its checks, per agent, in this
                                   repository, and what delegation saved (see stats --help)
  ollama-delegate unread [--hook]  delegations of this project that ended unread; --hook is
                                   the plugin's UserPromptSubmit hook (see unread --help)
  ollama-delegate --version        print the version
  ollama-delegate --help           print this help

Register it with Claude Code, which then starts the server itself:
  claude mcp add ollama --scope user -- npx --prefix "$HOME" -y ollama-delegate
  claude mcp add ollama --scope user -- /path/to/ollama-delegate

Settings: ~/.ollama-mcp/config.json (or $OLLAMA_MCP_CONFIG), ./ollama-mcp.config.json and
OLLAMA_MCP_* variables. Policy (allowed models, delegation mode) is changed only from a
terminal, never by a tool the model can call.`;

/**
 * The commands that never run an engine, so never a Grep or Glob pattern a model wrote: under
 * Node they skip turning on V8's regex fallback (platform/regex_guard.ts), whose `node:v8`
 * costs `jobs` about 12 ms of its 0.2 s there (bench/listing_bench.ts). Every other command,
 * and any new one, gets the fallback.
 */
const ENGINE_FREE = new Set(["jobs", "stats", "unread", "config", "--version", "-V", "version"]);
const HELP_WORDS = new Set(["--help", "-h", "help"]);

/** Whether the command `argv` names may run a pattern a model wrote (an engine's Grep). */
export function needsRegexFallback(argv: readonly string[]): boolean {
  const [command] = argv;
  return command === undefined || !(ENGINE_FREE.has(command) || HELP_WORDS.has(command));
}

/**
 * Dispatches a subcommand and returns the process exit code. Each subcommand's modules are
 * loaded when it runs, so the server answers `initialize` without the terminal commands'.
 */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case undefined:
    case "serve": {
      if (rest.includes("--help") || rest.includes("-h")) {
        console.log(HELP);
        return 0;
      }
      // Reading starts before the server's modules load: see early_discover.ts.
      const { EarlyDiscover } = await import("./server/transport/early_discover.ts");
      const early = new EarlyDiscover(process.stdin, process.stdout);
      // Before anything imports the MCP SDK: see without_ajv.ts.
      (await import("./server/without_ajv.ts")).leaveAjvUnloaded();
      return await (await import("./server/serve.ts")).serve(early);
    }
    case "config": {
      return (await import("./settings/config_cmd.ts")).configMain(rest);
    }
    case "doctor": {
      return await (await import("./cli/doctor/doctor.ts")).doctorMain(rest);
    }
    case "jobs": {
      return await (await import("./cli/jobs/jobs.ts")).jobsMain(rest);
    }
    case "review": {
      return await (await import("./cli/review/review.ts")).reviewMain(rest);
    }
    case "stats": {
      return await (await import("./cli/stats.ts")).statsMain(rest);
    }
    case "unread": {
      return await (await import("./cli/hooks/unread.ts")).unreadMain(rest);
    }
    case "models": {
      return await (await import("./cli/models/models.ts")).modelsMain(rest);
    }
    case "--version":
    case "-V":
    case "version":
      console.log(`ollama-delegate ${VERSION}`);
      return 0;
    case "--help":
    case "-h":
    case "help":
      console.log(HELP);
      return 0;
    default:
      console.error(`ollama-delegate: unknown command "${command}". Run ollama-delegate --help`);
      return 2;
  }
}

// The entry for `deno run` and `deno compile`. Node 20 has no import.meta.main, so the Node
// bundle starts from src/node_main.ts, which calls main() itself.
if (import.meta.main) {
  const code = await main(process.argv.slice(2));
  process.exitCode = code;
}

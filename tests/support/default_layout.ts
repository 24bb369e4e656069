/**
 * The state dir where a user's install keeps it: `~/.ollama-mcp/jobs` under a fresh HOME, with
 * OLLAMA_MCP_STATE_DIR left unset (the harness sets it otherwise; an empty value counts as
 * unset). Spread into startScene's options; `cli` gives the terminal commands the same place.
 */
import { join } from "node:path";
import { type CliEnv, cliEnv } from "../cli/jobs_support.ts";
import { realDenoDir, tempDir } from "./harness.ts";

export interface DefaultLayout {
  home: string;
  stateDir: string;
  env: Record<string, string>;
}

export function defaultLayout(prefix = "od-default-home-"): DefaultLayout {
  const home = tempDir(prefix);
  return { home, stateDir: join(home, ".ollama-mcp", "jobs"), env: { OLLAMA_MCP_STATE_DIR: "" } };
}

/** `ollama-delegate jobs ...` with the layout's HOME and its default state dir. */
export function cliLayout(layout: DefaultLayout): CliEnv {
  return cliEnv({
    stateDir: layout.stateDir,
    // Another HOME must not mean another Deno cache.
    env: {
      HOME: layout.home,
      OLLAMA_MCP_STATE_DIR: "",
      // The Claude config dir where a user's install keeps it too: ~/.ollama-mcp/claude.
      OLLAMA_MCP_CLAUDE_CONFIG_DIR: "",
      DENO_DIR: realDenoDir(),
    },
  });
}

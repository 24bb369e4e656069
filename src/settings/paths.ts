import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";

/**
 * Expands a leading `~`, which only a shell would expand: taken literally it makes a `./~`
 * directory.
 */
export function expandHome(path: string, home: string = homedir()): string {
  if (path === "~") return home;
  if (path.startsWith("~/") || path.startsWith("~\\")) return join(home, path.slice(2));
  return path;
}

/** Where the layers live, for one process. */
export interface ConfigLocations {
  /** `$OLLAMA_MCP_CONFIG`, else `~/.ollama-mcp/config.json`. */
  userFile: string;
  /** `./ollama-mcp.config.json` in the server's working directory. */
  projectFile: string;
}

/** Resolves the two settings files from the environment and working directory. */
export function configLocations(
  env: Record<string, string | undefined>,
  cwd: string,
  home: string = homedir(),
): ConfigLocations {
  const override = env.OLLAMA_MCP_CONFIG?.trim();
  const userFile = override
    ? resolve(cwd, expandHome(override, home))
    : join(home, ".ollama-mcp", "config.json");
  return { userFile, projectFile: join(cwd, "ollama-mcp.config.json") };
}

/** A path setting made absolute: `~` expanded, relative paths taken from `base`. */
export function absolutePath(path: string, base: string, home: string = homedir()): string {
  const expanded = expandHome(path, home);
  return isAbsolute(expanded) ? expanded : resolve(base, expanded);
}

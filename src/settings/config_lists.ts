/** `config` flags that set a list: --workspace-root, --toolchain-path, --allow-secret-file. */
import { statSync } from "node:fs";
import { delimiter, isAbsolute, resolve } from "node:path";
import { ConfigUsageError } from "./config_errors.ts";
import { expandHome } from "./paths.ts";

export const LIST_FLAGS = {
  "workspace-root": "workspaceRoots",
  "toolchain-path": "toolchainPaths",
  "allow-secret-file": "allowSecretFiles",
} as const;
export type ListFlag = keyof typeof LIST_FLAGS;

/** The word that empties a list. */
const NONE = "none";

/**
 * The list a repeated flag sets: each value may itself be a comma list (workspace roots also
 * a PATH-style list); `none` alone clears the list.
 */
export function listFlagValue(
  flag: ListFlag,
  texts: readonly string[],
  cwd: string,
  home: string,
): string[] {
  const paths = flag === "workspace-root" || flag === "toolchain-path";
  const separators = paths ? new RegExp(`[,${delimiter}]`) : /,/;
  const items = texts.flatMap((t) => t.split(separators)).map((s) => s.trim())
    .filter((s) => s !== "");
  if (items.includes(NONE)) {
    if (items.length > 1) {
      throw new ConfigUsageError(
        `Cannot use --${flag} ${NONE} with other values: ${NONE} clears the list on its own`,
      );
    }
    return [];
  }
  if (items.length === 0) {
    throw new ConfigUsageError(`Cannot use an empty --${flag}: name one or more, or ${NONE}`);
  }
  return paths ? items.map((dir) => existingDir(flag, dir, cwd, home)) : items;
}

/**
 * A folder as stored: `~` kept for the loader to expand, a relative path made absolute here
 * (the server would otherwise resolve it against whatever directory it starts in), and it
 * must be an existing directory: a mistyped workspace root would refuse every job, a mistyped
 * toolchain path open nothing.
 */
function existingDir(flag: ListFlag, dir: string, cwd: string, home: string): string {
  const stored = dir.startsWith("~") || isAbsolute(dir) ? dir : resolve(cwd, dir);
  const onDisk = expandHome(stored, home);
  let isDir = false;
  try {
    isDir = statSync(onDisk).isDirectory();
  } catch {
    // Reported below.
  }
  if (!isDir) {
    throw new ConfigUsageError(
      `Cannot use --${flag} "${dir}": "${onDisk}" is not an existing directory. ` +
        "Create it first, or check the path",
    );
  }
  return stored;
}

/** The release version, printed by `--version` and reported to MCP clients. */
export const VERSION = "0.1.0";

/** The name the server announces in MCP `initialize`. */
export const SERVER_NAME = "ollama-delegate";

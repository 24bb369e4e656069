/**
 * Fake toolchains in a test's HOME, in the layouts users have (issue 29, item 2): a script in
 * `~/.local/bin` (pipx, uv and pip --user put commands there), one in `~/.cargo/bin` beside
 * `~/.cargo/credentials.toml`, and nvm's layout, where `bin/npm` is a relative link into
 * `../lib/node_modules/npm/bin/npm-cli.js`, which loads a file of its own package (`#!` through
 * `env node`: the system's node). Beside them the user's secrets: an SSH key, a hard link of it
 * and a symlink to it among the commands in `~/.local/bin`.
 */
import { chmodSync, linkSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** What each tool prints when it runs. */
export const TOOL_MARKERS = ["MYTOOL-RAN", "CARGO-LIKE-RAN", "NPM-RAN"];
/** What the secrets hold: none may reach a backend. */
export const SECRET_MARKERS = ["CARGO-SECRET-MARKER", "SSH-SECRET-MARKER"];

export const NVM_BIN = ".nvm/versions/node/v20.0.0/bin";

function write(path: string, text: string, mode = 0o644): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  chmodSync(path, mode);
}

/**
 * Makes the layouts under `home`; returns a PATH with their bin folders, then the system's. With
 * `npmCalls`, the npm writes each call's arguments there, a line each (where it can).
 */
export function fakeToolchains(home: string, npmCalls?: string): string {
  write(join(home, ".local/bin/mytool"), "#!/bin/sh\necho MYTOOL-RAN\n", 0o755);
  write(join(home, ".cargo/bin/cargo-like"), "#!/bin/sh\necho CARGO-LIKE-RAN\n", 0o755);
  write(
    join(home, ".cargo/credentials.toml"),
    '[registry]\ntoken = "CARGO-SECRET-MARKER"\n',
    0o600,
  );
  const npm = join(home, ".nvm/versions/node/v20.0.0/lib/node_modules/npm");
  write(join(npm, "bin/npm-cli.js"), '#!/usr/bin/env node\nrequire("../lib/cli.js");\n', 0o755);
  const log = npmCalls === undefined
    ? ""
    : `try {\n  require("node:fs").appendFileSync(${
      JSON.stringify(npmCalls)
    }, process.argv.slice(2).join(" ") + "\\n");\n} catch {}\n`;
  write(
    join(npm, "lib/cli.js"),
    `${log}console.log("NPM-RAN", process.argv.slice(2).join(" "));\n`,
  );
  mkdirSync(join(home, NVM_BIN), { recursive: true });
  symlinkSync("../lib/node_modules/npm/bin/npm-cli.js", join(home, NVM_BIN, "npm"));
  write(join(home, ".ssh/id_rsa"), "-----BEGIN KEY-----\nSSH-SECRET-MARKER\n", 0o600);
  linkSync(join(home, ".ssh/id_rsa"), join(home, ".local/bin/notes"));
  symlinkSync(join(home, ".ssh/id_rsa"), join(home, ".local/bin/key"));
  return [
    join(home, ".local/bin"),
    join(home, ".cargo/bin"),
    join(home, NVM_BIN),
    "/usr/local/bin",
    "/usr/bin",
    "/bin",
  ].join(":");
}

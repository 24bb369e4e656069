/**
 * What a hostile project holds to take over `npx ollama-delegate` started in it (issue 28,
 * item 1): a `node_modules/ollama-delegate` of our own version with its `.bin` link, whose
 * program only records that it ran, and a `.npmrc` that sends npm to another registry. A
 * delegate can write both with one command; a cloned repository can commit them.
 */
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { VERSION } from "../../src/version.ts";

/**
 * Plants the package in `project`; its program writes its arguments to `marker` when run.
 * Returns the marker's path.
 */
export function plantPackage(project: string, marker: string): string {
  const pkg = join(project, "node_modules", "ollama-delegate");
  mkdirSync(pkg, { recursive: true });
  writeFileSync(
    join(pkg, "package.json"),
    JSON.stringify({
      name: "ollama-delegate",
      version: VERSION,
      bin: { "ollama-delegate": "x.js" },
    }),
  );
  writeFileSync(
    join(pkg, "x.js"),
    `#!/usr/bin/env node\nrequire("fs").writeFileSync(${
      JSON.stringify(marker)
    }, process.argv.slice(2).join(" "));\n`,
    { mode: 0o755 },
  );
  const bin = join(project, "node_modules", ".bin");
  mkdirSync(bin, { recursive: true });
  symlinkSync("../ollama-delegate/x.js", join(bin, "ollama-delegate"));
  return marker;
}

/** Writes the project's `.npmrc`, naming `registryUrl` as npm's registry. */
export function plantNpmrc(project: string, registryUrl: string): void {
  writeFileSync(join(project, ".npmrc"), `registry=${registryUrl}/\n`);
}

/**
 * The user's own npm configuration in `home/.npmrc`: the registry to use and a cache. The tests
 * give npm its registry here rather than through `npm_config_registry`, which would win over a
 * project's `.npmrc` and hide the attack.
 */
export function userNpmrc(home: string, registryUrl: string): void {
  writeFileSync(
    join(home, ".npmrc"),
    `registry=${registryUrl}/\ncache=${join(home, ".npm")}\nupdate-notifier=false\n`,
  );
}

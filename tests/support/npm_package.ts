/**
 * The npm package as `npm pack` makes it (scripts/build_npm.ts), built once per test module. A
 * build bundles the program into chunks with esbuild and packs it, about 2.7 CPU-s, and the
 * files that install the package do so in more than one test. Tests only read the tarball: a
 * registry serves it, npm installs copies of it.
 */
import { join } from "node:path";
import { buildNpm } from "../../scripts/build_npm.ts";
import { tempDir } from "./temp_dir.ts";

let packed: string | undefined;

/** The path of the packed package's tarball, built on the first call. */
export function packedNpmPackage(): string {
  if (packed === undefined) {
    const dir = tempDir("od-pack-");
    packed = buildNpm(dir, join(dir, "stage"));
  }
  return packed;
}

/**
 * The npm package as `npm pack` makes it (scripts/build_npm.ts): the one the test run packed
 * (PACKED_VAR), else built once per test module. A build
 * bundles the program into chunks with esbuild and packs it, about 3.7 CPU-s, and the files that
 * install the package do so in more than one test. Tests only read the tarball: a registry
 * serves it, npm installs copies of it.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { BIN_FILE, buildNpm } from "../../scripts/build_npm.ts";
import { tempDir } from "./temp_dir.ts";

/**
 * The variable that names the npm package a test run packed once (scripts/test.ts): a test or
 * bench that installs the package reads it instead of building its own. Without it, each builds
 * its own, as when run by hand.
 */
export const PACKED_VAR = "OD_TEST_NPM_TARBALL";

let packed: string | undefined;

/** The path of the packed package's tarball: the run's, else built on the first call. */
export function packedNpmPackage(): string {
  if (packed === undefined) {
    const dir = tempDir("od-pack-");
    packed = runPackage() ?? buildNpm(dir, join(dir, "stage"));
  }
  return packed;
}

/** The package scripts/test.ts packed for the run, when it named one that is there. */
export function runPackage(): string | undefined {
  const named = process.env[PACKED_VAR];
  return named && existsSync(named) ? named : undefined;
}

/**
 * The program of the package the test run packed, unpacked into a temporary folder (the entry
 * of its split bundle, beside its chunks), or nothing outside such a run. Benches in the quick
 * mode the suite runs take it instead of bundling the program again (about 2 CPU-s a bundle).
 */
export function runPackageProgram(): string | undefined {
  const tarball = runPackage();
  if (!tarball) return undefined;
  const dir = tempDir("od-run-package-");
  execFileSync("tar", ["-xzf", tarball, "-C", dir]);
  return join(dir, "package", BIN_FILE);
}

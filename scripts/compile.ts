/**
 * Builds the self-contained `ollama-delegate` executables with `deno compile` into dist/bin/,
 * one per target, each with a `.sha256` file in `sha256sum -c` format.
 *
 * Run: deno task compile [--target <triple>]... [--out-dir <dir>] [--smoke]
 *   deno task compile                                   every target
 *   deno task compile --target x86_64-unknown-linux-gnu one target
 *   deno task compile --target host --smoke             the machine's own target, then run
 *                                                       scripts/smoke_binary.ts on it
 *
 * `deno compile` embeds the program into `denort`, a runtime it downloads once per Deno
 * version and target from dl.deno.land (cached under DENO_DIR/dl). Where that host cannot be
 * reached the build stops with a message saying so; DENORT_BIN=<path> supplies the runtime
 * by hand. `deno task build:node` is the offline stand-in.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { arch, platform } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { smoke } from "./smoke_binary.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The targets `deno compile` 2.9 supports and we ship. */
export const TARGETS = [
  "x86_64-unknown-linux-gnu",
  "aarch64-unknown-linux-gnu",
  "x86_64-apple-darwin",
  "aarch64-apple-darwin",
  "x86_64-pc-windows-msvc",
] as const;
export type Target = typeof TARGETS[number];

/**
 * The permissions baked into every binary; a compiled program never prompts. This is
 * `--allow-all`: Deno 2 lets a program read `/proc` only with every permission ("Requires all
 * access to /proc/<pid>/stat"), and the process-tree walk behind cancel, timeout and
 * recovery reads `/proc/<pid>/stat` for a precise start time. With anything less the binary
 * falls back to `ps`, whose start times have 1 s resolution and a different form than those a
 * Node or `deno run -A` server records. The server runs arbitrary user-chosen programs
 * (`claudeBin`, bubblewrap) anyway, so narrower flags would not confine it. The e2e suite
 * runs the server with exactly this set (scripts/test.ts).
 */
/**
 * Also baked in: V8 falls back to its linear-time regexp engine when a pattern backtracks
 * too much. Grep and Glob run patterns a model wrote; `^(a+)+$` would otherwise block the
 * server's event loop for seconds to hours (src/platform/regex_guard.ts does it for Node).
 */
export const REGEX_GUARD_FLAG =
  "--v8-flags=--enable-experimental-regexp-engine-on-excessive-backtracks";

export const COMPILE_PERMISSIONS = ["--allow-all", REGEX_GUARD_FLAG] as const;

/** The file name of a target's binary. */
export function binaryName(target: Target): string {
  return `ollama-delegate-${target}${target.includes("windows") ? ".exe" : ""}`;
}

/** The target triple of the machine we run on, or undefined if we ship none for it. */
export function hostTarget(): Target | undefined {
  const cpu = arch() === "x64" ? "x86_64" : arch() === "arm64" ? "aarch64" : arch();
  const os = { linux: "unknown-linux-gnu", darwin: "apple-darwin", win32: "pc-windows-msvc" }[
    platform() as string
  ];
  const triple = `${cpu}-${os}`;
  return (TARGETS as readonly string[]).includes(triple) ? triple as Target : undefined;
}

/** A `sha256sum`-compatible line: hash, two spaces, file name. */
export function sha256Line(file: string): string {
  const hash = createHash("sha256").update(readFileSync(file)).digest("hex");
  return `${hash}  ${basename(file)}\n`;
}

/** Thrown when `deno compile` fails; `offline` when it could not fetch its runtime. */
export class CompileError extends Error {
  override name = "CompileError";
  constructor(message: string, readonly offline: boolean, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** Compiles one target into `outDir` and writes its `.sha256`; returns the binary's path. */
export function compileTarget(target: Target, outDir: string): string {
  mkdirSync(outDir, { recursive: true });
  const out = join(outDir, binaryName(target));
  const r = spawnSync(process.execPath, [
    "compile",
    "--config",
    join(ROOT, "deno.json"),
    ...COMPILE_PERMISSIONS,
    "--exclude-unused-npm",
    "--target",
    target,
    "--output",
    out,
    join(ROOT, "src", "main.ts"),
  ], { encoding: "utf8", stdio: ["ignore", "inherit", "pipe"] });
  process.stderr.write(r.stderr ?? "");
  // A failed download leaves `<out>.tmp-<hash>` behind.
  for (const f of readdirSync(outDir)) {
    if (f.startsWith(`${basename(out)}.tmp-`)) rmSync(join(outDir, f), { force: true });
  }
  if (r.error) {
    throw new CompileError(`Cannot compile for ${target}: ${r.error.message}`, false, {
      cause: r.error,
    });
  }
  if (r.status !== 0) {
    const offline = /denort-|Setting up base binary|dl\.deno\.land/.test(r.stderr ?? "");
    throw new CompileError(
      offline
        ? `Cannot compile for ${target}: deno compile could not download its runtime ` +
          `(denort-${target}.zip from dl.deno.land). Run this where that host is reachable ` +
          `(CI's release workflow does), or set DENORT_BIN to a denort ${target} binary of ` +
          `this Deno version. Locally, "deno task build:node" builds the Node bundle instead`
        : `Cannot compile for ${target}: deno compile exited with ${r.status}`,
      offline,
    );
  }
  writeFileSync(`${out}.sha256`, sha256Line(out));
  return out;
}

function parseTargets(values: string[] | undefined): Target[] {
  if (!values || values.length === 0) return [...TARGETS];
  return values.map((v) => {
    if (v === "host") {
      const host = hostTarget();
      if (!host) {
        throw new RangeError(`Cannot compile for "host": ${platform()}/${arch()} has no target`);
      }
      return host;
    }
    if (!(TARGETS as readonly string[]).includes(v)) {
      throw new RangeError(`Unknown target "${v}" (use host or one of ${TARGETS.join(", ")})`);
    }
    return v as Target;
  });
}

if (import.meta.main) {
  try {
    const { values } = parseArgs({
      options: {
        target: { type: "string", multiple: true },
        "out-dir": { type: "string" },
        smoke: { type: "boolean" },
      },
    });
    const outDir = resolve(values["out-dir"] ?? join(ROOT, "dist", "bin"));
    const targets = parseTargets(values.target);
    const host = hostTarget();
    const foreign = targets.find((t) => t !== host);
    if (values.smoke && foreign) {
      // A binary is smoke-tested only where it runs natively (release.yml: one runner each).
      throw new RangeError(`Cannot smoke-test ${foreign} on this ${host ?? platform()} machine`);
    }
    for (const target of targets) {
      const out = compileTarget(target, outDir);
      console.error(`Wrote ${out} and ${basename(out)}.sha256`);
      if (values.smoke) await smoke(out, []);
    }
  } catch (e) {
    console.error(`compile: ${(e as Error).message}`);
    process.exit(1);
  }
}

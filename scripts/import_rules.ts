/**
 * The import rules of CONTRIBUTING.md ("Layers and imports"), checked over src/: no import
 * cycle, no import running up a layer, the two front ends never importing each other, and an
 * engine's own folder reached only from inside it or through the engine table, and no own
 * file reached by a name the rules cannot place (an import-map alias for a local path in
 * deno.json, an absolute path or a file: URL). `deno task check` runs it (and so CI). Usage: `deno run --allow-read scripts/import_rules.ts [src-dir]`;
 * it prints one line per broken rule and exits 1, or exits 0 silently.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, posix, relative, resolve, sep } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { findCycles, importsOf } from "./import_graph.ts";

/**
 * The layers, lowest first: a file may import its own layer's files and lower layers' ones.
 * A path is a file or a folder (ending in "/") under src/; the longest match places a file.
 */
export const LAYERS: readonly { name: string; paths: readonly string[] }[] = [
  { name: "shared", paths: ["errors.ts", "version.ts"] },
  { name: "platform", paths: ["platform/"] },
  // OpenTelemetry behind a facade: anyone may record; it imports only the layers below.
  { name: "telemetry", paths: ["telemetry/"] },
  { name: "settings", paths: ["settings/"] },
  { name: "backends", paths: ["backends/"] },
  { name: "models", paths: ["models/"] },
  { name: "guard", paths: ["guard/"] },
  { name: "engines", paths: ["engines/"] },
  { name: "engine folders", paths: [] }, // engines/<name>/: see engineOf
  { name: "engine table", paths: ["engines/registry.ts"] },
  { name: "jobs", paths: ["jobs/"] },
  { name: "agents", paths: ["agents/"] },
  // What a job is decided once, for every front end (issue 33): requests in, NewTurns out.
  { name: "intake", paths: ["intake/"] },
  { name: "review", paths: ["review/"] },
  { name: "front ends", paths: ["server/", "cli/"] },
  { name: "entry", paths: ["main.ts", "node_main.ts"] },
];

/** Folders in src/engines/ that the engines share; every other one is an engine's own. */
export const SHARED_ENGINE_FOLDERS: readonly string[] = ["tree", "text_calls"];

const ENGINE_TABLE = "engines/registry.ts";
const FRONT_ENDS = ["server/", "cli/"];

export type Rule =
  | "cycle"
  | "up a layer"
  | "front ends"
  | "engine folder"
  | "no layer"
  | "outside"
  | "import map"
  | "sync spawn";

export interface Violation {
  rule: Rule;
  /** The importing file, relative to the checked folder's parent ("src/jobs/x.ts"). */
  file: string;
  /** What it imports, as written; absent for "no layer" and "cycle". */
  specifier?: string;
  message: string;
}

/** The one file of src/ that may start a synchronous child through node:child_process. */
export const SYNC_SPAWN_HOME = "platform/posix/spawn_sync.ts";
const SYNC_SPAWNS = ["spawnSync", "execFileSync", "execSync"];

/**
 * Where `text` takes a synchronous spawn from node:child_process: by a named import, or as a
 * member of the module imported whole (a name computed at run time is not seen).
 */
export function syncSpawns(text: string): { name: string; line: number }[] {
  const out: { name: string; line: number }[] = [];
  const lineAt = (index: number) => text.slice(0, index).split("\n").length;
  const from = String.raw`\s*from\s*["'](?:node:)?child_process["']`;
  for (
    const m of text.matchAll(new RegExp(String.raw`import\s*(?:type\s*)?\{([^}]*)\}` + from, "g"))
  ) {
    for (const part of m[1]!.split(",")) {
      const name = part.trim().replace(/^type\s+/, "").split(/\s+as\s+/)[0]!;
      if (SYNC_SPAWNS.includes(name)) out.push({ name, line: lineAt(m.index!) });
    }
  }
  for (
    const m of text.matchAll(new RegExp(String.raw`import\s+(?:\*\s+as\s+)?(\w+)` + from, "g"))
  ) {
    for (const use of text.matchAll(new RegExp(String.raw`\b${m[1]}\s*\.\s*(\w+)`, "g"))) {
      if (SYNC_SPAWNS.includes(use[1]!)) out.push({ name: use[1]!, line: lineAt(use.index!) });
    }
  }
  return out;
}

/** The engine whose own folder holds `path` (relative to src/, with "/"), if any. */
export function engineOf(path: string): string | undefined {
  const m = /^engines\/([^/]+)\//.exec(path);
  return m && !SHARED_ENGINE_FOLDERS.includes(m[1]!) ? m[1] : undefined;
}

/** The index in LAYERS of `path` (relative to src/), or -1 when no layer holds it. */
export function layerOf(path: string): number {
  if (engineOf(path) !== undefined) return LAYERS.findIndex((l) => l.name === "engine folders");
  let best = -1;
  let bestLength = -1;
  LAYERS.forEach((layer, i) => {
    for (const p of layer.paths) {
      const hit = p.endsWith("/") ? path.startsWith(p) : path === p;
      if (hit && p.length > bestLength) [best, bestLength] = [i, p.length];
    }
  });
  return best;
}

/**
 * The keys of `config`'s import map (deno.json "imports" and every "scopes" entry) that name
 * a local path: a file importing through one would reach an own file by a bare name, which the
 * rules below (they place relative specifiers only) would let through unchecked.
 */
export function localAliases(config: string): string[] {
  if (!existsSync(config)) return [];
  const json = JSON.parse(readFileSync(config, "utf8")) as {
    imports?: Record<string, string>;
    scopes?: Record<string, Record<string, string>>;
  };
  const maps = [json.imports ?? {}, ...Object.values(json.scopes ?? {})];
  return maps.flatMap((m) => Object.entries(m).filter(([, to]) => isLocalTarget(to)))
    .map(([key]) => key);
}

const isLocalTarget = (s: string) => /^(\.{1,2}\/|\/|file:)/.test(s) || s === "." || s === "..";

/** The alias of `aliases` that `specifier` goes through (exact, or a "prefix/" key). */
function aliasOf(specifier: string, aliases: readonly string[]): string | undefined {
  return aliases.find((a) => a.endsWith("/") ? specifier.startsWith(a) : specifier === a);
}

function tsFiles(dir: string, base = dir): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, e.name);
    if (e.isDirectory()) out.push(...tsFiles(full, base));
    else if (e.isFile() && /\.tsx?$/.test(e.name)) {
      out.push(relative(base, full).split(sep).join("/"));
    }
  }
  return out.sort();
}

/**
 * Every broken import rule in the TypeScript files under `srcDir`; `config` is the deno.json
 * whose import map the program resolves with (by default the one beside `srcDir`).
 */
export function checkImports(srcDir: string, config?: string): Violation[] {
  const root = resolve(srcDir);
  const aliases = localAliases(config ?? join(root, "..", "deno.json"));
  const shown = (p: string) => posix.join(posix.basename(root), p);
  const out: Violation[] = [];
  const graph = new Map<string, string[]>();
  const order = LAYERS.map((l) => l.name).join(" < ");
  for (const file of tsFiles(root)) {
    const from = layerOf(file);
    if (from < 0) {
      out.push({
        rule: "no layer",
        file: shown(file),
        message: `${shown(file)}: no layer holds this file; add its folder to LAYERS in ` +
          `scripts/import_rules.ts and to CONTRIBUTING.md ("Layers and imports")`,
      });
    }
    const edges: string[] = [];
    graph.set(file, edges);
    for (const imp of importsOf(readFileSync(join(root, file), "utf8"))) {
      const at = `${shown(file)}:${imp.line}: imports "${imp.specifier}"`;
      const add = (rule: Rule, why: string) =>
        out.push({ rule, file: shown(file), specifier: imp.specifier, message: `${at}: ${why}` });
      if (!imp.specifier.startsWith(".")) {
        const alias = aliasOf(imp.specifier, aliases);
        if (alias !== undefined || isLocalTarget(imp.specifier)) {
          add(
            "import map",
            (alias !== undefined
              ? `deno.json's import map sends "${alias}" to a local path`
              : "a local file by an absolute path or URL") +
              `, which these rules cannot place in a layer; import own files by a relative path`,
          );
        }
        continue; // npm:, node: and mapped packages
      }
      const target = posix.normalize(posix.join(posix.dirname(file), imp.specifier));
      if (target.startsWith("../")) {
        add("outside", `a file outside ${shown("")}; the program imports only its own files`);
        continue;
      }
      edges.push(target);
      const to = layerOf(target);
      const engine = engineOf(target);
      if (engine !== undefined && engineOf(file) !== engine && file !== ENGINE_TABLE) {
        add(
          "engine folder",
          `inside the ${engine} engine's own folder (src/engines/${engine}/), which only that ` +
            `folder and the engine table (src/${ENGINE_TABLE}) import; ask the engine through ` +
            `the table (engineFacts, folderReader, createEngines) or move what is shared to ` +
            `src/engines/`,
        );
      } else if (from >= 0 && to > from) {
        add(
          "up a layer",
          `the ${LAYERS[to]!.name} layer, above this file's ${LAYERS[from]!.name} layer; ` +
            `imports run downwards (${order}): move what both need down, or pass it in`,
        );
      } else if (
        from === to && FRONT_ENDS.some((f) => file.startsWith(f) !== target.startsWith(f))
      ) {
        add(
          "front ends",
          `the other front end; server/ and cli/ never import each other: put what both ` +
            `need below both`,
        );
      }
    }
  }
  for (const file of tsFiles(root)) {
    if (file === SYNC_SPAWN_HOME) continue;
    for (const hit of syncSpawns(readFileSync(join(root, file), "utf8"))) {
      out.push({
        rule: "sync spawn",
        file: shown(file),
        specifier: "node:child_process",
        message: `${shown(file)}:${hit.line}: uses ${hit.name} from node:child_process, whose ` +
          `child gets the parent's whole environment under Deno even with \`env\`; use ` +
          `spawnSyncExact (src/${SYNC_SPAWN_HOME})`,
      });
    }
  }
  for (const cycle of findCycles(graph)) {
    out.push({
      rule: "cycle",
      file: shown(cycle[0]!),
      message: `import cycle: ${[...cycle, cycle[0]!].map(shown).join(" -> ")}; ` +
        `break it by moving what the files share into a lower file`,
    });
  }
  return out;
}

if (import.meta.main) {
  const here = dirname(fileURLToPath(import.meta.url));
  const src = process.argv[2] ?? join(here, "..", "src");
  const found = checkImports(src);
  for (const v of found) console.error(v.message);
  if (found.length > 0) {
    console.error(
      `${found.length} import rule(s) broken in ${src} (the rules: CONTRIBUTING.md, ` +
        `"Layers and imports")`,
    );
    process.exit(1);
  }
}

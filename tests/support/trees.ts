/**
 * Large project trees for tests and benchmarks: `files` small files in folders of 20, 25
 * folders to a module (`src/m3/p12/f7.js`), optionally half of them under `node_modules/`
 * (ignored by git, as there), in a git repository. And single files whose names are not UTF-8.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const FILES_PER_FOLDER = 20;
export const FOLDERS_PER_MODULE = 25;

/** The path (relative) of the `i`-th file of a tree part (`src` or `node_modules`). */
export function treeFile(part: string, i: number): string {
  const folder = Math.floor(i / FILES_PER_FOLDER);
  return join(
    part,
    `m${Math.floor(folder / FOLDERS_PER_MODULE)}`,
    `p${folder % FOLDERS_PER_MODULE}`,
    `f${i % FILES_PER_FOLDER}.js`,
  );
}

/** Writes `count` files of a part (`src`, `node_modules`), a folder at a time. */
export function writePart(root: string, part: string, count: number): void {
  for (let i = 0; i < count; i++) {
    const path = join(root, treeFile(part, i));
    if (i % FILES_PER_FOLDER === 0) mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, "x\n");
  }
}

export interface TreeShape {
  files: number;
  /** Half of the files under `node_modules/` (git-ignored). */
  nodeModules: boolean;
  /**
   * Projects below the top, `nested/p7/`, each with what the host runs there (`.git`,
   * `.claude`, `.vscode`, `CLAUDE.md`, `.envrc`): five host-run paths a sandbox protects.
   */
  nested?: number;
}

/** Writes `count` nested projects (see TreeShape.nested). */
export function writeNested(root: string, count: number): void {
  for (let i = 0; i < count; i++) {
    const project = join(root, "nested", `p${i}`);
    for (const dir of [".git", ".claude", ".vscode"]) {
      mkdirSync(join(project, dir), { recursive: true });
    }
    writeFileSync(join(project, ".git", "config"), "[core]\n");
    writeFileSync(join(project, ".claude", "settings.json"), "{}\n");
    writeFileSync(join(project, ".vscode", "settings.json"), "{}\n");
    writeFileSync(join(project, "CLAUDE.md"), "# project\n");
    writeFileSync(join(project, ".envrc"), "export A=1\n");
  }
}

/** Makes the tree in `root` (which exists) and returns how many files are where. */
export function makeTree(root: string, shape: TreeShape): { src: number; nodeModules: number } {
  execFileSync("git", ["init", "-q", root]);
  writeFileSync(join(root, ".gitignore"), "node_modules/\n*.log\n");
  const inModules = shape.nodeModules ? Math.floor(shape.files / 2) : 0;
  writePart(root, "src", shape.files - inModules);
  if (inModules > 0) writePart(root, "node_modules", inModules);
  if (shape.nested) writeNested(root, shape.nested);
  return { src: shape.files - inModules, nodeModules: inModules };
}

/**
 * Writes `x` to the end of `rel` below `dir`, its folders made, with `rel` as printf reads it:
 * its names can hold bytes that are not UTF-8 (`d\377/caf\351.txt`), which no file call of
 * Deno's can name.
 */
export function putBytes(dir: string, rel: string): void {
  const script = 'p="$(printf "$1")" && mkdir -p "$(dirname "$p")" && printf x >> "$p"';
  execFileSync("sh", ["-c", script, "sh", rel], { cwd: dir });
}

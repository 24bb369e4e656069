/**
 * What a watched tree (watched.ts) knows of its folders, read without touching the
 * disk: a folder's entries as the identity scan lists them, the nested `.git` entries and
 * credential stores.
 */
import type { ListedEntry } from "../../guard/host_run_scan.ts";
import { isCredentialEntry, storesThroughLink } from "./names.ts";

/** A watched folder. Its path never changes: a folder that moves is forgotten and re-watched. */
export interface DirNode {
  path: string;
  wd: number;
  parent: DirNode | undefined;
  /** The folders in it, watched. */
  dirs: Map<string, DirNode>;
  /** Its entries with names the identity scan or the sandbox look for: name -> is a folder. */
  marked: Map<string, boolean>;
}

/** The folder at `dir` below `top` (whose path is `root`), or undefined. */
export function findNode(top: DirNode | undefined, dir: string): DirNode | undefined {
  if (!top) return undefined;
  if (dir === top.path) return top;
  if (!dir.startsWith(`${top.path}/`)) return undefined;
  let node: DirNode | undefined = top;
  for (const part of dir.slice(top.path.length + 1).split("/")) {
    node = node.dirs.get(part);
    if (!node) return undefined;
  }
  return node;
}

const asEntry = (name: string, dir: boolean): ListedEntry => ({ name, isDirectory: () => dir });

/**
 * The entries of `node` that the identity scan looks at: its folders, and its marked names
 * (host-run, secret, credential), which are all the scan acts on.
 */
export function listNode(node: DirNode): ListedEntry[] {
  const out = [...node.dirs.keys()].map((name) => asEntry(name, true));
  for (const [name, isDir] of node.marked) {
    if (!node.dirs.has(name)) out.push(asEntry(name, isDir));
  }
  return out;
}

/**
 * `.git` entries below `top`, and credential stores, anywhere (dependencies too); as the walk
 * (snapshot.ts's nestedWalk), not below a credential store, which a sandbox hides whole.
 */
export function nestedBelow(top: DirNode | undefined): NestedNames {
  const nestedGit: string[] = [];
  const credentials: string[] = [];
  const throughLinks: string[] = [];
  const pending = top ? [top] : [];
  while (pending.length > 0) {
    const node = pending.pop()!;
    for (const name of node.marked.keys()) {
      if (name === ".git" && node !== top) nestedGit.push(`${node.path}/${name}`);
      if (isCredentialEntry(node.path, name)) credentials.push(`${node.path}/${name}`);
      if (!node.marked.get(name)) throughLinks.push(...storesThroughLink(node.path, name));
    }
    for (const [name, dir] of node.dirs) {
      if (!isCredentialEntry(node.path, name)) pending.push(dir);
    }
  }
  return {
    nestedGit: nestedGit.sort(),
    credentials: credentials.sort(),
    throughLinks: throughLinks.sort(),
  };
}

/** What a tree knows of the nested repositories and credential stores below its top. */
export interface NestedNames {
  nestedGit: string[];
  credentials: string[];
  /**
   * Where stores would be through entries that may be links (names.ts storesThroughLink):
   * named through them, not resolved.
   */
  throughLinks: string[];
}

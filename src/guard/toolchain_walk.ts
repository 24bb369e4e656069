/**
 * The walk behind toolchains.ts: one view's state while it looks at PATH's folders, what it
 * opens (refused by toolchain_rules.ts or not), where links lead, which `#!` interpreters
 * scripts name, and which files are a credential file by identity.
 */
import type { Stats } from "node:fs";
import { lstat, open, readdir, realpath, stat } from "node:fs/promises";
import { isAbsolute, join } from "node:path";
import { identityKey } from "./identity_walk.ts";
import { isInside } from "../platform/path_inside.ts";
import {
  credentialsInside,
  installRootOf,
  isSystemPath,
  openRefusal,
  type RuleScope,
} from "./toolchain_rules.ts";

/** Entries read in one PATH folder (a Homebrew `bin` holds about a thousand). */
const MAX_ENTRIES = 5_000;
/** `#!` lines read in one view. */
const MAX_HEADS = 2_000;

/** One thing opened read-only, and why. */
export interface OpenedPath {
  /** Real path, mounted at itself. */
  path: string;
  kind: "dir" | "file";
  /** Why, for doctor: "PATH entry", "install root of ...", "a package cache builds read"... */
  why: string;
}

export async function realOf(path: string): Promise<string | undefined> {
  try {
    return await realpath(path);
  } catch {
    return undefined;
  }
}

export async function kindOf(path: string): Promise<"dir" | "file" | undefined> {
  try {
    const s = await stat(path);
    return s.isDirectory() ? "dir" : s.isFile() ? "file" : undefined;
  } catch {
    return undefined;
  }
}

/** The interpreter an absolute `#!` line names (not `env`), or undefined. */
async function shebang(file: string): Promise<string | undefined> {
  let handle;
  try {
    handle = await open(file, "r");
    const buffer = new Uint8Array(256);
    const { bytesRead } = await handle.read(buffer, 0, 256, 0);
    const head = new TextDecoder().decode(buffer.subarray(0, bytesRead));
    if (!head.startsWith("#!")) return undefined;
    const program = head.slice(2).split("\n")[0]!.trim().split(/\s+/)[0] ?? "";
    return isAbsolute(program) && !program.endsWith("/env") ? program : undefined;
  } catch {
    return undefined;
  } finally {
    await handle?.close();
  }
}

/** Builds one view: the state of a walk over PATH and what it found. */
export class ViewBuilder {
  readonly opened = new Map<string, OpenedPath>();
  readonly hidden = new Map<string, { kind: "file" | "dir"; why: string }>();
  readonly refused = new Map<string, string>();
  heads = 0;

  constructor(
    readonly scope: RuleScope,
    readonly credentials: ReadonlyMap<string, string>,
  ) {}

  /** Whether commands see `path` already or will: the system, the roots, what is opened. */
  visible(path: string): boolean {
    return isSystemPath(path) || this.scope.roots.some((r) => isInside(r, path)) ||
      [...this.opened.keys()].some((o) => isInside(o, path));
  }

  /** Opens `path` (real) unless a rule refuses it; false when refused. */
  async open(path: string, why: string): Promise<boolean> {
    if (this.visible(path)) return true;
    const kind = await kindOf(path);
    const refusal = openRefusal(path, this.scope) ??
      (kind === "dir" ? await this.storeInside(path) : undefined);
    if (refusal) {
      if (!this.refused.has(path)) this.refused.set(path, refusal);
      return false;
    }
    if (!kind) return false;
    this.opened.set(path, { path, kind, why });
    return true;
  }

  /**
   * Why a folder with a credential store of its own at its top (`.ssh`, `.npmrc`: a home
   * folder, whoever's) is not opened, or undefined. openRefusal judges the stores relative to
   * the folders above it, where they need not exist yet.
   */
  async storeInside(folder: string): Promise<string | undefined> {
    for (const store of credentialsInside(folder)) {
      try {
        await lstat(store);
        return `it holds a credential store (${store})`;
      } catch {
        // Not there.
      }
    }
    return undefined;
  }

  /** A credential by identity: hidden (a file in an opened folder) and never followed. */
  secretOf(s: Stats): string | undefined {
    return this.credentials.get(identityKey(s));
  }

  /**
   * The entries of `dir` (an opened PATH folder or an install root's `bin`): links leading out
   * are opened where they lead, files holding a credential hidden, absolute `#!` interpreters
   * opened. `prefix` is the root above `dir` that its links may open whole; `deeper`: also the
   * `bin` of a root a link opens; `heads`: read `#!` lines of its files (not when an opened
   * install root holds `dir`, whose scripts run what it holds: pyenv's shims, nvm's `bin`).
   */
  async scan(
    dir: string,
    prefix: string | undefined,
    deeper: boolean,
    heads = deeper,
  ): Promise<void> {
    let names: string[];
    try {
      names = (await readdir(dir)).slice(0, MAX_ENTRIES);
    } catch {
      return;
    }
    for (const name of names) {
      const path = join(dir, name);
      let info;
      try {
        info = await lstat(path);
      } catch {
        continue;
      }
      if (info.isSymbolicLink()) await this.followLink(path, dir, prefix, deeper);
      else if (info.isFile()) {
        const secret = this.secretOf(info);
        if (secret) this.hidden.set(path, { kind: "file", why: `a hard link of ${secret}` });
        else if (heads && (info.mode & 0o111) !== 0) await this.interpreter(path);
      }
    }
  }

  async followLink(link: string, dir: string, prefix: string | undefined, deeper: boolean) {
    const target = await realOf(link);
    if (!target) return;
    const info = await stat(target).catch(() => undefined);
    if (!info) return;
    const secret = this.secretOf(info);
    if (secret) {
      // Not followed: the link leads nowhere inside, as any link out of what is mounted.
      this.refused.set(link, `it is a link to the credential file ${secret}`);
      return;
    }
    if (isInside(dir, target) || this.visible(target)) return;
    let root: string | undefined;
    if (prefix && isInside(prefix, target) && await this.open(prefix, `install root of ${dir}`)) {
      root = prefix;
    } else {
      const above = installRootOf(target);
      if (above && await this.open(above, `where ${link} leads`)) root = above;
      else if (!await this.open(target, `where ${link} leads`)) return;
    }
    if (info.isFile() && (info.mode & 0o111) !== 0) await this.interpreter(target);
    // A virtual environment's `bin/python` links to the interpreter it was made with.
    if (deeper && root && root !== prefix) await this.scan(join(root, "bin"), undefined, false);
  }

  /** The interpreter an absolute `#!` line of `file` names, opened with its install root. */
  async interpreter(file: string): Promise<void> {
    if (this.heads >= MAX_HEADS) return;
    this.heads++;
    const program = await shebang(file);
    const real = program && await realOf(program);
    if (!real || this.visible(real)) return;
    const above = installRootOf(real);
    if (!above || !await this.open(above, `the interpreter of ${file}`)) {
      await this.open(real, `the interpreter of ${file}`);
    }
  }
}

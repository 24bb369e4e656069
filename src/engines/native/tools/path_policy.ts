/**
 * The policy the file tools hold every path to, on the path as resolved: the server's own
 * directories, credential stores, host-run paths (for writes), secret files (for reads) and the
 * user's path rules, with names folded as a case-insensitive filesystem would match them.
 */
import { relative } from "node:path";
import type { BeneathCheck } from "../../../platform/open_beneath/open_beneath.ts";
import { type PathPurpose, refusalIn } from "../../../guard/path_refusal.ts";
import type { GuardIdentities } from "../../../guard/identities.ts";
import {
  type FileIdentity,
  readIdentityRefusal,
  writeIdentityRefusal,
  writePathRefusal,
} from "../../../guard/refusals.ts";
import { isInside } from "../../../platform/path_inside.ts";

export type { PathPurpose };

/** The roots a path must stay inside and the policy held to every path; a subset of ToolContext. */
export interface ConfineScope {
  cwd: string;
  roots: readonly string[];
  /** Paths inside the roots that stay off limits: the server's own settings and records. */
  protect?: readonly string[];
  /** Secret-looking file names the user lets the file tools read (`allowSecretFiles`). */
  allowSecretFiles?: readonly string[];
  /**
   * The protected files by identity, collected at the turn's start (src/guard/identities.ts):
   * what is opened, and every directory a write goes through, is compared with them.
   */
  guard?: GuardIdentities;
  /**
   * The user's path rules (`Read(secrets/**)`...) applied to a path as resolved: why `tool`
   * may not reach the real path, or undefined. `final` is false for directories on the way.
   */
  pathRefusal?(tool: string, real: string, final: boolean): string | undefined;
}

const OWN_FILES = "it is part of ollama-delegate's own settings or job records";

/** Inside one of the server's directories, in any case (as a case-insensitive filesystem). */
function isProtected(protect: readonly string[], real: string): boolean {
  const lower = real.toLowerCase();
  return protect.some((p) => isInside(p, real) || isInside(p.toLowerCase(), lower));
}

/**
 * The policy held to every path a walk reaches (directories on the way with final=false): the
 * server's own directories; credential stores; for writes, host-run paths; for reads of a file,
 * secret files; then the user's path rules.
 */
export function pathPolicy(scope: ConfineScope, purpose: PathPurpose, tool: string): BeneathCheck {
  return (real, final) => {
    if (scope.protect && isProtected(scope.protect, real)) return OWN_FILES;
    for (const root of scope.roots) {
      if (!isInside(root, real)) continue;
      const why = refusalIn(relative(root, real), purpose, final, scope.allowSecretFiles ?? []);
      if (why !== undefined) return why;
    }
    // Where a host-run link leads, also before it exists (a write would create it).
    const linked = purpose === "write" && scope.guard
      ? writePathRefusal(scope.guard, real)
      : undefined;
    return linked ?? scope.pathRefusal?.(tool, real, final);
  };
}

/**
 * Why a file reached by a walk must not be read (a secret file by name), or undefined; what
 * it is, once opened, is judged by openedSecretRefusal.
 */
export function secretRefusal(scope: ConfineScope, real: string): string | undefined {
  for (const root of scope.roots) {
    if (!isInside(root, real)) continue;
    const why = refusalIn(relative(root, real), "read", true, scope.allowSecretFiles ?? []);
    if (why !== undefined) return why;
  }
  return undefined;
}

/**
 * Why an opened file must not be read: it is a secret file under another name (a hard link,
 * or the target of a secret-named link), unless the user allowed that secret's name.
 */
export function openedSecretRefusal(scope: ConfineScope, stats: FileIdentity): string | undefined {
  return scope.guard ? readIdentityRefusal(scope.guard, stats) : undefined;
}

/** Why an opened file, or a directory a write goes through, must not be written. */
export function openedWriteRefusal(
  scope: ConfineScope,
  stats: { dev: number; ino: number },
  real: string,
): string | undefined {
  return scope.guard ? writeIdentityRefusal(scope.guard, stats, real) : undefined;
}

/**
 * Why a path inside a job's directories stays refused whatever the permission mode: host-run
 * paths (for writes), secret files (for reads), credential stores (always), with names folded
 * as a case-insensitive filesystem would match them. The native engine's file tools hold every
 * path they resolve to it (engines/native/tools/path_policy.ts); both engines also hold the
 * path a call names to it before a permission question would be put to the person (issue 31,
 * item 3), so that no question is ever asked about what no answer may allow.
 */
import { isAbsolute, relative, resolve } from "node:path";
import { isWindows } from "../platform/runtime.ts";
import {
  credentialRefusal,
  HOST_RUN_PATHS,
  hostRunRefusal,
  readRefusal,
  writeRefusal,
} from "./protected_paths.ts";
import { isInside } from "../platform/path_inside.ts";

/** What a file tool does with a path; named in refusals. `list` is a walk that shows names. */
export type PathPurpose = "read" | "write" | "list";

/**
 * A relative path as a case-insensitive filesystem (macOS, Windows, casefolded ext4) would
 * match it: `.GIT/config` is `.git/config` there, and Windows drops trailing dots and spaces
 * (`.git./config`). Refusing the folded name on a case-sensitive system costs only odd names.
 */
function folded(rel: string): string[] {
  return rel.split(/[\\/]/).filter((p) => p !== "" && p !== ".")
    .map((p) => p.toLowerCase().replace(/[. ]+$/, "") || p);
}

const FOLDED_HOST_RUN = new Set(HOST_RUN_PATHS.map((name) => folded(name).join("/")));

/** The host-run refusal for `rel` with its names folded (see folded), at any depth. */
function hostRunFolded(rel: string): string | undefined {
  const original = rel.split(/[\\/]/).filter((p) => p !== "" && p !== ".");
  const fold = folded(rel);
  const at = fold.findIndex((p, i) =>
    FOLDED_HOST_RUN.has(p) || (i > 0 && FOLDED_HOST_RUN.has(`${fold[i - 1]}/${p}`))
  );
  return at < 0 ? undefined : hostRunRefusal(original.slice(0, at + 1).join("/"));
}

/** Why `rel` (relative to a root) must not be written, read (a file) or entered. */
export function refusalIn(
  rel: string,
  purpose: PathPurpose,
  final: boolean,
  allow: readonly string[],
): string | undefined {
  // An NTFS stream (`.envrc:x`, `.git:$DATA`) names the file before the colon.
  if (isWindows && rel.includes(":")) return `"${rel}" names an NTFS stream, which is refused`;
  const fold = folded(rel).join("/");
  if (purpose === "write") {
    return writeRefusal(rel) ?? hostRunFolded(rel) ?? credentialRefusal(fold);
  }
  if (purpose === "read" && final) {
    return readRefusal(rel, allow) ??
      readRefusal(fold, allow.map((a) => a.toLowerCase()));
  }
  return credentialRefusal(rel) ?? credentialRefusal(fold);
}

/** The directories a job may reach and what stays off limits inside them. */
export interface FixedScope {
  cwd: string;
  roots: readonly string[];
  /** The server's own settings, records and delegates' config: never a delegate's. */
  protect?: readonly string[];
  allowSecretFiles?: readonly string[];
}

/**
 * Why the path a call names stays refused whatever the answer (judged on the path as written,
 * made absolute against cwd; the tools judge the path as resolved again when they run), or
 * undefined when a person's yes could allow it.
 */
export function fixedRefusal(
  scope: FixedScope,
  path: string,
  purpose: PathPurpose,
): string | undefined {
  const abs = isAbsolute(path) ? resolve(path) : resolve(scope.cwd, path);
  const lower = abs.toLowerCase();
  if (scope.protect?.some((p) => isInside(p, abs) || isInside(p.toLowerCase(), lower))) {
    return "it is part of ollama-delegate's own settings or job records";
  }
  const root = scope.roots.find((r) => isInside(r, abs));
  if (root === undefined) {
    return `"${abs}" is outside the job's directories (${scope.roots.join(", ")})`;
  }
  return refusalIn(relative(root, abs), purpose, true, scope.allowSecretFiles ?? []);
}

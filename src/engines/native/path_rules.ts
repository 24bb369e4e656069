/**
 * Claude Code's path rules for the file tools (`Edit(.env)`, `Read(secrets/**)`): the path a
 * call acts on, made relative to the working directory and normalised so that every spelling
 * of one path meets the same rules, and the gitignore-like match of a rule's pattern.
 */
import { posix } from "node:path";
import { globToRegExp } from "./tools/glob_pattern.ts";

/**
 * The path a file tool acts on, relative to cwd when inside it, normalised, with `/`
 * separators, so `/abs/cwd/secrets/k`, `./secrets//k` and `secrets/k` meet the same rules.
 */
export function pathOf(input: Record<string, unknown>, cwd: string): string {
  const raw = typeof input.file_path === "string"
    ? input.file_path
    : typeof input.path === "string"
    ? input.path
    : ".";
  let path = posix.normalize(raw.replace(/\\/g, "/"));
  const base = cwd.replace(/\\/g, "/").replace(/\/+$/, "");
  if (base && (path === base || path.startsWith(base + "/"))) {
    path = path === base ? "." : path.slice(base.length + 1);
  }
  return path.replace(/^(\.\/)+/, "");
}

/**
 * Claude Code's path rules for file tools (`Edit(.env)`, `Write(secrets/**)`): gitignore-like
 * globs, relative to the working directory. `dir/**` also matches `dir` itself.
 */
export function matchesPath(pattern: string, path: string): boolean {
  const p = pattern.replace(/^(\.\/)+/, "");
  if (p === "*" || p === "**") return true;
  if (path === p) return true;
  if (p.endsWith("/**") && (path === p.slice(0, -3) || path.startsWith(p.slice(0, -2)))) {
    return true;
  }
  // A pattern without a slash matches the name at any depth, as in .gitignore.
  const target = p.includes("/") ? path : path.split("/").at(-1) ?? path;
  return globToRegExp(p).test(target);
}

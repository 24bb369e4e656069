/**
 * What a scan needs of a path, a link not followed: its kind and permission bits, as fast as the
 * runtime can say. On Deno its own lstat takes about half the time of its node:fs (5 against
 * 10 µs a path here, warm), which builds a Stats object with four Dates from Deno's answer; a
 * first scan also loads that layer's stat code. The sandboxes' scan of /etc, once a server,
 * took 48-52 ms through node:fs and 21-23 ms this way (1,195 entries).
 */
import { lstatSync } from "node:fs";
import { isDeno } from "./runtime.ts";

export interface QuickStat {
  kind: "dir" | "file" | "link" | "other";
  /** The permission bits and file type, as st_mode (0 where the system has none: Windows). */
  mode: number;
}

/** Throws as the runtime's lstat does (a missing or unreadable path). */
export function quickLstat(path: string): QuickStat {
  if (isDeno) {
    const info = Deno.lstatSync(path);
    const kind = info.isSymlink
      ? "link"
      : info.isDirectory
      ? "dir"
      : info.isFile
      ? "file"
      : "other";
    return { kind, mode: info.mode ?? 0 };
  }
  const info = lstatSync(path);
  const kind = info.isSymbolicLink()
    ? "link"
    : info.isDirectory()
    ? "dir"
    : info.isFile()
    ? "file"
    : "other";
  return { kind, mode: info.mode };
}

import { mkdir, realpath, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { CommandRun, ToolContext } from "../../../src/engines/native/tools/types.ts";

/**
 * A real temporary tree: `proj` is the job's cwd, `extra` an add_dirs root, `outside`
 * and `proj2` (a prefix of nothing, but `proj` is a prefix of it) lie outside both.
 */
export interface Fixture {
  top: string;
  cwd: string;
  extra: string;
  outside: string;
  proj2: string;
  ctx: ToolContext;
  changed: string[];
  /** Writes a file below `top`, creating parents. */
  put(rel: string, content: string | Uint8Array): Promise<string>;
  cleanup(): Promise<void>;
}

export async function fixture(): Promise<Fixture> {
  const top = await realpath(await Deno.makeTempDir({ prefix: "native_tools_" }));
  const cwd = join(top, "proj");
  const extra = join(top, "extra");
  const outside = join(top, "outside");
  const proj2 = join(top, "proj2");
  for (const dir of [cwd, extra, outside, proj2]) await mkdir(dir);
  const changed: string[] = [];
  const ctx: ToolContext = {
    cwd,
    roots: [cwd, extra],
    signal: new AbortController().signal,
    fileChanged: (path: string) => changed.push(path),
    commandRun: (_run: CommandRun) => {},
  };
  return {
    top,
    cwd,
    extra,
    outside,
    proj2,
    ctx,
    changed,
    async put(rel, content) {
      const path = join(top, rel);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, content);
      return path;
    },
    cleanup: () => rm(top, { recursive: true, force: true }),
  };
}

/**
 * The bounded scan for host-run paths below the top of a delegate's writable directories: what
 * it finds, where it does not look, and that it says so when it stopped early (the sandbox
 * then refuses commands rather than leave a `.git` it did not reach writable).
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdir, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { scanHostRun } from "../../src/guard/host_run_scan.ts";
import { putBytes } from "../support/trees.ts";

async function withTree(fn: (top: string) => Promise<void>): Promise<void> {
  const top = await realpath(await Deno.makeTempDir({ prefix: "host_run_scan_" }));
  try {
    await fn(top);
  } finally {
    await rm(top, { recursive: true, force: true });
  }
}

async function put(path: string, text = "x"): Promise<void> {
  await mkdir(join(path, ".."), { recursive: true });
  await writeFile(path, text);
}

Deno.test("scanHostRun: finds nested host-run dirs, files and links at any depth, not the top", async () => {
  await withTree(async (top) => {
    await mkdir(join(top, ".git/hooks"), { recursive: true });
    await put(join(top, ".envrc"));
    await mkdir(join(top, "proj/.git/hooks"), { recursive: true });
    await put(join(top, "proj/.claude/settings.json"));
    await put(join(top, "a/b/c/.envrc"));
    await put(join(top, "a/b/CLAUDE.md"));
    await put(join(top, "a/lefthook.yml"));
    await put(join(top, "srv/.ollama-delegate/agents/x.md"));
    await put(join(top, "srv/ollama-mcp.config.json"));
    await put(join(top, "src/main.ts"));
    await symlink(join(top, "src/main.ts"), join(top, "a/.mcp.json"));
    const scan = await scanHostRun([top]);
    assert.equal(scan.incomplete, undefined);
    assert.deepEqual(
      scan.paths,
      [
        "a/.mcp.json",
        "a/b/CLAUDE.md",
        "a/b/c/.envrc",
        "a/lefthook.yml",
        "proj/.claude",
        "proj/.git",
        "srv/.ollama-delegate",
        "srv/ollama-mcp.config.json",
      ].map((p) => join(top, p)),
    );
  });
});

Deno.test("scanHostRun: does not descend into host-run dirs, below node_modules or into credential stores", async () => {
  await withTree(async (top) => {
    // Each of these would be reported if the scan looked inside.
    await put(join(top, "proj/.git/modules/sub/.envrc"));
    await put(join(top, "proj/node_modules/pkg/.git/config"));
    await put(join(top, "proj/.ssh/x/.envrc"));
    await put(join(top, "proj/.claude/inner/.git/config"));
    for (let i = 0; i < 40; i++) {
      await mkdir(join(top, `proj/node_modules/p${i}/lib`), { recursive: true });
    }
    const scan = await scanHostRun([top]);
    assert.deepEqual(scan.paths, [join(top, "proj/.claude"), join(top, "proj/.git")]);
    // top, proj, and node_modules's own entries (a project renamed to node_modules keeps its
    // .git there): the other pruned folders and those below node_modules were never read.
    assert.equal(scan.dirs, 3);
  });
});

Deno.test("scanHostRun: several roots; a root inside another is scanned once, its top left out", async () => {
  await withTree(async (top) => {
    await put(join(top, "a/x/.git/config"));
    await put(join(top, "b/.envrc"));
    await put(join(top, "b/y/.envrc"));
    const scan = await scanHostRun([join(top, "a"), top, join(top, "b")]);
    assert.equal(scan.incomplete, undefined);
    assert.deepEqual(scan.paths, [join(top, "a/x/.git"), join(top, "b/y/.envrc")]);
  });
});

Deno.test("scanHostRun: fails closed beyond its folder limit, naming why", async () => {
  await withTree(async (top) => {
    for (let i = 0; i < 30; i++) await mkdir(join(top, `d${i}/e`), { recursive: true });
    await put(join(top, "d29/e/.git/config"));
    const small = await scanHostRun([top], { maxDirs: 40, maxDepth: 12 });
    assert.match(small.incomplete ?? "", /^the job's directories hold over 40 folders/);
    assert.ok(small.dirs <= 40, String(small.dirs));
    // Within bounds the same tree is covered, and the deep .git found.
    const enough = await scanHostRun([top], { maxDirs: 61, maxDepth: 12 });
    assert.equal(enough.incomplete, undefined);
    assert.deepEqual(enough.paths, [join(top, "d29/e/.git")]);
    assert.equal(enough.dirs, 61);
  });
});

Deno.test("scanHostRun: fails closed beyond its depth limit", async () => {
  await withTree(async (top) => {
    const deep = join(top, "1/2/3/4/5");
    await mkdir(deep, { recursive: true });
    const scan = await scanHostRun([top], { maxDirs: 1000, maxDepth: 4 });
    assert.match(scan.incomplete ?? "", /nested deeper than 4 folders \(".*\/1\/2\/3\/4\/5"\)/);
    const ok = await scanHostRun([top], { maxDirs: 1000, maxDepth: 5 });
    assert.equal(ok.incomplete, undefined);
    // A host-run name at the limit is still found: only folders to descend into count.
    await put(join(deep, ".envrc"));
    assert.deepEqual((await scanHostRun([top], { maxDirs: 1000, maxDepth: 5 })).paths, [
      join(deep, ".envrc"),
    ]);
  });
});

Deno.test("scanHostRun: a missing root is empty, not an error", async () => {
  const scan = await scanHostRun(["/nonexistent/od-scan-root"]);
  assert.deepEqual(scan, { paths: [], secrets: [], dirs: 1 });
});

Deno.test("scanHostRun: finds host-run paths below a folder whose name is not UTF-8, by its bytes; refuses a link there", async () => {
  await withTree(async (top) => {
    // Deno's own calls cannot name `proj\377`: the shell makes it.
    putBytes(top, "proj\\377/.envrc");
    putBytes(top, "proj\\377/.git/config");
    putBytes(top, "proj\\377/deep\\351/CLAUDE.md");
    const scan = await scanHostRun([top]);
    assert.equal(scan.incomplete, undefined);
    // The lone surrogates U+DCFF and U+DCE9 stand for the bytes (platform/file_names.ts).
    assert.deepEqual(scan.paths, [
      join(top, "proj\uDCFF/.envrc"),
      join(top, "proj\uDCFF/.git"),
      join(top, "proj\uDCFF/deep\uDCE9/CLAUDE.md"),
    ]);
    // A link cannot be followed by bytes to the target the sandbox would hold: fail closed.
    execFileSync("sh", ["-c", 'ln -s CLAUDE.md "$(printf "proj\\377/AGENTS.md")"'], { cwd: top });
    const refused = await scanHostRun([top]);
    assert.match(
      refused.incomplete ?? "",
      /proj\\377\/AGENTS\.md" is a host-run link below a folder whose name is not UTF-8/,
    );
  });
});

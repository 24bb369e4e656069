/**
 * In a tree past what the server's walk used to cover (20,000 entries in the project; here
 * about 24,000), every change a delegate makes is still in its reply, on both engines: a file deep
 * in the tree, a file created under `node_modules/`, a file git ignores, a file written
 * through a hard link made and removed for it, and a host-run file planted in a subfolder
 * (flagged `planted:`); and a file written through a memory map by a hard link named like a
 * sandbox's mount point, alone in its turn (the change journal must not take that name for
 * an empty file made and removed). The real server, real bubblewrap and the real
 * Claude Code CLI, the default settings and state-dir layout.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { field, sandboxClaude, tempDir } from "../support/harness.ts";
import { startScene } from "../support/scene.ts";
import { makeTree, treeFile, writePart } from "../support/trees.ts";

// Past the old walk's 20,000 entries with files alone; more only cost time (52,000 took 30 s of
// CPU per run).
const SRC_FILES = 15_000;
const MODULE_FILES = 8_000;

/**
 * The tree, made once for the file's four tests and removed with the file's other temporary
 * folders. Each test changes files of its own (named by its engine), so the next one finds the
 * tree as big and its own files as they were. (It was removed after each test, while no other
 * held it: made four times, about 2.8 CPU-s each.)
 */
let shared: string | undefined;

function bigTree(): string {
  if (!shared) {
    shared = tempDir("od-large-tree-");
    makeTree(shared, { files: 0, nodeModules: false });
    writePart(shared, "src", SRC_FILES);
    writePart(shared, "node_modules", MODULE_FILES);
  }
  return shared;
}

/** The changes one turn makes, each somewhere the old walk did not reach or report. */
function changes(tag: string) {
  const deep = treeFile("src", SRC_FILES - 1);
  return {
    commands: [
      `echo ${tag} >> ${deep}`,
      `echo ${tag} > node_modules/m7/p3/new-${tag}.js`,
      `echo ${tag} > debug-${tag}.log`,
      // Through another name made for it, then removed: no event names the file itself.
      `ln src/m0/p0/f${tag === "native" ? 1 : 2}.js .alias && echo ${tag} >> .alias && rm .alias`,
      // Written by a program, whose file names Claude Code's own checks cannot see.
      `mkdir -p src/m3/p1/x-${tag} && python3 -c "open('src/m3/p1/x-${tag}/.envrc', 'w')` +
      `.write('echo pwned')"`,
    ],
    files: [
      `debug-${tag}.log`,
      `node_modules/m7/p3/new-${tag}.js`,
      deep,
      `src/m0/p0/f${tag === "native" ? 1 : 2}.js`,
      `src/m3/p1/x-${tag}/.envrc`,
    ].sort(),
    planted: `src/m3/p1/x-${tag}/.envrc`,
  };
}

/**
 * One job on `engine` in the big tree, in bypassPermissions, whose delegate runs `commands` as
 * Bash calls and completes; the scene is the caller's to dispose of.
 */
async function jobInTree(engine: "native" | "claude", commands: string[]) {
  const root = bigTree();
  const scene = await startScene(engine === "claude" ? { claudeBin: sandboxClaude() } : {});
  try {
    const reply = await scene.call("delegate_start", {
      prompt: `${commands.map((c) => `@bash ${c}`).join("\n")}\n@reply done\nplease`,
      model: "qwen3:8b",
      engine,
      cwd: root,
      permission_mode: "bypassPermissions",
      wait_seconds: 240,
    }, { timeoutMs: 300_000 });
    assert.equal(field(reply.text, "state"), "completed", reply.text);
    return { root, scene, reply };
  } catch (e) {
    await scene[Symbol.asyncDispose]();
    throw e;
  }
}

async function check(engine: "native" | "claude"): Promise<void> {
  const want = changes(engine);
  const { scene, reply } = await jobInTree(engine, want.commands);
  await using _ = scene;
  assert.match(field(reply.text, "commands") ?? "", /^5 run: echo \S+ >> src\//, reply.text);
  assert.equal(
    field(reply.text, "files"),
    `${want.files.length} changed: ${want.files.join(", ")}`,
    reply.text,
  );
  assert.match(
    reply.text,
    new RegExp(`^warning: +planted: ${want.planted.replaceAll(".", "\\.")} \\(`, "m"),
    reply.text,
  );
  const id = field(reply.text, "job_id")!;
  const record = JSON.parse(readFileSync(join(scene.stateDir, id, "job.json"), "utf8"));
  assert.equal(record.changedFilesPartial, undefined, reply.text);
}

Deno.test("large tree: the native engine reports a deep change, node_modules, ignored and planted files", async () => {
  await check("native");
});

Deno.test("large tree: the claude engine reports a deep change, node_modules, ignored and planted files", async () => {
  await check("claude");
});

/**
 * Issue 34: a hard link of a project file named like a mount point a sandbox makes empty at
 * the top and removes (CLAUDE.md is one where the delegate may make it), written through a
 * shared memory map, which leaves only a close on the link's name, then removed: the events
 * of a placeholder. The file's own name has no event; it must be in `files:` all the same.
 */
async function mountPointAlias(engine: "native" | "claude"): Promise<void> {
  const target = `src/m0/p1/f${engine === "native" ? 5 : 6}.js`;
  const mapWrite = "import mmap; f = open('CLAUDE.md', 'r+b'); m = mmap.mmap(f.fileno(), 0); " +
    "m[0:1] = b'Z'; m.flush(); m.close(); f.close()";
  const { root, scene, reply } = await jobInTree(engine, [
    `ln ${target} CLAUDE.md && python3 -c "${mapWrite}" && rm CLAUDE.md`,
  ]);
  await using _ = scene;
  assert.equal(readFileSync(join(root, target), "utf8"), "Z\n", "the write went through");
  assert.equal(field(reply.text, "files"), `1 changed: ${target}`, reply.text);
}

Deno.test("large tree: the native engine reports a file written through a mount point's name", async () => {
  await mountPointAlias("native");
});

Deno.test("large tree: the claude engine reports a file written through a mount point's name", async () => {
  await mountPointAlias("claude");
});

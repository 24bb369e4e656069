/**
 * The registry of placeholder mount points on a real disk: what a server registers before
 * bubblewrap makes a placeholder, and what the start-up sweep removes of what killed servers
 * left (only empty placeholders nobody alive uses).
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, readdir, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { sweepPlaceholders } from "../../src/engines/placeholder_sweep.ts";
import {
  keyOf,
  type Placeholder,
  PlaceholderRegistry,
} from "../../src/engines/mount_placeholders.ts";
import {
  identityOf,
  type ProcessIdentity,
  selfIdentity,
} from "../../src/platform/process_identity.ts";

async function withDirs(fn: (proj: string, run: string) => Promise<void>): Promise<void> {
  const top = await realpath(await Deno.makeTempDir({ prefix: "placeholders_" }));
  await mkdir(join(top, "proj"));
  try {
    await fn(join(top, "proj"), join(top, "run"));
  } finally {
    await rm(top, { recursive: true, force: true });
  }
}

/** A process that runs until the test ends it, and who it is. */
async function liveProcess(): Promise<{ identity: ProcessIdentity; stop(): Promise<void> }> {
  const child = new Deno.Command("sleep", { args: ["60"] }).spawn();
  const identity = (await identityOf(child.pid))!;
  return {
    identity,
    async stop() {
      child.kill("SIGKILL");
      await child.status;
    },
  };
}

/** The identity of a process that has exited: a server killed mid-command. */
async function deadIdentity(): Promise<ProcessIdentity> {
  const p = await liveProcess();
  await p.stop();
  return p.identity;
}

/** An entry as a server writes it: `<key>.<pid>.<n>`, the path, its kind and the owner. */
async function register(run: string, p: Placeholder, owner: ProcessIdentity, n = 1) {
  await mkdir(run, { recursive: true, mode: 0o700 });
  const name = `${keyOf(p.path)}.${owner.pid}.${n}`;
  await writeFile(join(run, name), JSON.stringify({ path: p.path, kind: p.kind, owner }));
  return name;
}

Deno.test("claim: each placeholder is registered with this server's pid and start time before it exists", async () => {
  await withDirs(async (proj, run) => {
    const envrc = { path: join(proj, ".envrc"), kind: "file" as const };
    const { release } = await new PlaceholderRegistry(run).claim([envrc]);
    assert.ok(!existsSync(envrc.path), "claim registers; bubblewrap makes the placeholder");
    const names = readdirSync(run);
    assert.equal(names.length, 1);
    assert.match(names[0]!, new RegExp(`^${keyOf(envrc.path)}\\.${Deno.pid}\\.\\d+$`));
    const entry = JSON.parse(readFileSync(join(run, names[0]!), "utf8"));
    assert.deepEqual(entry, { path: envrc.path, kind: "file", owner: await selfIdentity() });
    await writeFile(envrc.path, ""); // What bubblewrap leaves on the host.
    await release();
    assert.deepEqual(readdirSync(run), []);
    assert.ok(!existsSync(envrc.path), "the last user removes the empty placeholder");
  });
});

Deno.test("sweep: dead owners' empty placeholders go; content, links and live owners' stay", async () => {
  await withDirs(async (proj, run) => {
    const dead = await deadIdentity();
    const other = await deadIdentity();
    const live = await liveProcess();
    try {
      const at = (name: string) => join(proj, name);
      // Left empty by a killed server: removed.
      await writeFile(at(".envrc"), "");
      await register(run, { path: at(".envrc"), kind: "file" }, dead);
      await mkdir(at(".claude"));
      await register(run, { path: at(".claude"), kind: "dir" }, dead);
      // Two dead users of one path, and one entry of an older version (the path alone).
      await writeFile(at(".pre-commit-config.yaml"), "");
      await register(run, { path: at(".pre-commit-config.yaml"), kind: "file" }, dead, 1);
      await register(run, { path: at(".pre-commit-config.yaml"), kind: "file" }, other, 2);
      await writeFile(at("mise.toml"), "");
      await writeFile(join(run, `${keyOf(at("mise.toml"))}.${dead.pid}.3`), at("mise.toml"));
      // Filled or replaced by the user since: kept.
      await writeFile(at("CLAUDE.md"), "# mine\n");
      await register(run, { path: at("CLAUDE.md"), kind: "file" }, dead);
      await mkdir(at(".vscode"));
      await writeFile(join(at(".vscode"), "settings.json"), "{}");
      await register(run, { path: at(".vscode"), kind: "dir" }, dead);
      await symlink("elsewhere", at(".idea"));
      await register(run, { path: at(".idea"), kind: "dir" }, dead);
      // Another live server's, and one a dead and a live server shared: kept, in use.
      await writeFile(at(".mcp.json"), "");
      await register(run, { path: at(".mcp.json"), kind: "file" }, live.identity);
      await writeFile(at("lefthook.yml"), "");
      await register(run, { path: at("lefthook.yml"), kind: "file" }, dead, 4);
      await register(run, { path: at("lefthook.yml"), kind: "file" }, live.identity, 5);
      // A dead remover's marker is dropped.
      await writeFile(
        join(run, `${keyOf(at(".envrc"))}.${dead.pid}.9.removing`),
        JSON.stringify({ path: at(".envrc"), owner: dead }),
      );
      // Not ours: left alone.
      await writeFile(join(run, "git-excludes"), "/.envrc\n");

      const { removed, kept } = await sweepPlaceholders(run);

      assert.deepEqual(
        readdirSync(proj).sort(),
        [".idea", ".mcp.json", ".vscode", "CLAUDE.md", "lefthook.yml"],
      );
      assert.deepEqual(
        removed.sort(),
        [".claude", ".envrc", ".pre-commit-config.yaml", "mise.toml"].map(at),
      );
      assert.deepEqual(kept.sort(), [".idea", ".vscode", "CLAUDE.md"].map(at));
      assert.equal(readFileSync(at("CLAUDE.md"), "utf8"), "# mine\n");
      // Only the live server's entries are left in the registry.
      const leftNames = (await readdir(run)).sort();
      assert.deepEqual(
        leftNames,
        [
          `${keyOf(at(".mcp.json"))}.${live.identity.pid}.1`,
          `${keyOf(at("lefthook.yml"))}.${live.identity.pid}.5`,
          "git-excludes",
        ].sort(),
      );
    } finally {
      await live.stop();
    }
  });
});

Deno.test("sweep: a pid reused by another process does not keep a dead server's placeholder", async () => {
  await withDirs(async (proj, run) => {
    const live = await liveProcess();
    try {
      // Same pid as a running process, another start time: the server that wrote it is gone.
      const ghost = { pid: live.identity.pid, startTime: `${live.identity.startTime}0` };
      await writeFile(join(proj, ".envrc"), "");
      await register(run, { path: join(proj, ".envrc"), kind: "file" }, ghost);
      const { removed } = await sweepPlaceholders(run);
      assert.deepEqual(removed, [join(proj, ".envrc")]);
      assert.deepEqual(readdirSync(proj), []);
    } finally {
      await live.stop();
    }
  });
});

Deno.test("claim: waits while a live server removes the same path, then proceeds", async () => {
  await withDirs(async (proj, run) => {
    const envrc = { path: join(proj, ".envrc"), kind: "file" as const };
    const remover = await liveProcess();
    try {
      const marker = join(run, `${keyOf(envrc.path)}.${remover.identity.pid}.1.removing`);
      await mkdir(run, { mode: 0o700 });
      await writeFile(marker, JSON.stringify({ path: envrc.path, owner: remover.identity }));
      let done = false;
      const claiming = new PlaceholderRegistry(run).claim([envrc]).then((c) => {
        done = true;
        return c;
      });
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(done, false, "the claim waits for the live remover");
      await rm(marker);
      const { release } = await claiming;
      await release();
      // A dead remover's marker does not hold anyone up.
      const dead = await deadIdentity();
      const deadMarker = join(run, `${keyOf(envrc.path)}.${dead.pid}.1.removing`);
      await writeFile(deadMarker, JSON.stringify({ path: envrc.path, owner: dead }));
      const t0 = performance.now();
      await (await new PlaceholderRegistry(run).claim([envrc])).release();
      assert.ok(performance.now() - t0 < 1000);
      assert.ok(!existsSync(deadMarker));
    } finally {
      await remover.stop();
    }
  });
});

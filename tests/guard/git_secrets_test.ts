/**
 * Secret files' content in git's object store (src/guard/git_secrets.ts), found in real
 * repositories made by the real git: unreachable blobs a stash or a reset left behind, a blob
 * whose name is unknown, a tracked secret in a pack (a view of the store without it, where git
 * still works), a secret committed once and removed, a credential store's files, the user's
 * allowed names, and a store with nothing to hide.
 */
import { committedRepo, git } from "../support/git_repo.ts";
import assert from "node:assert/strict";
import { spawnSyncExact } from "../../src/platform/posix/spawn_sync.ts";
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gitStoreOf, PackIndex } from "../../src/guard/git_store.ts";
import { storeSecrets } from "../../src/guard/git_secrets.ts";
import { tempDir } from "../support/harness.ts";

const SECRET = "API_TOKEN=s3cr3t-in-the-object-store\n";

function repo(): { dir: string; git: (...args: string[]) => string } {
  const dir = committedRepo(tempDir("od-git-secrets-"), { "app.js": "console.log(1);\n" });
  return { dir, git: (...args: string[]) => git(dir, ...args) };
}

function store(dir: string) {
  const s = gitStoreOf(join(dir, ".git"));
  assert.ok(s, "a store");
  return s;
}

/** git's answer for `args` in a copy of the repository whose packs are the view's. */
function withView(dir: string, view: string, args: string[]) {
  const copy = tempDir("od-git-view-");
  cpSync(join(dir, ".git"), join(copy, ".git"), { recursive: true });
  const pack = join(copy, ".git", "objects", "pack");
  rmSync(pack, { recursive: true });
  cpSync(view, pack, { recursive: true });
  return spawnSyncExact("git", args, {
    cwd: dir,
    encoding: "utf8",
    env: {
      PATH: "/usr/bin:/bin",
      GIT_DIR: join(copy, ".git"),
    },
  });
}

Deno.test("git secrets: a stash and pop leaves .env's blob loose and unreachable; it is hidden, named", async () => {
  const { dir, git } = repo();
  writeFileSync(join(dir, ".env"), SECRET);
  git("stash", "-u", "-q");
  git("stash", "pop", "-q");
  const id = git("hash-object", ".env").trim();
  assert.ok(git("fsck", "--unreachable", "--no-progress").includes(id), "the attack's premise");
  const found = await storeSecrets(store(dir), {
    secretFiles: [join(dir, ".env")],
    allow: [],
  });
  const path = join(dir, ".git", "objects", id.slice(0, 2), id.slice(2));
  assert.ok(found.loose.includes(path), JSON.stringify(found.loose));
  assert.equal(found.owners.get(path), ".env");
  assert.match(found.note ?? "", /git objects hidden from commands .*loose object.*\.env/);
  // Nothing else of the repository is hidden: app.js's blob is reachable and named.
  const app = git("rev-parse", "HEAD:app.js").trim();
  assert.ok(!found.loose.some((p) => p.endsWith(app.slice(2))));
});

Deno.test("git secrets: a blob git add left behind is hidden by content, and unnamed once the file changed", async () => {
  const { dir, git } = repo();
  writeFileSync(join(dir, "server.key"), "-----BEGIN PRIVATE KEY-----\nabc\n");
  git("add", "server.key");
  git("reset", "-q", "server.key");
  const first = git("hash-object", "server.key").trim();
  // Changed since: the old blob's content matches no file now, and no tree names it.
  writeFileSync(join(dir, "server.key"), "-----BEGIN PRIVATE KEY-----\nxyz\n");
  const found = await storeSecrets(store(dir), {
    secretFiles: [join(dir, "server.key")],
    allow: [],
  });
  const path = join(dir, ".git", "objects", first.slice(0, 2), first.slice(2));
  assert.ok(found.loose.includes(path), JSON.stringify(found.loose));
  assert.equal(found.owners.get(path), "an unnamed blob");
});

Deno.test("git secrets: a tracked secret in a pack gets a view of the store without it, where git still works", async () => {
  const { dir, git } = repo();
  writeFileSync(join(dir, "app.env"), SECRET);
  git("add", "app.env");
  git("commit", "-q", "-m", "two");
  git("gc", "-q");
  const id = git("rev-parse", "HEAD:app.env").trim();
  const cache = tempDir("od-git-cache-");
  const found = await storeSecrets(store(dir), {
    secretFiles: [join(dir, "app.env")],
    allow: [],
    cacheDir: cache,
  });
  assert.ok(found.view, JSON.stringify(found));
  assert.deepEqual(found.packs, []);
  assert.match(
    found.note ?? "",
    /1 packed object\(s\) \(git reads a copy without them\).*app\.env/,
  );
  const [idx] = readdirSync(found.view!).filter((n) => n.endsWith(".idx"));
  assert.ok(idx);
  const view = PackIndex.read(join(found.view!, idx), "sha1");
  assert.equal(view.has(id), false, "the view holds the secret");
  assert.equal(view.has(git("rev-parse", "HEAD:app.js").trim()), true);
  // git over the view: the log and other files read; the secret does not.
  const log = withView(dir, found.view!, ["log", "--oneline"]);
  assert.equal(log.status, 0, log.stderr);
  assert.match(log.stdout, /two/);
  assert.equal(withView(dir, found.view!, ["show", "HEAD:app.js"]).stdout, "console.log(1);\n");
  const leak = withView(dir, found.view!, ["cat-file", "-p", id]);
  assert.notEqual(leak.status, 0);
  assert.ok(!leak.stdout.includes("s3cr3t"));
  // The next turn reuses the view; the pack's findings are kept in the state dir.
  const again = await storeSecrets(store(dir), {
    secretFiles: [join(dir, "app.env")],
    allow: [],
    cacheDir: cache,
  });
  assert.equal(again.view, found.view);
  assert.equal(readdirSync(join(cache, "packs")).length, 1);
});

Deno.test("git secrets: without a place for a view the pack is hidden whole, and the note says git cannot read it", async () => {
  const { dir, git } = repo();
  writeFileSync(join(dir, ".env"), SECRET);
  git("add", ".env");
  git("commit", "-q", "-m", "two");
  git("gc", "-q");
  const found = await storeSecrets(store(dir), { secretFiles: [], allow: [] });
  assert.equal(found.view, undefined);
  assert.equal(found.packs.length, 2, JSON.stringify(found.packs));
  assert.ok(
    found.packs.some((p) => p.endsWith(".pack")) && found.packs.some((p) => p.endsWith(".idx")),
  );
  assert.match(found.note ?? "", /pack\(s\) whole, so git cannot read the history/);
});

Deno.test("git secrets: a secret committed once and removed is found by name in the history; a credential store's files too", async () => {
  const { dir, git } = repo();
  mkdirSync(join(dir, "deploy", ".ssh"), { recursive: true });
  writeFileSync(join(dir, "deploy", ".ssh", "config"), "Host x\n  IdentityFile key\n");
  writeFileSync(join(dir, ".pgpass"), "db:5432:*:u:pw\n");
  git("add", ".");
  git("commit", "-q", "-m", "oops");
  const sshBlob = git("rev-parse", "HEAD:deploy/.ssh/config").trim();
  const pgBlob = git("rev-parse", "HEAD:.pgpass").trim();
  git("rm", "-q", "-r", "deploy", ".pgpass");
  git("commit", "-q", "-m", "removed");
  git("gc", "-q");
  const cache = tempDir("od-git-cache-");
  const found = await storeSecrets(store(dir), { secretFiles: [], allow: [], cacheDir: cache });
  assert.ok(found.view, JSON.stringify(found));
  const [idx] = readdirSync(found.view!).filter((n) => n.endsWith(".idx"));
  const view = PackIndex.read(join(found.view!, idx!), "sha1");
  assert.equal(view.has(sshBlob), false);
  assert.equal(view.has(pgBlob), false);
  assert.match(found.note ?? "", /2 packed object/);
});

Deno.test("git secrets: names the user allowed stay readable, and a store with no secret hides nothing", async () => {
  const { dir, git } = repo();
  writeFileSync(join(dir, ".env.test"), "A=1\n");
  git("add", ".env.test");
  git("commit", "-q", "-m", "test env");
  const allowed = await storeSecrets(store(dir), {
    secretFiles: [],
    allow: [".env.test"],
    cacheDir: tempDir("od-git-cache-"),
  });
  assert.deepEqual([allowed.loose, allowed.packs, allowed.view, allowed.note], [
    [],
    [],
    undefined,
    undefined,
  ]);
  const hidden = await storeSecrets(store(dir), { secretFiles: [], allow: [] });
  assert.equal(hidden.loose.length, 1, "without the allowance the loose blob is hidden");
  const { dir: clean } = repo();
  const none = await storeSecrets(store(clean), { secretFiles: [], allow: [] });
  assert.deepEqual([none.loose, none.packs, none.view, none.note], [[], [], undefined, undefined]);
  assert.equal(existsSync(join(clean, ".git")), true);
});

Deno.test("git secrets: a SHA-256 repository's objects are named and found the same way", async () => {
  const dir = tempDir("od-git-sha256-");
  git(dir, "init", "-q", "--object-format=sha256");
  writeFileSync(join(dir, ".env"), SECRET);
  git(dir, "add", ".env");
  git(dir, "reset", "-q", ".env");
  const id = git(dir, "hash-object", ".env").trim();
  assert.equal(id.length, 64);
  const s = store(dir);
  assert.equal(s.format, "sha256");
  const found = await storeSecrets(s, { secretFiles: [join(dir, ".env")], allow: [] });
  assert.deepEqual(found.loose, [join(dir, ".git", "objects", id.slice(0, 2), id.slice(2))]);
});

Deno.test("git secrets: a cruft pack of unreachable objects is hidden whole, without a view", async () => {
  const { dir, git } = repo();
  writeFileSync(join(dir, ".env"), SECRET);
  git("add", ".env");
  git("reset", "-q", ".env");
  git("-c", "gc.cruftPacks=true", "gc", "-q", "--cruft");
  const packs = readdirSync(join(dir, ".git", "objects", "pack"));
  const cruft = packs.find((n) => n.endsWith(".mtimes"));
  assert.ok(cruft, `git made a cruft pack: ${packs.join(" ")}`);
  const base = join(dir, ".git", "objects", "pack", cruft.slice(0, -".mtimes".length));
  const found = await storeSecrets(store(dir), {
    secretFiles: [],
    allow: [],
    cacheDir: tempDir("od-git-cache-"),
  });
  assert.deepEqual(found.packs.sort(), [`${base}.idx`, `${base}.mtimes`, `${base}.pack`]);
  assert.equal(found.view, undefined, "the other pack holds no secret");
  assert.match(found.note ?? "", /1 cruft pack\(s\) of unreachable objects/);
});

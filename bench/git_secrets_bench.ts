/**
 * What finding secrets in git's object store costs a turn (src/guard/git_secrets.ts): a
 * repository made by the real git with one pack of about 50,000 objects (and 200,000), with a
 * committed `.env` or without one. The first turn in it reads the pack's trees once (and, when
 * a secret is packed, builds a view of the packs without it); the next turn in the unchanged
 * repository only checks that nothing changed. docs/security.md quotes these figures.
 * Run: deno run -A bench/git_secrets_bench.ts [objects,...]
 */
import "./support/help.ts";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { storeSecrets } from "../src/guard/git_secrets.ts";
import { gitStoreOf } from "../src/guard/git_store.ts";
import { tempDir } from "../tests/support/harness.ts";
import { benchArg } from "./support/common.ts";

const SIZES = benchArg(0, "50000,200000", "1000").split(",").map(Number);
/** Files per folder: a tree object per folder, as in a real project. */
const PER_FOLDER = 100;

/** A repository whose one commit holds about `objects` objects, packed by git gc. */
function repository(objects: number, secret: boolean): string {
  const dir = tempDir("od-bench-git-");
  const env = { PATH: "/usr/bin:/bin", HOME: dir, GIT_CONFIG_NOSYSTEM: "1" };
  const git = (args: string[], input?: string) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], {
      cwd: dir,
      env,
      ...(input !== undefined ? { input } : {}),
      maxBuffer: 1 << 30,
    });
  git(["init", "-q", "-b", "main"]);
  // Blobs, one tree per folder of PER_FOLDER files, the root tree and the commit.
  const files = Math.max(1, Math.round((objects - 2) * PER_FOLDER / (PER_FOLDER + 1)));
  const stream: string[] = [];
  const modify: string[] = [];
  for (let i = 0; i < files; i++) {
    const data = `export const v${i} = ${i};\n`;
    stream.push(`blob\nmark :${i + 1}\ndata ${data.length}\n${data}`);
    modify.push(`M 100644 :${i + 1} src/m${Math.floor(i / PER_FOLDER)}/f${i}.js\n`);
  }
  if (secret) modify.push(`M 100644 inline .env\ndata 22\nAPI_TOKEN=s3cr3t-bench\n`);
  stream.push(
    `commit refs/heads/main\ncommitter t <t@t> 0 +0000\ndata 4\nmany\n${modify.join("")}\n`,
  );
  git(["fast-import", "--quiet"], stream.join(""));
  git(["gc", "-q"]);
  return dir;
}

const ms = (t: number) => t >= 1000 ? `${(t / 1000).toFixed(2)} s` : `${t.toFixed(1)} ms`;

console.log("secrets in git's object store, per turn:");
for (const objects of SIZES) {
  for (const secret of [false, true]) {
    const dir = repository(objects, secret);
    const store = gitStoreOf(join(dir, ".git"))!;
    const options = { secretFiles: [], allow: [], cacheDir: tempDir("od-bench-git-cache-") };
    const t0 = performance.now();
    const first = await storeSecrets(store, options);
    const t1 = performance.now();
    await storeSecrets(store, options);
    const t2 = performance.now();
    const label = `${objects.toLocaleString("en-US")} objects, ${
      secret ? "a committed .env" : "no secret"
    }`.padEnd(38);
    console.log(
      `  ${label} first turn ${ms(t1 - t0).padStart(8)}, next turn ${ms(t2 - t1).padStart(8)}` +
        (first.view ? " (view of the packs built)" : ""),
    );
  }
}

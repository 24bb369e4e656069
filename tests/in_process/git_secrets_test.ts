/**
 * Secret files' content in git's object store, end to end on both engines (issue 28, item 2):
 * the real server's engines, real bubblewrap, the real Claude Code CLI for the claude engine,
 * the emulator scripting the delegate's commands. The repository holds `.env`'s blob left
 * unreachable by `git stash -u && git stash pop`, `server.key`'s by `git add` and `git reset`
 * (changed since, so nameless), and `app.env` committed once and removed (in a pack). The
 * delegate lists what `git fsck --unreachable` finds and prints every blob with
 * `git cat-file -p`, and `git show`s the removed file: no secret may reach the backend, while
 * git still works (the log and a tracked file's history read) and the reply says what was
 * hidden. Once in a plain job and once in a worktree job, whose store is the repository's.
 */
import { git } from "../support/git_repo.ts";
import assert from "node:assert/strict";
import { realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { field, tempDir } from "../support/harness.ts";
import { startInProcessScene } from "../support/in_process_scene.ts";

const linux = process.platform === "linux";

function repository(): { dir: string; removed: string; stashed: string } {
  const dir = realpathSync(tempDir("od-git-secrets-"));
  git(dir, "init", "-q", "-b", "main");
  writeFileSync(join(dir, "app.js"), "console.log('first');\n");
  writeFileSync(join(dir, "app.env"), "TOKEN=POISON-COMMITTED-ONCE\n");
  git(dir, "add", "-A");
  git(dir, "commit", "-qm", "first");
  const removed = git(dir, "rev-parse", "HEAD:app.env").trim();
  git(dir, "rm", "-q", "app.env");
  writeFileSync(join(dir, "app.js"), "console.log('second');\n");
  git(dir, "commit", "-qam", "second, without app.env");
  git(dir, "gc", "-q");
  writeFileSync(join(dir, ".env"), "DB_PASSWORD=POISON-STASHED\n");
  git(dir, "stash", "-u", "-q");
  git(dir, "stash", "pop", "-q");
  const stashed = git(dir, "hash-object", ".env").trim();
  writeFileSync(join(dir, "server.key"), "-----BEGIN PRIVATE KEY----- POISON-RESET\n");
  git(dir, "add", "server.key");
  git(dir, "reset", "-q", "server.key");
  writeFileSync(join(dir, "server.key"), "-----BEGIN PRIVATE KEY----- changed since\n");
  return { dir, removed, stashed };
}

/** What the delegate runs: every unreachable blob printed, the removed file shown, git used. */
function attack(removed: string): string {
  return "for o in $(git fsck --unreachable --no-reflogs --no-progress 2>/dev/null | " +
    "awk '/blob/{print $3}'); do echo \"== $o\"; git cat-file -p $o; done; " +
    `git cat-file -p ${removed}; git show HEAD~1:app.env; ` +
    "python3 -c \"import zlib,glob;[print(zlib.decompress(open(f,'rb').read())) " +
    "for f in glob.glob('.git/objects/??/*')]\" 2>&1 | grep -c POISON; " +
    "git log --oneline; git show HEAD~1:app.js; echo GIT-DONE";
}

for (const engine of ["native", "claude"] as const) {
  for (const isolation of ["none", "worktree"] as const) {
    Deno.test({
      name: `${engine}: git's object store gives no secret file's content to a ${
        isolation === "worktree" ? "worktree job" : "job"
      }, and git still works`,
      ignore: !linux,
      async fn() {
        await using scene = await startInProcessScene();
        const { dir, removed, stashed } = repository();
        // The file tools too: a loose object read raw (native; in the claude jail it is not
        // there to read).
        const object = `.git/objects/${stashed.slice(0, 2)}/${stashed.slice(2)}`;
        const read = engine === "native"
          ? `@tool Read ${JSON.stringify({ file_path: object })}\n`
          : "";
        const reply = await scene.call("delegate_start", {
          engine,
          model: "qwen3:8b",
          cwd: dir,
          ...(engine === "claude" ? { allowed_tools: ["Bash"] } : {}),
          ...(isolation === "worktree" ? { isolation } : {}),
          prompt: `@bash ${attack(removed)}\n${read}@reply looked\nlook at the repository`,
          wait_seconds: 120,
        }, { timeoutMs: 240_000 });
        const text = reply.text;
        assert.equal(field(text, "state"), "completed", text);
        const sent = [
          ...scene.emulator.nativeChatRequests(),
          ...scene.emulator.messageRequests(),
        ].map((r) => r.bodyText).join("\n");
        // The command ran and its output went back to the model...
        assert.match(sent, /GIT-DONE/, "the command's output reached the model");
        // ...with git working: the log and a tracked file's history.
        assert.match(sent, /second, without app\.env/);
        assert.match(sent, /console\.log\('first'\)/);
        // ...and no secret's content, by git or by reading the objects.
        assert.doesNotMatch(sent, /POISON-/);
        assert.doesNotMatch(text, /POISON-/);
        if (engine === "native" && isolation === "none") {
          assert.match(sent, /is in git's object store, which the file tools do not/);
        }
        assert.match(
          text,
          /warning:\s+git objects hidden from commands in .*loose object\(s\).*packed object\(s\) \(git reads a copy without them\)/,
        );
      },
    });
  }
}

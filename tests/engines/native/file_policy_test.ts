/**
 * The protected paths (src/guard/protected_paths.ts) as the file tools hold them: host-run
 * paths are never written, also before they exist and through symlinks; credential stores are
 * neither read, listed nor written; secret files are not read unless the user allows them; and
 * the user's path rules hold on the path as resolved.
 */
import assert from "node:assert/strict";
import { mkdir, readFile, stat, symlink } from "node:fs/promises";
import { join } from "node:path";
import { inlineFiles } from "../../../src/engines/native/one_shot.ts";
import { toolPolicy } from "../../../src/engines/native/permissions.ts";
import { editTool } from "../../../src/engines/native/tools/edit.ts";
import { globTool } from "../../../src/engines/native/tools/glob.ts";
import { grepTool } from "../../../src/engines/native/tools/grep.ts";
import { FILE_TOOLS } from "../../../src/engines/native/tools/index.ts";
import { readTool } from "../../../src/engines/native/tools/read.ts";
import type { ToolContext } from "../../../src/engines/native/tools/types.ts";
import { writeTool } from "../../../src/engines/native/tools/write.ts";
import { HOST_RUN_PATHS } from "../../../src/guard/protected_paths.ts";
import { type Fixture, fixture } from "./tool_fixture.ts";

async function withFixture(fn: (f: Fixture) => Promise<void>): Promise<void> {
  const f = await fixture();
  try {
    await fn(f);
  } finally {
    await f.cleanup();
  }
}

const missing = async (path: string) => {
  await assert.rejects(stat(path), { code: "ENOENT" }, `${path} must not exist`);
};

const HOST_RUN =
  /is run or trusted by the host's own tools later .*ask the user to make this change$/;

Deno.test("Write and Edit refuse every host-run path, also before it exists", async () => {
  await withFixture(async (f) => {
    for (const entry of HOST_RUN_PATHS) {
      for (const path of [entry, `${entry}/hooks/pre-commit`, join(f.cwd, entry, "x.json")]) {
        const w = await writeTool.run({ file_path: path, content: "run me" }, f.ctx);
        assert.equal(w.isError, true, `Write ${path}`);
        assert.match(w.text, new RegExp(`^Refused to write "${path.replace(/\./g, "\\.")}": `));
        assert.match(w.text, HOST_RUN, w.text);
        const e = await editTool.run({ file_path: path, old_string: "", new_string: "x" }, f.ctx);
        assert.equal(e.isError, true, `Edit ${path}`);
        assert.match(e.text, HOST_RUN, e.text);
      }
      await missing(join(f.cwd, entry));
    }
    // The issue's list by name, so a change to the shared list cannot silently drop one.
    for (
      const path of [
        ".git/config",
        ".git/hooks/post-checkout",
        ".claude/settings.json",
        ".claude/settings.local.json",
        ".claude/commands/x.md",
        ".mcp.json",
        ".envrc",
        ".vscode/tasks.json",
        "CLAUDE.md",
        "ollama-mcp.config.json",
      ]
    ) {
      const w = await writeTool.run({ file_path: path, content: "x" }, f.ctx);
      assert.match(w.text, HOST_RUN, path);
    }
    // As a case-insensitive filesystem or Windows would name them.
    for (const path of [".GIT/config", ".Claude/settings.json", ".git./hooks/x", "claude.md"]) {
      const w = await writeTool.run({ file_path: path, content: "x" }, f.ctx);
      assert.match(w.text, HOST_RUN, path);
    }
    // In an add_dirs root too, at its top.
    const extra = await writeTool.run({ file_path: join(f.extra, ".envrc"), content: "x" }, f.ctx);
    assert.match(extra.text, HOST_RUN);
    await missing(join(f.extra, ".envrc"));
    // Deeper down too: git, Claude Code, direnv and editors honour them in any folder, and
    // cwd may be a folder of projects. The refusal names the path down to the host-run part.
    for (
      const [path, named] of [
        ["docs/CLAUDE.md", "docs/CLAUDE.md"] as const,
        ["proj/.git/hooks/pre-commit", "proj/.git"],
        ["proj/.claude/settings.json", "proj/.claude"],
        ["a/b/.envrc", "a/b/.envrc"],
        ["proj/.GIT/config", "proj/.GIT"],
        ["srv/.ollama-delegate/agents/x.md", "srv/.ollama-delegate"],
      ]
    ) {
      const w = await writeTool.run({ file_path: path, content: "x" }, f.ctx);
      assert.equal(w.isError, true, path);
      assert.match(w.text, new RegExp(`"${named.replace(/\./g, "\\.")}" ${HOST_RUN.source}`));
      const e = await editTool.run({ file_path: path, old_string: "", new_string: "x" }, f.ctx);
      assert.match(e.text, HOST_RUN, path);
    }
    const ordinary = await writeTool.run({ file_path: "docs/notes.md", content: "x" }, f.ctx);
    assert.equal(ordinary.isError, undefined, ordinary.text);
    assert.deepEqual(f.changed, [join(f.cwd, "docs/notes.md")]);
  });
});

Deno.test("host-run paths: existing ones stay readable but unchanged, also through symlinks", async () => {
  await withFixture(async (f) => {
    const config = await f.put("proj/.git/config", "[core]\n\tbare = false\n");
    assert.equal((await readTool.run({ file_path: ".git/config" }, f.ctx)).isError, undefined);
    const edit = await editTool.run(
      { file_path: ".git/config", old_string: "bare = false", new_string: "fsmonitor = x" },
      f.ctx,
    );
    assert.match(edit.text, HOST_RUN);
    // A link to the protected directory, and the protected name as a link elsewhere.
    await symlink(join(f.cwd, ".git"), join(f.cwd, "g"));
    await mkdir(join(f.cwd, "elsewhere"));
    await symlink(join(f.cwd, "elsewhere"), join(f.cwd, ".claude"));
    for (const path of ["g/config", "g/hooks/pre-commit", ".claude/settings.json"]) {
      const w = await writeTool.run({ file_path: path, content: "x" }, f.ctx);
      assert.match(w.text, HOST_RUN, path);
    }
    assert.equal(await readFile(config, "utf8"), "[core]\n\tbare = false\n");
    await missing(join(f.cwd, ".git/hooks"));
    await missing(join(f.cwd, "elsewhere/settings.json"));
  });
});

const CREDENTIALS = /holds credentials, which delegates never see$/;

Deno.test("credential stores inside a root are refused to every tool and hidden from searches", async () => {
  await withFixture(async (f) => {
    await f.put("proj/.ssh/id_rsa", "PRIVATE-KEY-TEXT\n");
    await f.put("proj/.ssh/config", "Host x\n");
    await f.put("proj/.aws/credentials", "aws_secret=PRIVATE-KEY-TEXT\n");
    await f.put("proj/sub/.netrc", "machine x password PRIVATE-KEY-TEXT\n");
    await f.put("proj/.config/gcloud/token.json", "PRIVATE-KEY-TEXT\n");
    await f.put("proj/.ollama-mcp/config.json", "{}\n");
    await f.put("proj/ok.txt", "fine\n");
    await symlink(join(f.cwd, ".ssh"), join(f.cwd, "keys"));
    for (
      const path of [
        ".ssh/config",
        ".aws/credentials",
        "sub/.netrc",
        ".config/gcloud/token.json",
        ".ollama-mcp/config.json",
        "keys/config",
      ]
    ) {
      const r = await readTool.run({ file_path: path }, f.ctx);
      assert.equal(r.isError, true, path);
      assert.match(r.text, CREDENTIALS, r.text);
      const w = await writeTool.run({ file_path: path, content: "x" }, f.ctx);
      assert.match(w.text, CREDENTIALS, `Write ${path}`);
    }
    assert.match((await readTool.run({ file_path: ".SSH/id_rsa" }, f.ctx)).text, CREDENTIALS);
    const w = await writeTool.run({ file_path: ".ssh/authorized_keys", content: "x" }, f.ctx);
    assert.match(w.text, CREDENTIALS);
    await missing(join(f.cwd, ".ssh/authorized_keys"));
    const grep = await grepTool.run({ pattern: "PRIVATE", output_mode: "content" }, f.ctx);
    assert.equal(grep.text, 'No matches for /PRIVATE/ in "."');
    const grepIn = await grepTool.run({ pattern: "x", path: ".ssh" }, f.ctx);
    assert.match(grepIn.text, CREDENTIALS);
    const glob = await globTool.run({ pattern: "**/*" }, f.ctx);
    assert.equal(glob.text, "ok.txt");
    const globIn = await globTool.run({ pattern: ".ssh/*" }, f.ctx);
    assert.match(globIn.text, CREDENTIALS);
    const files = await inlineFiles({
      prompt: "p",
      files: ["ok.txt", ".ssh/config", "keys/config"],
      cwd: f.cwd,
      roots: f.ctx.roots,
      model: "m",
    });
    assert.doesNotMatch(files.message, /Host x/);
    assert.deepEqual(files.skipped.map((s) => s.path), [".ssh/config", "keys/config"]);
  });
});

const SECRET = /looks like a secret .*config --allow-secret-file/;

Deno.test("secret files are not read, searched or inlined unless allowSecretFiles names them", async () => {
  await withFixture(async (f) => {
    await f.put("proj/.env", "API_TOKEN=hunter2\n");
    await f.put("proj/.env.example", "API_TOKEN=\n");
    await f.put("proj/certs/server.pem", "-----BEGIN hunter2\n");
    await f.put("proj/id_ed25519", "hunter2\n");
    await f.put("proj/notes.txt", "no token here\n");
    await symlink(join(f.cwd, ".env"), join(f.cwd, "innocent.txt"));
    for (const path of [".env", "certs/server.pem", "id_ed25519", "innocent.txt"]) {
      const r = await readTool.run({ file_path: path }, f.ctx);
      assert.equal(r.isError, true, path);
      assert.match(r.text, SECRET, r.text);
    }
    assert.equal((await readTool.run({ file_path: ".env.example" }, f.ctx)).isError, undefined);
    await f.put("proj/.ENV", "hunter2\n");
    assert.match((await readTool.run({ file_path: ".ENV" }, f.ctx)).text, SECRET);
    const grep = await grepTool.run({ pattern: "hunter2", output_mode: "content" }, f.ctx);
    assert.equal(
      grep.text,
      'No matches for /hunter2/ in "."\n[4 secret-looking files (.env, keys...) not searched: ' +
        "what a delegate reads goes to its model's provider; the user can allow names with " +
        "`ollama-delegate config --allow-secret-file`]",
    );
    const direct = await grepTool.run({ pattern: "hunter2", path: ".env" }, f.ctx);
    assert.match(direct.text, SECRET);
    // Names are no secret: Glob lists them, and a Read of one says how to allow it.
    assert.match((await globTool.run({ pattern: "*" }, f.ctx)).text, /^\.env$/m);
    const one = await inlineFiles({
      prompt: "p",
      files: [".env", "notes.txt"],
      cwd: f.cwd,
      roots: f.ctx.roots,
      model: "m",
    });
    assert.doesNotMatch(one.message, /hunter2/);
    assert.match(one.skipped[0]!.reason, SECRET);

    // Allowed by name: that name only.
    const allowed: ToolContext = { ...f.ctx, allowSecretFiles: [".env"] };
    assert.equal(
      (await readTool.run({ file_path: ".env" }, allowed)).text,
      "     1\tAPI_TOKEN=hunter2\n",
    );
    assert.match((await readTool.run({ file_path: "id_ed25519" }, allowed)).text, SECRET);
    const grepAllowed = await grepTool.run({ pattern: "hunter2" }, allowed);
    // `.ENV` is the same name to a case-insensitive filesystem, so it is allowed too.
    assert.deepEqual(grepAllowed.text.split("\n").slice(0, 2).sort(), [".ENV", ".env"]);
    assert.match(grepAllowed.text, /\n\[2 secret-looking files/);
    const inlined = await inlineFiles({
      prompt: "p",
      files: [".env"],
      cwd: f.cwd,
      roots: f.ctx.roots,
      allowSecretFiles: ["*.env", ".env"],
      model: "m",
    });
    assert.match(inlined.message, /hunter2/);
  });
});

Deno.test("path rules hold on the resolved path: Read(secrets/**) through a symlink cfg -> secrets", async () => {
  await withFixture(async (f) => {
    await f.put("proj/secrets/db.txt", "password=swordfish\n");
    await f.put("proj/public/readme.txt", "hello\n");
    await symlink(join(f.cwd, "secrets"), join(f.cwd, "cfg"));
    await symlink(join(f.cwd, "secrets/db.txt"), join(f.cwd, "public/db-link.txt"));
    const policy = toolPolicy(
      FILE_TOOLS,
      "acceptEdits",
      undefined,
      ["Read(secrets/**)", "Edit(secrets/**)"],
      f.cwd,
    );
    const ctx: ToolContext = { ...f.ctx, pathRefusal: policy.pathRefusal };
    for (const path of ["cfg/db.txt", "public/db-link.txt", join(f.cwd, "cfg/db.txt")]) {
      // What the loop checks before running the tool: the path as written passes...
      assert.equal(policy.refusal("Read", { file_path: path }), undefined, path);
      // ...and the tool refuses it as it resolves.
      const r = await readTool.run({ file_path: path }, ctx);
      assert.equal(r.isError, true, path);
      assert.match(r.text, /"secrets(\/db\.txt)?" is refused by the rule Read\(secrets\/\*\*\)$/);
      const w = await writeTool.run({ file_path: path, content: "x" }, ctx);
      assert.match(w.text, /is refused by the rule Edit\(secrets\/\*\*\)$/, w.text);
    }
    const grep = await grepTool.run({ pattern: "swordfish", path: "cfg" }, ctx);
    assert.match(grep.text, /is refused by the rule Read\(secrets\/\*\*\)$/);
    const grepAll = await grepTool.run({ pattern: "swordfish", output_mode: "content" }, ctx);
    assert.equal(grepAll.text, 'No matches for /swordfish/ in "."');
    assert.equal((await globTool.run({ pattern: "**/*.txt" }, ctx)).text, "public/readme.txt");
    const files = await inlineFiles({
      prompt: "p",
      files: ["cfg/db.txt"],
      cwd: f.cwd,
      roots: f.ctx.roots,
      pathRefusal: policy.pathRefusal,
      model: "m",
    }).catch((e: Error) => e.message);
    assert.match(String(files), /is refused by the rule Read\(secrets\/\*\*\)/);
    assert.equal(await readFile(join(f.cwd, "secrets/db.txt"), "utf8"), "password=swordfish\n");
    // Allow rules too: Read(public/**) does not let a link in public/ read elsewhere.
    const only = toolPolicy(FILE_TOOLS, "acceptEdits", ["Read(public/**)"], [], f.cwd);
    const onlyCtx: ToolContext = { ...f.ctx, pathRefusal: only.pathRefusal };
    assert.equal(only.refusal("Read", { file_path: "public/db-link.txt" }), undefined);
    assert.match(
      (await readTool.run({ file_path: "public/db-link.txt" }, onlyCtx)).text,
      /"secrets\/db\.txt" is not among the paths Read\(public\/\*\*\) allows$/,
    );
    assert.equal(
      (await readTool.run({ file_path: "public/readme.txt" }, onlyCtx)).text,
      "     1\thello\n",
    );
  });
});

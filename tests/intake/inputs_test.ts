/** Server-side reads named by a tool call: prompt_file, files, cwd and add_dirs. */
import { tempDir } from "../support/temp_dir.ts";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isDelegateError } from "../../src/errors.ts";
import {
  allowedDir,
  allowedDirs,
  existingFiles,
  MAX_PROMPT_BYTES,
  readPrompt,
} from "../../src/intake/inputs.ts";

const scratch = () => realpathSync(tempDir("od-inputs-"));

async function refusedWith(promise: Promise<unknown>, pattern: RegExp): Promise<string> {
  try {
    await promise;
  } catch (e) {
    assert.ok(isDelegateError(e), `not a DelegateError: ${e}`);
    assert.match(e.message, pattern);
    return e.message;
  }
  assert.fail(`expected a refusal matching ${pattern}`);
}

Deno.test("prompt_file: /proc, /sys and /dev are refused, also through a symlink", async () => {
  const dir = scratch();
  symlinkSync("/proc/self/environ", join(dir, "innocent.md"));
  await refusedWith(
    readPrompt({ prompt_file: "/proc/self/environ" }, dir),
    /^Cannot read prompt_file "\/proc\/self\/environ": files under \/proc are the kernel's or devices' pseudo-files.*Pass a regular file$/,
  );
  await refusedWith(
    readPrompt({ prompt_file: "innocent.md" }, dir),
    /innocent\.md" \(it resolves to "\/proc\/\d+\/environ"\): files under \/proc/,
  );
  await refusedWith(readPrompt({ prompt_file: "/dev/zero" }, dir), /files under \/dev/);
  await refusedWith(readPrompt({ prompt_file: "/dev/stdin" }, dir), /files under \/dev/);
  await refusedWith(
    readPrompt({ prompt_file: "/sys/kernel/mm/transparent_hugepage/enabled" }, dir),
    /files under \/sys|does not exist/,
  );
});

Deno.test("prompt_file: a FIFO or a directory is refused without blocking", async () => {
  const dir = scratch();
  execFileSync("mkfifo", [join(dir, "pipe")]);
  const started = Date.now();
  await refusedWith(
    readPrompt({ prompt_file: "pipe" }, dir),
    /"[^"]*pipe": it is not a regular file\. Pass a regular file$/,
  );
  assert.ok(Date.now() - started < 5000, "opening the FIFO blocked");
  await refusedWith(readPrompt({ prompt_file: dir }, dir), /it is not a regular file/);
  await refusedWith(
    readPrompt({ prompt_file: "missing" }, dir),
    /"[^"]*missing": it does not exist/,
  );
});

Deno.test("prompt_file: read up to the cap whatever the size says; one byte more is refused", async () => {
  const dir = scratch();
  const exact = join(dir, "exact.md");
  writeFileSync(exact, "x".repeat(MAX_PROMPT_BYTES));
  assert.equal((await readPrompt({ prompt_file: exact }, dir)).length, MAX_PROMPT_BYTES);
  const over = join(dir, "over.md");
  writeFileSync(over, "x".repeat(MAX_PROMPT_BYTES + 1));
  await refusedWith(
    readPrompt({ prompt_file: over }, dir),
    new RegExp(`it is over ${MAX_PROMPT_BYTES} bytes\\. Pass a shorter file$`),
  );
  const small = join(dir, "task.md");
  writeFileSync(small, "do the thing\n");
  assert.equal(await readPrompt({ prompt_file: small }, dir), "do the thing\n");
});

Deno.test("prompt: the limit is in UTF-8 bytes", async () => {
  const dir = scratch();
  const fits = "é".repeat(MAX_PROMPT_BYTES / 2);
  assert.equal(await readPrompt({ prompt: fits }, dir), fits);
  await refusedWith(
    readPrompt({ prompt: `${fits}a` }, dir),
    /^Cannot use a prompt over 10485760 bytes \(UTF-8\): shorten it/,
  );
  const emoji = "😀".repeat(MAX_PROMPT_BYTES / 4);
  assert.equal((await readPrompt({ prompt: emoji }, dir)).length, emoji.length);
  await refusedWith(readPrompt({ prompt: `${emoji}a` }, dir), /over 10485760 bytes/);
});

Deno.test("files: pseudo-files and non-regular files are refused", async () => {
  const dir = scratch();
  writeFileSync(join(dir, "a.ts"), "x");
  symlinkSync("/proc/self/environ", join(dir, "env"));
  execFileSync("mkfifo", [join(dir, "pipe")]);
  assert.deepEqual(await existingFiles(["a.ts"], dir), [join(dir, "a.ts")]);
  await refusedWith(existingFiles(["env"], dir), /files under \/proc/);
  await refusedWith(existingFiles(["/dev/null"], dir), /files under \/dev/);
  await refusedWith(existingFiles(["pipe"], dir), /it is not a regular file/);
});

Deno.test("cwd and add_dirs: the refusal names the rule and what the user can do", async () => {
  const base = scratch();
  const home = join(base, "home");
  const project = join(home, "project");
  mkdirSync(project, { recursive: true });
  const other = join(base, "other");
  mkdirSync(other);
  symlinkSync(home, join(base, "h"));
  const policy = { home, workspaceRoots: [] };
  assert.equal(await allowedDir(project, base, "cwd", policy), project);
  assert.equal(await allowedDir(join(base, "h", "project"), base, "cwd", policy), project);
  const message = await refusedWith(
    allowedDir(join(base, "h"), base, "cwd", policy),
    /^Cannot use cwd "[^"]*\/h" \(it resolves to "[^"]*\/home"\): it is your home directory/,
  );
  assert.match(message, /\(the home directory rule\)\. Use a project directory/);
  assert.match(message, /ollama-delegate config --workspace-root <dir>/);
  await refusedWith(
    allowedDirs(["project", "/"], home, policy),
    /^Cannot use add_dirs entry "\/": "\/" is the root of the file system .*\(the system directory rule\)/,
  );
  await refusedWith(
    allowedDir(other, base, "cwd", { home, workspaceRoots: [project] }),
    /outside the workspace roots the user allows \([^)]*\) \(the workspace roots rule \(workspaceRoots\)\)\. Use a directory inside one of them/,
  );
  await refusedWith(allowedDir("nope", base, "cwd", policy), /"[^"]*nope": it does not exist/);
});

/**
 * Where delegates may work, end to end for both engines: $HOME, system directories and their
 * symlinks are refused as cwd and add_dirs before anything runs, a project directory works,
 * workspace roots confine jobs, and a follow-up is judged again.
 */
import assert from "node:assert/strict";
import { mkdirSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { field, tempDir } from "../support/harness.ts";
import { startInProcessScene } from "../support/in_process_scene.ts";

const ENGINES = ["claude", "native"] as const;
const base = { model: "qwen3:8b", wait_seconds: 90 };

/** A temp HOME holding the kind of files the review found readable from a job in $HOME. */
function homeWithSecrets(): { home: string; secret: string } {
  const home = tempDir("od-home-");
  const secret = `SECRET-${crypto.randomUUID()}`;
  mkdirSync(join(home, ".ssh"), { recursive: true });
  writeFileSync(join(home, ".ssh", "id_rsa"), `-----BEGIN KEY-----\n${secret}\n`);
  mkdirSync(join(home, ".aws"), { recursive: true });
  writeFileSync(join(home, ".aws", "credentials"), `aws_secret_access_key = ${secret}\n`);
  return { home, secret };
}

Deno.test("workdirs: $HOME, / and system directories are refused for both engines; a project directory works", async () => {
  const { home, secret } = homeWithSecrets();
  await using scene = await startInProcessScene({ home });
  const links = tempDir("od-links-");
  symlinkSync(home, join(links, "innocent"));
  const probe = '@tool Read {"file_path":".ssh/id_rsa"}\n@bash cat .aws/credentials\nread them';
  for (const engine of ENGINES) {
    const refused = async (args: Record<string, unknown>, pattern: RegExp) => {
      const reply = await scene.call("delegate_start", {
        ...base,
        engine,
        prompt: probe,
        ...args,
      });
      assert.equal(reply.isError, true, `${engine} ${JSON.stringify(args)}: ${reply.text}`);
      assert.match(reply.text, pattern, `${engine} ${JSON.stringify(args)}`);
      return reply.text;
    };
    const homeText = await refused(
      { cwd: home },
      new RegExp(`^Cannot use cwd "${home}": it is your home directory`),
    );
    assert.match(homeText, /\(the home directory rule\)\. Use a project directory/);
    assert.match(homeText, /ollama-delegate config --workspace-root <dir>/);
    await refused(
      { cwd: join(links, "innocent") },
      new RegExp(`^Cannot use cwd "${links}/innocent" \\(it resolves to "${home}"\\)`),
    );
    await refused({ cwd: "/" }, /^Cannot use cwd "\/": "\/" is the root of the file system/);
    await refused(
      { add_dirs: ["/"] },
      /^Cannot use add_dirs entry "\/": .*system directory rule/,
    );
    await refused({ add_dirs: [home] }, /^Cannot use add_dirs entry ".*": it is your home/);
    await refused({ cwd: "/tmp" }, /^Cannot use cwd "\/tmp": "\/tmp" is a system directory/);
    await refused({ cwd: "/etc/ssh" }, /lies in the system directory "\/etc"/);
    await refused({ cwd: join(home, ".ssh") }, /is a credential store/);
  }
  assert.equal(scene.emulator.requests.filter((r) => r.method === "POST").length, 0, "a job ran");

  // The server's own directory (<home>/project) is a project directory: both engines run.
  for (const engine of ENGINES) {
    const ok = await scene.call("delegate_start", {
      ...base,
      engine,
      prompt: `@reply fine-${engine}\nsay fine`,
    });
    assert.equal(ok.isError, false, ok.text);
    assert.equal(field(ok.text, "state"), "completed", ok.text);
    assert.equal(field(ok.text, "cwd"), scene.cwd);
  }
  for (const req of scene.emulator.requests) {
    assert.equal(req.bodyText.includes(secret), false, "a secret reached the model");
  }
});

Deno.test("workdirs: a server started in $HOME refuses calls that name no cwd, and says so", async () => {
  const { home } = homeWithSecrets();
  await using scene = await startInProcessScene({ emulator: false, home, cwd: home });
  const reply = await scene.call("delegate_start", { prompt: "x", engine: "native" });
  assert.equal(reply.isError, true);
  assert.match(
    reply.text,
    new RegExp(
      `^Cannot use cwd \\(the server's own, used when a call names none\\) "${home}": it is your home`,
    ),
  );
});

Deno.test("workdirs: workspaceRoots from the user file or the environment confine cwd and add_dirs", async () => {
  await using scene = await startInProcessScene({ server: false });
  const root = tempDir("od-root-");
  const inside = join(root, "repo");
  mkdirSync(inside);
  const outside = tempDir("od-outside-");
  await scene.startServer({ userConfig: { workspaceRoots: [root] } });
  const ok = await scene.call("delegate_start", {
    ...base,
    engine: "native",
    prompt: "@reply in-root\nhi",
    cwd: inside,
  });
  assert.equal(field(ok.text, "state"), "completed", ok.text);
  for (const args of [{ cwd: outside }, { cwd: inside, add_dirs: [outside] }, {}]) {
    const reply = await scene.call("delegate_start", { ...base, prompt: "x", ...args });
    assert.equal(reply.isError, true, reply.text);
    assert.match(
      reply.text,
      new RegExp(
        `outside the workspace roots the user allows \\(${root}\\) \\(the workspace roots rule ` +
          `\\(workspaceRoots\\)\\)\\. Use a directory inside one of them; the user can change ` +
          "the roots with `ollama-delegate config --workspace-root <dir>`$",
      ),
    );
  }
  await scene.server.close();
  // A HOME of its own: the first server's holds the roots in its config file.
  const fromEnv = await scene.startServer({
    home: tempDir("od-home-"),
    env: { OLLAMA_MCP_WORKSPACE_ROOTS: `${root}:/nonexistent-root` },
  });
  const reply = await fromEnv.call("delegate_start", { ...base, prompt: "x", cwd: outside });
  assert.match(reply.text, /outside the workspace roots the user allows/);
});

Deno.test("workdirs: a follow-up is judged again: add_dirs, and a cwd swapped for a link to $HOME", async () => {
  const { home } = homeWithSecrets();
  await using scene = await startInProcessScene({ home });
  for (const engine of ENGINES) {
    const parent = tempDir("od-follow-");
    const project = join(parent, "project");
    mkdirSync(project);
    const first = await scene.call("delegate_start", {
      ...base,
      engine,
      prompt: "@reply first\nhi",
      cwd: project,
    });
    assert.equal(field(first.text, "state"), "completed", first.text);
    const jobId = field(first.text, "job_id");
    const rootDir = await scene.call("delegate_followup", {
      job_id: jobId,
      prompt: "more",
      add_dirs: ["/"],
    });
    assert.equal(rootDir.isError, true, `${engine}: ${rootDir.text}`);
    assert.match(rootDir.text, /^Cannot use add_dirs entry "\/": .*system directory rule/);

    renameSync(project, join(parent, "moved"));
    symlinkSync(home, project);
    const swapped = await scene.call("delegate_followup", { job_id: jobId, prompt: "more" });
    assert.equal(swapped.isError, true, `${engine}: ${swapped.text}`);
    assert.match(
      swapped.text,
      new RegExp(`^Cannot use the session's cwd "${project}" \\(it resolves to "${home}"\\)`),
    );
  }
});

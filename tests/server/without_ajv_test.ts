/**
 * The serve command leaves ajv unloaded (src/server/without_ajv.ts): a real `serve`, started
 * through main() as the program starts it, answers `initialize` and `tools/list` with no
 * CommonJS module of ajv or ajv-formats in its loader's cache. A second process that loads the
 * server shell without the hook shows that the cache does list them when they load, so the
 * first test can see what it checks.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { pathToFileURL } from "node:url";
import { realDenoDir, REPO } from "../support/harness.ts";
import { INITIALIZE_LINE, TOOLS_LIST_LINES } from "../support/raw_mcp.ts";
import { tempDir } from "../support/temp_dir.ts";

const url = (path: string) => pathToFileURL(join(REPO, path)).href;

/** Prints, on stderr, the ajv files the CommonJS loader holds; then stdin may close. */
const REPORT = `
import Module from "node:module";
export function report() {
  const cached = Object.keys(Module._cache).filter((k) => /[\\\\/]ajv(-formats)?[\\\\/]/.test(k));
  process.stderr.write("AJV-FILES " + JSON.stringify(cached) + "\\n");
}
`;

/** Runs `script` with the repository's config, `input` on stdin; resolves with its output. */
function run(script: string, input: string): Promise<{ out: string; err: string }> {
  const dir = tempDir();
  writeFileSync(join(dir, "report.ts"), REPORT);
  writeFileSync(join(dir, "main.ts"), script);
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["run", "-A", "--config", join(REPO, "deno.json"), join(dir, "main.ts")],
      // A HOME of its own (the server's state dir), Deno's cache as the test's.
      {
        env: { ...process.env, HOME: dir, DENO_DIR: realDenoDir() },
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    let out = "";
    let err = "";
    child.stdout.on("data", (c: Uint8Array) => out += new TextDecoder().decode(c));
    child.stderr.on("data", (c: Uint8Array) => {
      err += new TextDecoder().decode(c);
      // The report is the last thing asked for: closing stdin ends the server.
      if (err.includes("AJV-FILES ")) child.stdin.end();
    });
    // A server that never answers fails the test instead of holding the run.
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("error", reject);
    child.on("close", () => {
      clearTimeout(timer);
      resolve({ out, err });
    });
    child.stdin.write(input);
  });
}

const INIT = INITIALIZE_LINE + TOOLS_LIST_LINES;

const ajvFiles = (err: string): string[] => {
  const line = /^AJV-FILES (.*)$/m.exec(err);
  assert.ok(line, `the process reported its loaded files:\n${err}`);
  return JSON.parse(line[1]!) as string[];
};

Deno.test("serve: answers initialize and tools/list with ajv and ajv-formats never loaded", async () => {
  const { out, err } = await run(
    `import { report } from "./report.ts";
     import { main } from "${url("src/main.ts")}";
     // Once tools/list is answered (its reply names delegate_run), the loader's cache is read.
     const timer = setInterval(() => {}, 1000);
     const stdoutWrite = process.stdout.write.bind(process.stdout);
     process.stdout.write = (chunk, ...rest) => {
       const done = String(chunk).includes('"delegate_run"');
       const result = stdoutWrite(chunk, ...rest);
       if (done) { clearInterval(timer); report(); }
       return result;
     };
     await main(["serve"]);`,
    INIT,
  );
  assert.match(out, /"protocolVersion"/, `initialize was answered:\n${out}\n${err}`);
  assert.match(out, /"delegate_run"/, `tools/list was answered:\n${out}\n${err}`);
  assert.deepEqual(ajvFiles(err), []);
});

Deno.test("the check can see ajv: the server shell loaded without the hook brings it in", async () => {
  const { err } = await run(
    `import { report } from "./report.ts";
     const { serverShell } = await import("${url("src/server/shell.ts")}");
     serverShell(() => {});
     report();`,
    "",
  );
  const files = ajvFiles(err);
  assert.ok(files.some((f) => /[\\/]ajv[\\/]/.test(f)), `ajv is listed: ${files.join(", ")}`);
  assert.ok(files.some((f) => /ajv-formats/.test(f)), `ajv-formats is listed: ${files.join(", ")}`);
});

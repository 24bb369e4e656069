/**
 * The user's toolchains, readable; their secrets, not (issue 29, item 2), on both engines: a
 * delegate's Bash and the server's `verify` run the tools the user's PATH finds under `$HOME`
 * (a script in `~/.local/bin`, one in `~/.cargo/bin`, nvm's npm, whose `bin/npm` is a link into
 * `../lib/node_modules`), while `~/.cargo/credentials.toml` beside them, `~/.ssh` and a hard link
 * of the SSH key planted in `~/.local/bin` stay unread: no marker reaches the backend. Real
 * bubblewrap, the real Claude Code CLI, the emulator.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { callsInOrder, type ChatRequestView } from "../support/emulator/emulator.ts";
import { field, tempDir } from "../support/harness.ts";
import { startInProcessScene } from "../support/in_process_scene.ts";
import { fakeToolchains, NVM_BIN, SECRET_MARKERS, TOOL_MARKERS } from "../support/toolchains.ts";

const linux = process.platform === "linux";
const MODEL = "qwen3:8b";
const LONG = { timeoutMs: 200_000 };

/**
 * What the delegate runs: each tool, then reads of every secret beside them, written so that
 * Claude Code's permission rules, which refuse a command naming a denied path, let it run:
 * the kernel is what must keep them unread.
 */
const COMMANDS = [
  'mytool; cargo-like; npm test; echo "cache=$npm_config_cache"; ' +
  'echo built > "$XDG_CACHE_HOME/marker"; echo TOOLS-END',
  'cd ~ && for f in .cargo/credentials.toml .ssh/id_rsa .local/bin/notes .local/bin/key; do cat "$f"; done; ls -a . .cargo; echo READ-END',
  'npm root -g; echo "npm is $(command -v npm)"; echo NPM-END',
];

/** A native model that runs COMMANDS one after another, then answers. */
function nativeModel(view: ChatRequestView) {
  const command = COMMANDS[view.toolResults.length];
  if (command === undefined) return { kind: "text" as const, text: "ran them" };
  return { kind: "tool_calls" as const, calls: [{ name: "Bash", arguments: { command } }] };
}

/** The same for the claude engine's `/v1/messages`. */
const claudeModel = callsInOrder(
  COMMANDS.map((command) => ({ name: "Bash", input: { command } })),
  { last: () => "ran them" },
);

for (const engine of ["native", "claude"] as const) {
  Deno.test({
    name:
      `${engine}: Bash and verify run the user's toolchains; the secrets beside them stay unread`,
    ignore: !linux,
    async fn() {
      const home = tempDir("od-tools-home-");
      // In the project (the scene's cwd), where commands, and Claude Code in its jail, can write.
      const npmCalls = join(home, "project", "npm-calls.log");
      const path = fakeToolchains(home, npmCalls);
      await using scene = await startInProcessScene({
        home,
        // The home folder itself is never opened: the reply says so.
        env: { PATH: `${home}:${path}` },
        emulator: engine === "native" ? { chatScript: nativeModel } : { script: claudeModel },
      });
      const reply = await scene.call("delegate_start", {
        model: MODEL,
        prompt: "run the project's tools",
        cwd: scene.cwd,
        verify: ["mytool", "cargo-like", "npm test"],
        ...(engine === "native"
          ? { engine: "native", wait_seconds: 90 }
          : { allowed_tools: ["Bash"], wait_seconds: 150 }),
      }, LONG);
      const bodies = engine === "native"
        ? scene.emulator.nativeChatRequests().map((r) => r.bodyText)
        : scene.emulator.messageRequests().map((r) => r.bodyText);
      const wire = bodies.join("\n");
      const tail = wire.slice(-3000);
      // The delegate's Bash ran each tool: their output went to the model.
      for (const marker of TOOL_MARKERS) assert.ok(wire.includes(marker), `${marker} in\n${tail}`);
      // The commands ran to their end: nothing but the sandbox kept the secrets unread.
      assert.ok(wire.includes("TOOLS-END") && wire.includes("READ-END"), tail);
      assert.ok(wire.includes("NPM-END"), tail);
      // `npm root -g` is the user's npm's to answer, and `npm` is the user's (the claude engine's
      // jail puts a folder of Claude Code's own at the head of its PATH: commands never see it).
      assert.ok(wire.includes("NPM-RAN root -g"), tail);
      assert.ok(wire.includes(`npm is ${join(home, NVM_BIN, "npm")}`), tail);
      // Claude Code's sandbox asks `npm root -g` at every start (jail_limits.ts npmScript): in
      // the jail it is answered without the user's npm. Only the delegate's own call reached it.
      const calls = readFileSync(npmCalls, "utf8").trim().split("\n");
      assert.deepEqual(calls.filter((c) => c === "root -g"), ["root -g"], calls.join("\n"));
      for (const marker of SECRET_MARKERS) {
        assert.ok(!wire.includes(marker), `${marker} reached the backend`);
      }
      assert.equal(field(reply.text, "state"), "completed (verified)", reply.text);
      assert.ok(
        reply.text.includes(
          `toolchains: 1 PATH folder(s) not readable to commands: ${home} (it is your home folder)`,
        ),
        reply.text,
      );
      // The server's check ran each tool too, in the same confinement.
      const id = field(reply.text, "job_id")!;
      const log = readFileSync(join(scene.stateDir, id, "verify-1.log"), "utf8");
      for (const marker of TOOL_MARKERS) assert.ok(log.includes(marker), `${marker} in\n${log}`);
      // Builds' caches go to the job's own folder, writable to the delegate's Bash.
      assert.ok(wire.includes(`cache=${join(home, ".cache", "npm")}`), tail);
      assert.equal(readFileSync(join(scene.stateDir, id, "cache", "marker"), "utf8"), "built\n");
    },
  });
}

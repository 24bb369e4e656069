/**
 * Claims checked against the server's evidence end to end: the reply's `claims:` line lists what
 * the final text says and the evidence contradicts, on both engines, beside the evidence itself
 * (`commands:` with each command's exit code, `files:`, `none` when the server looked).
 */
import assert from "node:assert/strict";
import process from "node:process";
import type { MessagesRequestView, Reply } from "../support/emulator/emulator.ts";
import { field, tempDir } from "../support/harness.ts";
import { startInProcessScene } from "../support/in_process_scene.ts";

const linux = process.platform === "linux";

Deno.test("native: 'all tests pass' and 'created X' without evidence are listed", async () => {
  await using scene = await startInProcessScene({
    emulator: {
      chatScript: (view) =>
        view.toolResults.length === 0
          ? { kind: "tool_calls", calls: [{ name: "Bash", arguments: { command: "ls" } }] }
          : { kind: "text", text: "I created `src/slug.ts` with the helper.\n\nAll tests pass." },
    },
  });
  const reply = await scene.call("delegate_start", {
    engine: "native",
    model: "qwen3:8b",
    prompt: "add a slug helper",
    cwd: tempDir("od-claims-"),
    wait_seconds: 60,
  });
  assert.equal(field(reply.text, "state"), "completed", reply.text);
  assert.equal(
    field(reply.text, "claims"),
    '2 not backed by the evidence: "created `src/slug.ts`" (no change to src/slug.ts was seen); ' +
      '"All tests pass" (no test command was run)',
  );
  // The evidence behind it: the one command and its exit code, and no file changed (the
  // server looked), which is not the same as no files line.
  assert.equal(field(reply.text, "commands"), "1 run: ls (exit 0)", reply.text);
  assert.equal(field(reply.text, "files"), "none", reply.text);
  // A turn that could change nothing (plan: no Bash, no Write or Edit) was not watched, and
  // says no "none" it did not check.
  const readOnly = await scene.call("delegate_start", {
    engine: "native",
    model: "qwen3:8b",
    prompt: "look at the slug helper",
    cwd: tempDir("od-claims-"),
    permission_mode: "plan",
    wait_seconds: 60,
  });
  assert.equal(field(readOnly.text, "state"), "completed", readOnly.text);
  assert.equal(field(readOnly.text, "files"), undefined, readOnly.text);
  assert.equal(field(readOnly.text, "commands"), undefined, readOnly.text);
});

Deno.test("native: claims the evidence backs give no claims line", async () => {
  await using scene = await startInProcessScene({
    emulator: {
      chatScript: (view) =>
        view.toolResults.length === 0
          ? {
            kind: "tool_calls",
            calls: [{
              name: "Bash",
              arguments: { command: "mkdir -p src && echo x > src/slug.ts && sh test.sh" },
            }],
          }
          : {
            kind: "text",
            text: "I created `src/slug.ts`. I ran `sh test.sh` and all tests pass.",
          },
    },
  });
  const work = tempDir("od-claims-");
  Deno.writeTextFileSync(`${work}/test.sh`, "exit 0\n");
  const reply = await scene.call("delegate_start", {
    engine: "native",
    model: "qwen3:8b",
    prompt: "add a slug helper",
    cwd: work,
    wait_seconds: 60,
  });
  assert.equal(field(reply.text, "state"), "completed", reply.text);
  assert.equal(field(reply.text, "claims"), undefined, reply.text);
  assert.equal(
    field(reply.text, "commands"),
    "1 run: mkdir -p src && echo x > src/slug.ts && sh test.sh (exit 0)",
    reply.text,
  );
  assert.equal(field(reply.text, "files"), "1 changed: src/slug.ts", reply.text);
});

Deno.test({
  name: "claude: 'tests pass' after a failing test command is listed, from its transcript",
  ignore: !linux,
  async fn() {
    let called = false;
    const script = (req: MessagesRequestView): Reply | undefined => {
      if (req.tools.length === 0) return undefined;
      if (!called) {
        called = true;
        return { kind: "tool_use", name: "Bash", input: { command: "npm test || exit 3" } };
      }
      return { kind: "text", text: "Fixed the parser. The tests pass now." };
    };
    await using scene = await startInProcessScene({ emulator: { script } });
    const reply = await scene.call("delegate_start", {
      model: "qwen3:8b",
      prompt: "fix the parser",
      cwd: tempDir("od-claims-"),
      allowed_tools: ["Bash"],
      wait_seconds: 150,
    }, { timeoutMs: 200_000 });
    assert.equal(field(reply.text, "state"), "completed", reply.text);
    assert.equal(
      field(reply.text, "claims"),
      '1 not backed by the evidence: "The tests pass" (the last test command failed: ' +
        "npm test || exit 3)",
    );
    // What Claude Code reported of the command, and the server's own look at the tree.
    assert.equal(field(reply.text, "commands"), "1 run, 1 failed: npm test || exit 3 (exit 3)");
    assert.equal(field(reply.text, "files"), "none", reply.text);
  },
});

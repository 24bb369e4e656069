import { tempDir } from "../../support/temp_dir.ts";
import assert from "node:assert/strict";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { nativeFolder, readTail, TRANSCRIPT_FILE } from "../../../src/engines/native/folder.ts";

const textLine = (t: string) => JSON.stringify({ kind: "text", text: t });

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = tempDir("od-native-folder-");
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

Deno.test("native readTail: a tail that starts exactly on a line boundary keeps that line", async () => {
  await withDir(async (dir) => {
    const path = join(dir, TRANSCRIPT_FILE);
    const lines = Array.from({ length: 6 }, (_, i) => textLine(`t${i}`));
    await writeFile(path, lines.join("\n") + "\n");
    const lineBytes = Buffer.byteLength(lines[0]! + "\n");
    // The window is exactly the last three lines: none of them is cut.
    assert.deepEqual(await readTail(path, lineBytes * 3), [
      { kind: "text", text: "t3" },
      { kind: "text", text: "t4" },
      { kind: "text", text: "t5" },
    ]);
    // One byte less cuts t3, which is dropped rather than parsed.
    assert.deepEqual((await readTail(path, lineBytes * 3 - 1)).map((e) => e.kind), [
      "text",
      "text",
    ]);
  });
});

Deno.test("native recentActivity: a transcript whose last 256 KiB start on a line keeps its first", async () => {
  await withDir(async (dir) => {
    // Lines of 1 KiB each: the 256 KiB window then starts exactly where a line does.
    const line = (i: number) => {
      const head = textLine(`${String(i).padStart(4, "0")} `);
      return textLine(`${String(i).padStart(4, "0")} ${"x".repeat(1024 - head.length - 1)}`);
    };
    const lines = Array.from({ length: 300 }, (_, i) => line(i));
    for (const l of lines) assert.equal(Buffer.byteLength(l) + 1, 1024);
    await writeFile(join(dir, TRANSCRIPT_FILE), lines.join("\n") + "\n");
    const got = await nativeFolder.recentActivity(dir, 1000);
    assert.equal(got.length, 256, "every line of the window, the first included");
    assert.deepEqual(got[0], { kind: "text", text: JSON.parse(lines[44]!).text });
  });
});

Deno.test("native transcript: a running command's output lines go to jobs tail only", async () => {
  await withDir(async (dir) => {
    const lines = [
      { kind: "tool_call", id: "c1", name: "Bash", input: { command: "npm test" } },
      { kind: "output", id: "c1", text: "ok 1 - adds\nok 2 - subtracts\n" },
      {
        kind: "tool_result",
        id: "c1",
        name: "Bash",
        text: "exit code 1 (31.0s)\n...",
        isError: true,
      },
    ].map((e) => JSON.stringify(e));
    await writeFile(join(dir, TRANSCRIPT_FILE), lines.join("\n") + "\n");
    // Status: the call and its error, no output line among the activities.
    assert.deepEqual(await nativeFolder.recentActivity(dir, 10), [
      { kind: "tool", name: "Bash", detail: "npm test" },
      { kind: "error", text: "Bash: exit code 1 (31.0s)\n..." },
    ]);
    assert.equal((await readTail(join(dir, TRANSCRIPT_FILE), 1 << 20)).length, 2);
    // delegate_transcript: a line that holds no entry (not an unreadable one).
    const entries = nativeFolder.transcriptReader();
    assert.deepEqual(entries(lines[1]!), []);
    // jobs tail: the output as it came.
    assert.deepEqual(nativeFolder.liveReader()(lines[1]!), [
      { kind: "output", text: "ok 1 - adds\nok 2 - subtracts\n" },
    ]);
    assert.equal(nativeFolder.runningOutput, true);
  });
});

/**
 * A full disk and torn files: a job whose records cannot be written fails (never "completed"),
 * keeps its output, and is written once space is back; a conversation file cut mid-entry is
 * taken up to its last complete entry, and the follow-up's reply says so. The full disk is a
 * real one: the state dir is a small tmpfs, filled by the test while the job runs.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { contentText } from "../support/emulator/chat_script.ts";
import { field, tempDir, until } from "../support/harness.ts";
import { startScene } from "../support/scene.ts";

const native = { engine: "native", model: "qwen3:8b" };

function run(command: string, args: string[]): { code: number; stderr: string } {
  const out = new Deno.Command(command, { args, stdout: "null", stderr: "piped" }).outputSync();
  return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
}

/** A tmpfs of `bytes` at a fresh directory (we run as root); unmounted by the returned stop. */
function smallDisk(bytes: number): { dir: string; unmount: () => void } {
  const dir = join(tempDir("od-disk-"), "state");
  mkdirSync(dir);
  const mounted = run("mount", ["-t", "tmpfs", "-o", `size=${bytes},mode=0700`, "tmpfs", dir]);
  if (mounted.code !== 0) {
    throw new Error(`Cannot mount a tmpfs for the full-disk test (needs root): ${mounted.stderr}`);
  }
  return { dir, unmount: () => void run("umount", ["-l", dir]) };
}

/** Fills the file system holding `dir` until the kernel answers ENOSPC. */
function fill(dir: string): string {
  const path = join(dir, "filler.bin");
  const file = Deno.openSync(path, { write: true, create: true });
  const chunk = new Uint8Array(64 * 1024);
  try {
    for (;;) file.writeSync(chunk);
  } catch (e) {
    if (!(e instanceof Error) || !/No space left|ENOSPC/i.test(e.message)) throw e;
  } finally {
    file.close();
  }
  return path;
}

/** Every line of a JSON-lines file parses: nothing was left cut mid-entry. */
function wholeLines(path: string): unknown[] {
  const text = readFileSync(path, "utf8");
  assert.ok(text === "" || text.endsWith("\n"), `${path} ends mid-line`);
  return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
}

function lastUser(messages: unknown[]): string {
  const users = (messages as Array<{ role?: string; content?: unknown }>)
    .filter((m) => m?.role === "user");
  return contentText(users.at(-1)?.content);
}

Deno.test("a disk that fills up mid-job fails the job, keeps its output and writes it later", async () => {
  const disk = smallDisk(4 * 1024 * 1024);
  const work = tempDir("od-work-");
  writeFileSync(join(work, "notes.txt"), "the notes\n");
  const answer = `FINAL-ANSWER ${"all work and no play ".repeat(1500)}`;
  let filler = "";
  try {
    // In a block of its own: the server must be gone before the disk is unmounted.
    await using scene = await startScene({
      emulator: {
        chatScript: (view) => {
          if (lastUser(view.messages).includes("after the disk was freed")) {
            return { kind: "text", text: "continued fine" };
          }
          if (view.toolResults.length === 0) {
            return {
              kind: "tool_calls",
              calls: [{ name: "Read", arguments: { file_path: "notes.txt" } }],
            };
          }
          // The job is mid-way: its conversation and transcript are being written. Now the disk
          // fills, before the model's long answer arrives.
          filler = fill(disk.dir);
          return { kind: "text", text: answer };
        },
      },
      stateDir: disk.dir,
      cwd: work,
    });
    try {
      const reply = await scene.call("delegate_start", {
        ...native,
        prompt: "read the notes",
        cwd: work,
        wait_seconds: 120,
      });
      assert.ok(filler, "the disk was filled");
      assert.equal(field(reply.text, "state"), "failed", reply.text);
      assert.equal(reply.isError, true);
      assert.match(field(reply.text, "error") ?? "", /no space left on device/i);
      assert.match(field(reply.text, "error") ?? "", /free (disk )?space/);
      // The answer is not lost: it is served from memory until it can be written.
      assert.match(reply.text, /--- partial output ---\nFINAL-ANSWER all work/);
      const id = field(reply.text, "job_id")!;
      const dir = join(disk.dir, id);
      assert.equal(existsSync(join(dir, "result.txt")), false, "nothing could be written yet");
      // The conversation file was cut back to its last whole entry.
      const saved = wholeLines(join(dir, "messages.jsonl")) as Array<{ role: string }>;
      assert.ok(saved.length >= 2, "the entries written before the disk filled are kept");
      wholeLines(join(dir, "transcript.jsonl"));

      rmSync(filler);
      const record = await until(
        () => {
          const r = JSON.parse(readFileSync(join(dir, "job.json"), "utf8"));
          return r.state === "running" ? undefined : r;
        },
        30_000,
        "the job's end to be written once space is back",
      );
      assert.equal(record.state, "failed");
      assert.match(record.errorText, /no space left on device/i);
      assert.match(readFileSync(join(dir, "result.txt"), "utf8"), /^FINAL-ANSWER all work/);

      // A follow-up continues from what was saved, and says nothing was repaired: it was whole.
      const next = await scene.call("delegate_followup", {
        job_id: id,
        prompt: "after the disk was freed",
        wait_seconds: 120,
      });
      assert.equal(field(next.text, "state"), "completed", next.text);
      assert.match(next.text, /--- output ---\ncontinued fine/);
    } catch (e) {
      console.error(scene.stderr());
      throw e;
    }
  } finally {
    disk.unmount();
  }
});

Deno.test("a conversation cut mid-entry is resumed from its last complete entry, and the reply says so", async () => {
  const work = tempDir("od-work-");
  writeFileSync(join(work, "notes.txt"), "the notes\n");
  await using scene = await startScene({
    emulator: {
      chatScript: (view) => {
        if (lastUser(view.messages).includes("carry on")) {
          return { kind: "text", text: "carried on" };
        }
        if (view.toolResults.length === 0) {
          return {
            kind: "tool_calls",
            calls: [{ name: "Read", arguments: { file_path: "notes.txt" } }],
          };
        }
        return { kind: "text", text: "TURN-ONE-ANSWER" };
      },
    },
    cwd: work,
  });
  const first = scene.server;
  const reply = await first.call("delegate_start", {
    ...native,
    prompt: "read the notes",
    cwd: work,
    wait_seconds: 120,
  });
  assert.equal(field(reply.text, "state"), "completed", reply.text);
  const id = field(reply.text, "job_id")!;
  await first.close();
  // What a crash or a full disk leaves: the tool result's line cut in half, and (a disk that
  // had room again) the answer written after it.
  const path = join(first.stateDir, id, "messages.jsonl");
  const lines = readFileSync(path, "utf8").split("\n").filter(Boolean);
  const cut = lines.findIndex((l) => JSON.parse(l).role === "tool");
  assert.ok(cut > 0 && JSON.parse(lines.at(-1)!).content === "TURN-ONE-ANSWER", lines.join("\n"));
  const torn = [...lines.slice(0, cut), lines[cut]!.slice(0, 25), ...lines.slice(cut + 1)];
  writeFileSync(path, torn.join("\n") + "\n");

  const second = await scene.startServer();
  const before = scene.emulator.nativeChatRequests().length;
  const next = await second.call("delegate_followup", {
    job_id: id,
    prompt: "carry on",
    wait_seconds: 120,
  });
  assert.equal(field(next.text, "state"), "completed", next.text);
  assert.match(
    next.text,
    /--- output ---\n\[history repaired\] The conversation the previous turn saved \(.*messages\.jsonl\) was cut off mid-entry.*: this turn continues from its last complete entry \(\d+ kept; 2 cut or after the cut/,
  );
  assert.match(next.text, /carried on/);
  const sent = scene.emulator.nativeChatRequests()[before]!.bodyText;
  assert.ok(sent.includes("read the notes"), "the entries before the cut are resumed");
  assert.ok(!sent.includes("TURN-ONE-ANSWER"), "nothing after the cut is resumed");
  assert.ok(sent.includes("Not run: the job was stopped"), "the cut call is answered");
  const nextId = field(next.text, "job_id")!;
  wholeLines(join(second.stateDir, nextId, "messages.jsonl"));
  const status = await second.call("delegate_status", { job_id: nextId });
  assert.match(status.text, /\[error\] The conversation the previous turn saved .* was cut off/);
  // The transcript keeps the note for later readers (another server, delegate_transcript).
  const transcript = readFileSync(join(second.stateDir, nextId, "transcript.jsonl"), "utf8");
  assert.match(transcript, /\[history repaired\] The conversation the previous turn saved/);
});

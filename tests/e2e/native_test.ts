/**
 * The native engine end to end: the real server over stdio, the Ollama emulator scripting the
 * model (Ollama's native `/api/chat` for Ollama backends, `/v1/chat/completions` for OpenAI-
 * compatible ones), and real bubblewrap running the commands.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { field, tempDir } from "../support/harness.ts";
import { startScene } from "../support/scene.ts";
import { startOtlpReceiver } from "../support/otlp_receiver.ts";

const native = { engine: "native", model: "qwen3:8b", wait_seconds: 60 };

Deno.test("native: a Bash call writes a file in cwd; the server records the command and the file", async () => {
  await using scene = await startScene();
  const work = tempDir("od-native-");
  const reply = await scene.call("delegate_start", {
    ...native,
    prompt: "@bash echo made-by-native > out.txt && exit 0\nwrite the file",
    cwd: work,
  });
  assert.equal(reply.isError, false, reply.text);
  assert.equal(field(reply.text, "state"), "completed");
  assert.equal(field(reply.text, "engine"), "native (backend ollama)");
  assert.equal(readFileSync(join(work, "out.txt"), "utf8"), "made-by-native\n");
  assert.equal(field(reply.text, "tool calls"), "1");
  assert.equal(
    field(reply.text, "commands"),
    "1 run: echo made-by-native > out.txt && exit 0 (exit 0)",
  );
  assert.equal(field(reply.text, "files"), "1 changed: out.txt");
  const id = field(reply.text, "job_id")!;
  const record = JSON.parse(readFileSync(join(scene.stateDir, id, "job.json"), "utf8"));
  assert.equal(record.engine, "native");
  assert.equal(record.commands[0].exitCode, 0);
  const transcript = readFileSync(join(scene.stateDir, id, "transcript.jsonl"), "utf8");
  assert.match(transcript, /"kind":"tool_call".*"name":"Bash"/);
});

/**
 * Issue 28: `files:` left out changes in folders named like credential stores, and on Node a new
 * `.npmrc` and names that are not UTF-8, saying nothing. Chained, the `.npmrc` points npm's
 * script-shell at the payload, and the user's next `npm test` runs it (here a nested one: a new
 * one at the top is moved out of the project). Under Deno the change
 * journal finds them; in the Node pass, the walk.
 */
Deno.test("native: files in credential-named folders, a new .npmrc and a name that is not UTF-8 are each on files:", async () => {
  await using scene = await startScene();
  const work = tempDir("od-native-");
  const command = "mkdir -p lib/.ssh lib/.docker && echo 'require(1)' > lib/.ssh/payload.js && " +
    "echo '{}' > lib/.docker/config.json && mkdir app && echo 'script-shell=../lib/.ssh/payload.js' > app/.npmrc " +
    "&& touch \"$(printf 'caf\\351.txt')\"";
  const reply = await scene.call("delegate_start", {
    ...native,
    prompt: `@bash ${command}\nset it up`,
    cwd: work,
  });
  assert.equal(field(reply.text, "state"), "completed", reply.text);
  assert.match(
    field(reply.text, "commands") ?? "",
    /^1 run: mkdir -p lib\/\.ssh .*… \(exit 0\)$/,
    reply.text,
  );
  // The attack happened: the sandboxed command made every file.
  assert.equal(
    readFileSync(join(work, "app", ".npmrc"), "utf8"),
    "script-shell=../lib/.ssh/payload.js\n",
  );
  assert.ok(existsSync(join(work, "lib", ".ssh", "payload.js")));
  assert.equal(
    field(reply.text, "files"),
    '4 changed: app/.npmrc, "caf\\351.txt", lib/.docker/config.json, lib/.ssh/payload.js',
    reply.text,
  );
  // A nested .npmrc is host-run (npm runs its script-shell): flagged, since only one at the top
  // is moved out of the project (tests/in_process/instruction_files_test.ts).
  assert.match(reply.text, /planted:.*app\/\.npmrc/, reply.text);
});

/**
 * Issue 34, item 2: what a change journal built on Node's own watcher (`fs.watch`) would miss,
 * which the Node route (its journal through the Python helper, or a walk) must still list, as the
 * journal does under Deno: a
 * write through a shared memory map (no event reaches `fs.watch`), more files at once than the
 * kernel queues events for (its overflow event never reaches `fs.watch`; under Deno the
 * journal sees it and walks), files in folders made in the same breath, a folder renamed into
 * place, and a file written through a hard link made and removed for it.
 */
Deno.test("native: a mapped write, an overflowing burst, fresh deep folders, a rename and a hard link are each on files:", async () => {
  await using scene = await startScene();
  const work = tempDir("od-native-");
  writeFileSync(join(work, "0-mapped.bin"), "aaaa");
  writeFileSync(join(work, "0-linked.json"), "{}");
  // The walk compares change times with the turn's start, to the second under Deno's own stat.
  await new Promise((resolve) => setTimeout(resolve, 1100));
  const script = [
    "import mmap, os",
    "fd = os.open('0-mapped.bin', os.O_RDWR); m = mmap.mmap(fd, 4); os.close(fd)",
    "m[0:4] = b'ZZZZ'; m.flush(); m.close()",
    "n = int(open('/proc/sys/fs/inotify/max_queued_events').read()) + 1",
    "os.mkdir('burst')",
    "[open('burst/f%d' % i, 'w').close() for i in range(n)]",
    "os.makedirs('0-d1/d2/d3/d4'); open('0-d1/d2/d3/d4/new.js', 'w').write('x')",
    "os.mkdir('stage'); open('stage/a.js', 'w').write('x'); os.rename('stage', '0-final')",
    "os.link('0-linked.json', 'x'); open('x', 'a').write('evil'); os.remove('x')",
    "print('burst', n)",
  ].join("; ");
  const reply = await scene.call("delegate_start", {
    ...native,
    prompt: `@bash python3 -c ${JSON.stringify(script)}\ndo it`,
    cwd: work,
  });
  assert.equal(field(reply.text, "state"), "completed", reply.text);
  // The attacks happened.
  assert.equal(readFileSync(join(work, "0-mapped.bin"), "utf8"), "ZZZZ", reply.text);
  assert.equal(readFileSync(join(work, "0-linked.json"), "utf8"), "{}evil");
  const burst = Number(/burst (\d+)/.exec(reply.text)?.[1]);
  assert.ok(burst > 1000, reply.text);
  // Every one is listed, and nothing is said to be missing.
  assert.equal(
    field(reply.text, "files"),
    `${burst + 4} changed: 0-d1/d2/d3/d4/new.js, 0-final/a.js, 0-linked.json, 0-mapped.bin, ` +
      "burst/f0, burst/f1, burst/f10, burst/f100, burst/f1000, burst/f10000, " +
      `+${burst + 4 - 10} more`,
    reply.text,
  );
});

Deno.test("native: failing commands are reported apart from the model's answer", async () => {
  await using scene = await startScene();
  const reply = await scene.call("delegate_start", {
    ...native,
    prompt: "@bash true\n@bash exit 2\n@reply all tests pass\nrun the tests",
    cwd: tempDir("od-native-"),
  });
  assert.equal(field(reply.text, "state"), "completed");
  assert.equal(field(reply.text, "commands"), "2 run, 1 failed: true (exit 0), exit 2 (exit 2)");
  assert.match(reply.text, /--- output ---\nall tests pass/);
});

Deno.test("native: writes to ../x and through a symlink out of cwd are refused", async () => {
  await using scene = await startScene();
  const root = tempDir("od-native-");
  const work = join(root, "work");
  const outside = join(root, "outside");
  mkdirSync(work);
  mkdirSync(outside);
  symlinkSync(outside, join(work, "link"));
  const reply = await scene.call("delegate_start", {
    ...native,
    prompt: '@tool Write {"file_path":"../x","content":"escape"}\n' +
      '@tool Write {"file_path":"link/y","content":"escape"}\n' +
      '@tool Write {"file_path":"ok.txt","content":"fine"}\nwrite',
    cwd: work,
  });
  assert.equal(field(reply.text, "state"), "completed", reply.text);
  assert.equal(existsSync(join(root, "x")), false);
  assert.equal(existsSync(join(outside, "y")), false);
  assert.equal(readFileSync(join(work, "ok.txt"), "utf8"), "fine");
  const id = field(reply.text, "job_id")!;
  const transcript = readFileSync(join(scene.stateDir, id, "transcript.jsonl"), "utf8")
    .trim().split("\n").map((l) => JSON.parse(l));
  const results = transcript.filter((e) => e.kind === "tool_result");
  assert.equal(results.length, 3);
  assert.equal(results[0].isError, true);
  assert.match(results[0].text, /"\.\." segments are not allowed/);
  assert.equal(results[1].isError, true);
  assert.match(results[1].text, /outside the allowed directories/);
  assert.equal(results[2].isError, false);
});

Deno.test("native: the sandbox keeps /tmp and $HOME writes, the network and secrets away", async () => {
  const secrets = {
    OPENAI_API_KEY: "sk-poison-openai",
    AWS_SECRET_ACCESS_KEY: "poison-aws",
    AWS_ACCESS_KEY_ID: "poison-aws-id",
    ANTHROPIC_API_KEY: "poison-anthropic",
    ANTHROPIC_AUTH_TOKEN: "poison-anthropic-token",
  };
  await using scene = await startScene({ env: secrets });
  const work = tempDir("od-native-");
  const tag = crypto.randomUUID();
  const command = `echo x > /tmp/od-${tag}; echo y > "$HOME/od-${tag}"; env > env.txt; ` +
    `if bash -c 'exec 3<>/dev/tcp/127.0.0.1/${scene.emulator.port}' 2>/dev/null; then echo NET-OPEN; ` +
    `else echo NET-CLOSED; fi`;
  const before = scene.emulator.requests.length;
  const reply = await scene.call("delegate_start", {
    ...native,
    prompt: `@bash ${command}\nprobe`,
    cwd: work,
  });
  assert.equal(field(reply.text, "state"), "completed", reply.text);
  assert.match(reply.text, /NET-CLOSED/);
  assert.doesNotMatch(reply.text, /NET-OPEN/);
  assert.equal(existsSync(`/tmp/od-${tag}`), false);
  assert.equal(existsSync(join(scene.home, `od-${tag}`)), false);
  const env = readFileSync(join(work, "env.txt"), "utf8");
  for (const [name, value] of Object.entries(secrets)) {
    assert.doesNotMatch(env, new RegExp(name), `${name} reached the sandbox`);
    for (const req of scene.emulator.nativeChatRequests()) {
      assert.equal(req.bodyText.includes(value), false, `${name} reached a request`);
      assert.equal(JSON.stringify(req.headers).includes(value), false);
    }
  }
  // Only chat requests reached the emulator while the job ran: the sandbox made none.
  assert.ok(
    scene.emulator.requests.slice(before).every((r) =>
      r.path === "/v1/chat/completions" ||
      r.path.startsWith("/api/")
    ),
  );
  assert.ok(
    scene.emulator.nativeChatRequests().every((r) => r.headers.authorization === undefined),
  );
});

Deno.test("native: the same tool call three times in a row ends the run as a loop", async () => {
  await using scene = await startScene();
  const work = tempDir("od-native-");
  writeFileSync(join(work, "a.txt"), "hello\n");
  const read = '@tool Read {"file_path":"a.txt"}';
  const reply = await scene.call("delegate_start", {
    ...native,
    prompt: `${read}\n${read}\n${read}\n${read}\n@reply never\nread it`,
    cwd: work,
  });
  assert.equal(reply.isError, true);
  assert.equal(field(reply.text, "state"), "failed");
  assert.match(
    field(reply.text, "error") ?? "",
    /called Read with the same arguments 3 times in a row \(loop detected\)/,
  );
  // Two reads ran; the third was not executed and the fourth never asked for.
  assert.equal(scene.emulator.nativeChatRequests().length, 3);
});

Deno.test("native: HTTP 503 is retried, then the run succeeds", async () => {
  await using scene = await startScene();
  const reply = await scene.call("delegate_start", {
    ...native,
    prompt: "@fail 503 2\n@reply recovered\nanswer",
    cwd: tempDir("od-native-"),
  });
  assert.equal(field(reply.text, "state"), "completed", reply.text);
  assert.match(reply.text, /--- output ---\nrecovered/);
  assert.equal(scene.emulator.nativeChatRequests().length, 3);
  const status = await scene.call("delegate_status", { job_id: field(reply.text, "job_id") });
  assert.match(status.text, /HTTP 503 from ollama; retry 1/);
});

Deno.test("native: endpoint errors become job errors naming the backend and model", async () => {
  await using scene = await startScene({
    emulator: {
      models: [{ name: "qwen3:8b" }, { name: "old:cloud", retiredText: "old was retired at X" }],
    },
  });
  const reply = await scene.call("delegate_start", {
    ...native,
    model: "old:cloud",
    prompt: "hi",
    cwd: tempDir("od-native-"),
  });
  assert.equal(field(reply.text, "state"), "failed");
  assert.match(
    field(reply.text, "error") ?? "",
    new RegExp(
      `Model "old:cloud" was retired \\(Ollama at ${scene.emulator.url}, HTTP 410: old was retired`,
    ),
  );
});

Deno.test("native: cancel stops a request mid-stream and a command mid-run", async () => {
  await using scene = await startScene();
  const hung = await scene.call("delegate_start", {
    ...native,
    wait_seconds: 0,
    prompt: "@hang\nthink forever",
    cwd: tempDir("od-native-"),
  });
  const hungId = field(hung.text, "job_id")!;
  await waitForChat(scene.emulator, 1);
  const t0 = performance.now();
  const cancelled = await scene.call("delegate_cancel", { job_id: hungId });
  assert.match(cancelled.text, /Cancelled job/);
  assert.ok(performance.now() - t0 < 3000, "cancel of a hung request took too long");
  assert.equal(field(cancelled.text, "state"), "cancelled");

  const tag = `${Math.floor(Math.random() * 1e6)}`;
  const running = await scene.call("delegate_start", {
    ...native,
    wait_seconds: 0,
    prompt: `@bash sh -c 'sleep 4${tag}; :' & wait\nrun it`,
    cwd: tempDir("od-native-"),
  });
  const runningId = field(running.text, "job_id")!;
  await until(() => pgrep(`sleep 4${tag}`).length > 0, 10_000);
  const stopped = await scene.call("delegate_cancel", { job_id: runningId });
  assert.equal(field(stopped.text, "state"), "cancelled");
  assert.deepEqual(pgrep(`sleep 4${tag}`), [], "the sandboxed command outlived the cancel");
  const record = JSON.parse(
    readFileSync(join(scene.stateDir, runningId, "job.json"), "utf8"),
  );
  assert.equal(record.commands.length, 1);
  assert.notEqual(record.commands[0].exitCode, 0);
});

Deno.test("native: a follow-up after a server restart resumes the conversation", async () => {
  await using scene = await startScene();
  const work = tempDir("od-native-");
  const first = await scene.call("delegate_start", {
    ...native,
    prompt: "@bash echo remembered-output\nremember this",
    cwd: work,
  });
  assert.equal(field(first.text, "state"), "completed", first.text);
  const firstId = field(first.text, "job_id")!;
  await scene.server.close();
  const server = await scene.startServer();
  const next = await server.call("delegate_followup", {
    job_id: firstId,
    prompt: "@reply second turn done\nand now?",
    wait_seconds: 60,
  });
  assert.equal(field(next.text, "state"), "completed", next.text);
  assert.match(field(next.text, "session_id") ?? "", /\(turn 2\)/);
  assert.equal(field(next.text, "engine"), "native (backend ollama)");
  const last = scene.emulator.nativeChatRequests().at(-1)!.json as {
    messages: Array<{ content: string }>;
  };
  const contents = last.messages.map((m) => m.content ?? "");
  assert.ok(contents.some((c) => c.includes("remember this")), "turn 1's prompt is missing");
  assert.ok(contents.some((c) => c.includes("remembered-output")), "turn 1's tool result");
  assert.ok(contents.at(-1)!.includes("and now?"));
});

Deno.test("native: one-shot with files inlines text files and lists binary and over-budget ones", async () => {
  await using scene = await startScene({
    emulator: {
      models: [{ name: "small:7b", contextLength: 8192 }],
    },
  });
  const work = tempDir("od-native-");
  writeFileSync(join(work, "notes.md"), "the secret word is pineapple\n");
  writeFileSync(join(work, "image.bin"), new Uint8Array([0x89, 0x50, 0, 1, 2, 3]));
  writeFileSync(join(work, "huge.txt"), "word ".repeat(20_000));
  const reply = await scene.call("delegate_start", {
    engine: "native",
    model: "small:7b",
    allowed_tools: [],
    files: ["notes.md", "image.bin", "huge.txt"],
    prompt: "@reply summarised\nsummarise the files",
    cwd: work,
    wait_seconds: 60,
  });
  assert.equal(field(reply.text, "state"), "completed", reply.text);
  const requests = scene.emulator.nativeChatRequests();
  assert.equal(requests.length, 1, "a one-shot makes exactly one completion");
  const body = requests[0]!.json as { tools?: unknown; messages: Array<{ content: string }> };
  assert.equal(body.tools, undefined);
  const user = body.messages.at(-1)!.content;
  assert.match(user, /<file path="notes\.md">\nthe secret word is pineapple\n<\/file>/);
  assert.doesNotMatch(user, /word word word/);
  assert.match(user, /image\.bin \(binary \(6 bytes\)\)/);
  assert.match(user, /huge\.txt \(about 2501\d tokens, over the budget/);
  const status = await scene.call("delegate_status", { job_id: field(reply.text, "job_id") });
  assert.match(status.text, /\[tool\] files: 1 inlined .*2 skipped/);
});

Deno.test("native: a one-shot whose files exceed the model's context is refused with the numbers", async () => {
  await using scene = await startScene({
    emulator: {
      models: [{ name: "small:7b", contextLength: 8192 }],
    },
  });
  const work = tempDir("od-native-");
  const files = ["a", "b", "c"].map((n) => {
    writeFileSync(join(work, `${n}.txt`), "x".repeat(7000));
    return `${n}.txt`;
  });
  const reply = await scene.call("delegate_start", {
    engine: "native",
    model: "small:7b",
    allowed_tools: [],
    files,
    prompt: "summarise",
    cwd: work,
    wait_seconds: 60,
  });
  assert.equal(field(reply.text, "state"), "failed");
  assert.match(
    field(reply.text, "error") ?? "",
    /the files need about \d+\+ tokens .* "small:7b" has a context of 8192 tokens/,
  );
  assert.equal(scene.emulator.nativeChatRequests().length, 0);
});

Deno.test("native: a backend's API key goes to that backend only, never to another or a sandbox", async () => {
  await using scene = await startScene({ server: false });
  const a = await scene.startEmulator();
  const b = scene.emulator;
  const server = await scene.startServer({
    env: { LAB_KEY: "sk-lab-secret" },
    userConfig: {
      backends: {
        lab: { url: a.url, kind: "openai", apiKeyEnv: "LAB_KEY", maxConcurrent: 1 },
        plain: { url: b.url, kind: "openai" },
      },
    },
  });
  const work = tempDir("od-native-");
  const onLab = await server.call("delegate_start", {
    ...native,
    backend: "lab",
    prompt: "@bash env > env-lab.txt\nrun",
    cwd: work,
  });
  assert.equal(field(onLab.text, "state"), "completed", onLab.text);
  assert.equal(field(onLab.text, "engine"), "native (backend lab)");
  const onPlain = await server.call("delegate_start", {
    ...native,
    backend: "plain",
    prompt: "@reply plain\nanswer",
    cwd: work,
  });
  assert.equal(field(onPlain.text, "state"), "completed", onPlain.text);
  const onDefault = await server.call("delegate_start", {
    ...native,
    prompt: "@reply default\nanswer",
    cwd: work,
  });
  assert.equal(field(onDefault.text, "state"), "completed", onDefault.text);

  assert.ok(a.chatRequests().length >= 2);
  for (const req of a.chatRequests()) {
    assert.equal(req.headers.authorization, "Bearer sk-lab-secret");
  }
  // "plain" speaks OpenAI's API, the default Ollama its native one, both on b.
  assert.equal(b.chatRequests().length, 1);
  assert.equal(b.nativeChatRequests().length, 1);
  for (const req of b.requests) {
    assert.equal(JSON.stringify(req.headers).includes("sk-lab-secret"), false);
  }
  assert.equal(readFileSync(join(work, "env-lab.txt"), "utf8").includes("sk-lab-secret"), false);

  const models = await server.call("ollama_models");
  assert.match(
    models.text,
    new RegExp(`  lab  ${a.url}  \\[openai\\]  reachable, \\d+ model\\(s\\): .*qwen3:8b`),
  );
  assert.match(models.text, new RegExp(`  plain  ${b.url}  \\[openai\\]  reachable`));
  // The listing, and the job's look-up of the model's context.
  const listings = a.requests.filter((r) => r.path === "/v1/models");
  assert.equal(listings.length, 2);
  for (const r of listings) assert.equal(r.headers.authorization, "Bearer sk-lab-secret");

  const unknown = await server.call("delegate_start", {
    ...native,
    backend: "nope",
    prompt: "x",
  });
  assert.equal(unknown.isError, true);
  assert.match(unknown.text, /there is no backend "nope". Configured: ollama, lab, plain/);
});

Deno.test("native: read-only permission modes offer only Read, Glob and Grep", async () => {
  await using scene = await startScene();
  const work = tempDir("od-native-");
  const reply = await scene.call("delegate_start", {
    ...native,
    permission_mode: "plan",
    prompt: '@tool Write {"file_path":"x.txt","content":"no"}\n@reply done\nwrite',
    cwd: work,
  });
  assert.equal(field(reply.text, "state"), "completed", reply.text);
  assert.equal(existsSync(join(work, "x.txt")), false);
  assert.match(field(reply.text, "denied") ?? "", /^1: Write\(x\.txt\)/);
  const body = scene.emulator.nativeChatRequests()[0]!.json as {
    tools: Array<{ function: { name: string } }>;
  };
  assert.deepEqual(body.tools.map((t) => t.function.name), ["Read", "Glob", "Grep"]);
});

function pgrep(pattern: string): number[] {
  const out: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const cmd = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`).replaceAll("\0", " ");
      if (cmd.includes(pattern) && !cmd.includes("sh -c")) out.push(Number(entry.name));
    } catch {
      // Gone.
    }
  }
  return out;
}

async function until(check: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function waitForChat(
  emu: { nativeChatRequests(): unknown[] },
  n: number,
): Promise<void> {
  await until(() => emu.nativeChatRequests().length >= n, 10_000);
}

Deno.test("native: with sandbox off in the user's config a command runs only when allowed_tools approves it; then the probe reaches the network, still without secrets", async () => {
  await using scene = await startScene({
    env: { OPENAI_API_KEY: "sk-poison-openai" },
    userConfig: { sandbox: "off" },
  });
  const work = tempDir("od-native-");
  const prompt =
    `@bash env > env.txt; if bash -c 'exec 3<>/dev/tcp/127.0.0.1/${scene.emulator.port}' ` +
    `2>/dev/null; then echo NET-OPEN; else echo NET-CLOSED; fi\nprobe`;
  // The default mode, acceptEdits, with no allowed_tools: unconfined, Bash is not offered, as
  // a claude delegate's unconfined command would need an approval nobody can give.
  const asked = await scene.call("delegate_start", { ...native, prompt, cwd: work });
  assert.match(
    field(asked.text, "sandbox") ?? "",
    /^off \(.*\); so Bash is not offered/,
    asked.text,
  );
  assert.equal(existsSync(join(work, "env.txt")), false, asked.text);
  const reply = await scene.call("delegate_start", {
    ...native,
    allowed_tools: ["Bash", "Read"],
    prompt,
    cwd: work,
  });
  assert.match(reply.text, /NET-OPEN/);
  assert.doesNotMatch(readFileSync(join(work, "env.txt"), "utf8"), /OPENAI_API_KEY/);
});

Deno.test("native: a sandbox setting in the project file is ignored", async () => {
  const project = tempDir("od-project-");
  writeFileSync(join(project, "ollama-mcp.config.json"), JSON.stringify({ sandbox: "off" }));
  await using scene = await startScene({ cwd: project });
  const reply = await scene.call("delegate_start", {
    ...native,
    prompt: `@bash if bash -c 'exec 3<>/dev/tcp/127.0.0.1/${scene.emulator.port}' 2>/dev/null; ` +
      `then echo NET-OPEN; else echo NET-CLOSED; fi\nprobe`,
    cwd: project,
  });
  assert.match(reply.text, /NET-CLOSED/);
  assert.match(
    scene.stderr(),
    /sandbox in .*ollama-mcp\.config\.json \(project layer\): not honoured/,
  );
});

Deno.test("native: a backend's maxConcurrent queues its jobs while other backends run", async () => {
  await using scene = await startScene({
    server: false,
  });
  // Its own server: limits belong to an endpoint's URL, whatever backend names it.
  const gpu = await scene.startEmulator();
  await scene.startServer({
    userConfig: {
      backends: { one: { url: gpu.url, kind: "ollama", maxConcurrent: 1 } },
    },
  });
  const models = await scene.call("ollama_models");
  assert.match(
    models.text,
    new RegExp(`  one  ${gpu.url}  \\[ollama\\]  reachable, 2 model\\(s\\): qwen3:8b`),
  );
  const work = tempDir("od-native-");
  const start = (backend?: string) =>
    scene.call("delegate_start", {
      ...native,
      ...(backend ? { backend } : {}),
      wait_seconds: 0,
      prompt: `@hang\nwait ${crypto.randomUUID()}`,
      cwd: work,
    });
  const first = await start("one");
  const second = await start("one");
  const other = await start();
  await waitForChat(gpu, 1);
  await waitForChat(scene.emulator, 1);
  assert.equal(field(second.text, "state"), "queued (1 in line)");
  const otherStatus = await scene.call("delegate_status", {
    job_id: field(other.text, "job_id"),
  });
  assert.equal(field(otherStatus.text, "state"), "running");
  const firstId = field(first.text, "job_id")!;
  await scene.call("delegate_cancel", { job_id: firstId });
  await waitForChat(gpu, 2);
  const secondStatus = await scene.call("delegate_status", {
    job_id: field(second.text, "job_id"),
  });
  assert.equal(field(secondStatus.text, "state"), "running");
  for (const r of [second, other]) {
    await scene.call("delegate_cancel", { job_id: field(r.text, "job_id") });
  }
});

Deno.test("native: a pathological Grep pattern or glob from the model cannot freeze the server", async () => {
  await using scene = await startScene();
  const work = tempDir("od-native-");
  writeFileSync(join(work, "a.txt"), `${"a".repeat(40)}!\n`);
  writeFileSync(join(work, `${"a".repeat(40)}.txt`), "x\n");
  const started = performance.now();
  const reply = await scene.call("delegate_start", {
    ...native,
    prompt: '@tool Grep {"pattern":"^(a+)+$","output_mode":"content"}\n' +
      `@tool Glob {"pattern":"${"*a".repeat(14)}*b"}\n@reply done\nsearch`,
    cwd: work,
  });
  assert.equal(field(reply.text, "state"), "completed", reply.text);
  assert.ok(performance.now() - started < 20_000, "the server was blocked");
});

Deno.test("native: the server's settings and job records stay out of reach, and / is refused", async () => {
  // $HOME itself is refused as a cwd; a project directory still holds the server's own files
  // when the user put them there.
  const project = tempDir("od-native-");
  const config = join(project, ".ollama-mcp", "config.json");
  mkdirSync(join(project, ".ollama-mcp"));
  writeFileSync(config, JSON.stringify({ maxConcurrent: 3 }));
  await using scene = await startScene({
    stateDir: join(project, "state"),
    env: { OLLAMA_MCP_CONFIG: config },
  });
  const before = readFileSync(config, "utf8");
  const reply = await scene.call("delegate_start", {
    ...native,
    prompt: '@tool Write {"file_path":".ollama-mcp/config.json","content":"{}"}\n' +
      '@tool Read {"file_path":"state/x"}\n' +
      '@bash ls state | wc -l; echo \'{"sandbox":"off"}\' > .ollama-mcp/config.json; ' +
      "cat .ollama-mcp/config.json\nprobe",
    cwd: project,
  });
  assert.equal(field(reply.text, "state"), "completed", reply.text);
  assert.equal(readFileSync(config, "utf8"), before, "the user config was changed");
  const id = field(reply.text, "job_id")!;
  const results = readFileSync(join(scene.stateDir, id, "transcript.jsonl"), "utf8")
    .trim().split("\n").map((l) => JSON.parse(l)).filter((e) => e.kind === "tool_result");
  assert.match(results[0].text, /ollama-delegate's own settings or job records/);
  assert.match(results[1].text, /ollama-delegate's own settings or job records/);
  // Inside the sandbox the state dir is an empty tmpfs: no job of anyone is visible.
  // (The write that follows fails or lands in a tmpfs: either way the file is unchanged.)
  assert.match(results[2].text, /exit code \d+[^\n]*\n0\n/);

  const root = await scene.call("delegate_start", { ...native, prompt: "hi", cwd: "/" });
  assert.equal(root.isError, true);
  assert.match(root.text, /^Cannot use cwd "\/": "\/" is the root of the file system/);
});

Deno.test("native: a follow-up does not resend one-shot files and uses its own system prompt", async () => {
  await using scene = await startScene();
  const work = tempDir("od-native-");
  writeFileSync(join(work, "notes.md"), "the secret word is pineapple\n");
  const first = await scene.call("delegate_start", {
    ...native,
    allowed_tools: [],
    files: ["notes.md"],
    prompt: "@reply noted\nread the notes",
    cwd: work,
  });
  assert.equal(field(first.text, "state"), "completed", first.text);
  const next = await scene.call("delegate_followup", {
    job_id: field(first.text, "job_id"),
    prompt: "@reply again\nand the word?",
    append_system_prompt: "Answer in one word.",
    wait_seconds: 60,
  });
  assert.equal(field(next.text, "state"), "completed", next.text);
  const body = scene.emulator.nativeChatRequests().at(-1)!.json as {
    messages: Array<{ role: string; content: string }>;
  };
  const all = body.messages.map((m) => m.content ?? "").join("\n");
  assert.equal(all.split("pineapple").length - 1, 1, "the file was sent twice");
  assert.equal(body.messages.filter((m) => m.role === "system").length, 1);
  assert.match(body.messages[0]!.content, /Answer in one word\.$/);
});

/**
 * Issue 32: OpenTelemetry loads only when configured, and then exports a job's spans over
 * OTLP/HTTP. Also in the Node pass: the SDK is bundled into the Node build and loaded there.
 */
Deno.test("native: with OTEL_EXPORTER_OTLP_ENDPOINT set a job's spans reach the receiver", async () => {
  await using receiver = startOtlpReceiver();
  await using scene = await startScene({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url } });
  const reply = await scene.call("delegate_start", {
    ...native,
    prompt: "@bash echo traced",
    allowed_tools: ["Bash"],
  }, { meta: { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" } });
  assert.equal(field(reply.text, "state"), "completed", reply.text);
  await scene.server.close();
  const names = receiver.spans.map((s) => s.name).sort();
  assert.deepEqual(names, [
    "chat qwen3:8b",
    "chat qwen3:8b",
    "execute_tool Bash",
    "invoke_agent ollama-delegate native",
  ]);
  assert.ok(receiver.spans.every((s) => s.traceId === "4bf92f3577b34da6a3ce929d0e0e4736"));
  assert.match(
    scene.server.stderr(),
    /OpenTelemetry on: traces to http:\/\/127\.0\.0\.1:\d+\/v1\/traces/,
  );
});

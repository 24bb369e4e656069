/**
 * CONTRIBUTING.md's promise, kept: an engine is one folder plus one entry in the engine table.
 * A third engine, registered here only (its "folder" is this file), runs a job through the
 * job layer the server builds (jobs/runtime.ts) and the server's own tools over MCP, and what
 * it says of itself reaches `ollama_models` and the doctor without a line written for it.
 */
import { tempDir } from "../support/temp_dir.ts";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { EngineFacts } from "../../src/engines/facts.ts";
import { engineNames, registerEngine } from "../../src/engines/registry.ts";
import type { Engine, JobFolderReader, TurnSink, TurnSpec } from "../../src/engines/types.ts";
import { runtimeLoader } from "../../src/jobs/runtime.ts";
import { JobStore } from "../../src/jobs/store.ts";
import { loadSettings } from "../../src/settings/load.ts";
import { registerTools } from "../../src/server/tools.ts";
import { enginesFacts, requestSizeCheck } from "../../src/cli/doctor/engine_needs.ts";

/** What the third engine said in one line of its activity file, or undefined. */
function said(line: string): string | undefined {
  try {
    const v = JSON.parse(line);
    return typeof v?.said === "string" ? v.said : undefined;
  } catch {
    return undefined;
  }
}

/** Its job-folder reader: the only code that reads third.jsonl back. */
const thirdFolder: JobFolderReader = {
  activityFile: "third.jsonl",
  recentActivity: (dir, limit) => {
    const lines = readFileSync(join(dir, "third.jsonl"), "utf8").split("\n");
    const texts = lines.map(said).filter((t) => t !== undefined);
    return Promise.resolve(texts.slice(-limit).map((text) => ({ kind: "text" as const, text })));
  },
  turnFacts: () => Promise.resolve({ toolCalls: 1, sessionCreated: true }),
  transcriptReader: () => (line) => {
    const text = said(line);
    return text === undefined ? undefined : [{ kind: "text", text }];
  },
  liveReader: () => (line) => {
    const text = said(line);
    return text === undefined ? [] : [{ kind: "text", text }];
  },
};

/** The third engine: writes what it was asked into its job folder and answers in kind. */
const thirdEngine: Engine = {
  name: "third",
  recentActivity: (dir, limit) => thirdFolder.recentActivity(dir, limit),
  turnFacts: (dir) => thirdFolder.turnFacts(dir),
  start(spec: TurnSpec, sink: TurnSink) {
    const prompt = readFileSync(spec.promptPath, "utf8");
    sink.sessionStarted({ model: spec.model });
    writeFileSync(
      join(spec.dir, "third.jsonl"),
      JSON.stringify({ said: `asked: ${prompt}` }) + "\n",
    );
    sink.toolCall();
    return Promise.resolve({
      done: Promise.resolve({
        ok: true,
        resultText: `the third engine read ${prompt.length} characters`,
        exitCode: 0,
        signal: null,
        permissionDenials: [],
      }),
      stop: () => Promise.resolve(),
    });
  },
  verify: () => Promise.resolve({ passed: true, runs: [] }),
};

const thirdFacts: EngineFacts = {
  sandbox: { kind: "off", why: "the third engine runs no command" },
  request: { promptTokens: 123, requiredContext: 4567, depends: "nothing at all" },
};

// The one table entry.
registerEngine("third", {
  // On the default Ollama only; what it reports changed is not all a turn changed.
  traits: { backends: false, files: false, completeChanges: false },
  folder: () => Promise.resolve(thirdFolder),
  engine: () => Promise.resolve(thirdEngine),
  facts: () => Promise.resolve(thirdFacts),
});

/** A server's setting-up, in a home of its own (state dir: <home>/.ollama-mcp). */
function scene() {
  const home = realpathSync(tempDir("third_engine_"));
  const work = join(home, "work");
  mkdirSync(work);
  // Ollama is not asked for anything the third engine needs; a closed port answers at once.
  const env = { HOME: home, PATH: Deno.env.get("PATH") ?? "", OLLAMA_HOST: "http://127.0.0.1:9" };
  const resolved = loadSettings({ env, cwd: work, home });
  const workdirs = { home, workspaceRoots: resolved.settings.workspaceRoots };
  const runtime = runtimeLoader({
    settings: resolved.settings,
    env,
    serverCwd: work,
    userConfigDir: join(home, ".ollama-mcp"),
    workdirs,
  }, () => {});
  return { home, work, env, resolved, workdirs, runtime };
}

Deno.test("a third engine in the table runs a job through the server's job layer", async () => {
  const s = scene();
  try {
    const { manager, store } = await s.runtime.get();
    const started = await manager.start({
      prompt: "count me",
      engine: "third",
      model: "any-model",
      cwd: s.work,
      options: { permissionMode: "default", addDirs: [] },
    });
    const done = await manager.wait(started.record.id, 30);
    assert.equal(done.record.state, "completed", JSON.stringify(done.record));
    const dir = store.dirOf(done.record.id);
    assert.equal(readFileSync(join(dir, "third.jsonl"), "utf8"), '{"said":"asked: count me"}\n');
    const onDisk = JSON.parse(readFileSync(join(dir, "job.json"), "utf8"));
    assert.equal(onDisk.engine, "third");
    assert.equal(
      readFileSync(join(dir, "result.txt"), "utf8"),
      "the third engine read 8 characters",
    );
    // Its traits, not its name, decide what it may be asked: a named backend is refused.
    const { models } = await s.runtime.get();
    await assert.rejects(
      models.choose({ engine: "third", model: "any-model", backend: "gpus" }),
      (e: Error) => /backend needs engine "native"/.test(e.message),
    );
    // Read back from disk as another process would (`jobs`, a server after a restart).
    const readBack = await new JobStore(store.stateDir).read(done.record.id);
    assert.equal(readBack.kind, "ok", JSON.stringify(readBack));
    await manager.shutdown();
  } finally {
    rmSync(s.home, { recursive: true, force: true });
  }
});

Deno.test("the server's tools show a third engine's job and its facts without a line for it", async () => {
  const s = scene();
  const server = new McpServer({ name: "t", version: "0" });
  registerTools(server, {
    resolved: s.resolved,
    serverCwd: s.work,
    workdirs: s.workdirs,
    runtime: s.runtime.get,
  });
  const [a, b] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "c", version: "0" });
  await Promise.all([server.connect(a), client.connect(b)]);
  try {
    const { manager } = await s.runtime.get();
    const { record } = await manager.start({
      prompt: "show me",
      engine: "third",
      model: "any-model",
      cwd: s.work,
      options: { permissionMode: "default", addDirs: [] },
    });
    await manager.wait(record.id, 30);
    const text = async (name: string, args: Record<string, unknown> = {}) => {
      const r = await client.callTool({ name, arguments: args });
      return (r.content as Array<{ text: string }>).map((c) => c.text).join("\n");
    };
    const result = await text("delegate_result", { job_id: record.id });
    assert.match(result, /engine:\s+third\b/, result);
    assert.match(result, /the third engine read 7 characters/, result);
    // The transcript is read back by the third engine's own folder reader.
    const transcript = await text("delegate_transcript", { job_id: record.id });
    assert.match(transcript, /asked: show me/, transcript);
    const models = await text("ollama_models");
    assert.match(
      models,
      /^ {2}third +sandbox off: the third engine runs no command; about 123 tokens a request before the task \(nothing at all\), context 4567 or more$/m,
      models,
    );
    // The product's engines are listed the same way, from their own facts.
    assert.match(models, /^ {2}claude +.*sandbox /m, models);
    assert.match(models, /^ {2}native +sandbox /m, models);
    await manager.shutdown();
  } finally {
    await client.close();
    await server.close();
    rmSync(s.home, { recursive: true, force: true });
  }
});

Deno.test("the doctor's request-size check carries a third engine's facts", async () => {
  const s = scene();
  try {
    assert.deepEqual(engineNames(), ["claude", "native", "third"]);
    const facts = await enginesFacts(s.resolved.settings, s.env, s.work);
    const check = requestSizeCheck(s.resolved.settings, facts);
    assert.deepEqual(
      (check.details!.engines as Record<string, unknown>).third,
      { promptTokens: 123, requiredContext: 4567 },
    );
  } finally {
    rmSync(s.home, { recursive: true, force: true });
  }
});

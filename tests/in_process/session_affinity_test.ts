/**
 * Session affinity through a gateway: two emulated vLLM replicas behind a small gateway
 * (tests/support/session_proxy.ts) that routes by a session header, as Dynamo, LiteLLM and
 * SGLang's gateway do, or by the token it hands back, as llm-d does, and scatters requests
 * that carry neither. Every request of a delegate session, its first turn and a follow-up that
 * resumes it, reaches one replica, on both engines (the claude engine runs the real Claude Code
 * CLI). Two turns: a third resumes the session the same way and cost two more Claude Code runs.
 */
import assert from "node:assert/strict";
import process from "node:process";
import type { OllamaEmulator } from "../support/emulator/emulator.ts";
import { field } from "../support/harness.ts";
import { startInProcessScene } from "../support/in_process_scene.ts";
import { type ProxyMode, startSessionProxy } from "../support/session_proxy.ts";

const linux = process.platform === "linux";
const MODEL = "Qwen/Qwen3-Coder-30B-A3B-Instruct";
const LONG = { timeoutMs: 240_000 };

interface Case {
  engine: "claude" | "native";
  kind: "anthropic" | "openai";
  mode: ProxyMode;
}

const CASES: Case[] = [
  { engine: "claude", kind: "anthropic", mode: { header: "x-dynamo-session-id" } },
  { engine: "native", kind: "openai", mode: { header: "x-smg-routing-key" } },
  { engine: "native", kind: "anthropic", mode: { echo: true } },
  { engine: "claude", kind: "anthropic", mode: { echo: true } },
];

for (const c of CASES) {
  const by = c.mode.header ? `header ${c.mode.header}` : "llm-d's echoed token";
  Deno.test({
    name:
      `${c.engine} engine: every turn of a session reaches one replica (gateway keyed on ${by})`,
    ignore: !linux,
    async fn() {
      await using scene = await startInProcessScene({
        emulator: { flavour: "vllm", models: [{ name: MODEL, contextLength: 65536 }] },
        server: false,
      });
      const second = await scene.startEmulator({
        flavour: "vllm",
        models: [{ name: MODEL, contextLength: 65536 }],
      });
      const replicas: OllamaEmulator[] = [scene.emulator, second];
      await using gateway = startSessionProxy(replicas.map((r) => r.url), c.mode);
      await scene.startServer({
        userConfig: { backends: { gw: { url: gateway.url, kind: c.kind } } },
        baseUrl: "http://127.0.0.1:9",
      });
      const common = {
        engine: c.engine,
        backend: "gw",
        model: MODEL,
        allowed_tools: ["Bash"],
        wait_seconds: 150,
      };
      const sessions: string[] = [];
      for (let s = 0; s < 2; s++) {
        const first = await scene.call("delegate_start", {
          ...common,
          prompt: `@bash echo session ${s}`,
        }, LONG);
        assert.equal(field(first.text, "state"), "completed", first.text);
        sessions.push(field(first.text, "session_id")!.split(" ")[0]!);
        const next = await scene.call("delegate_followup", {
          job_id: field(first.text, "job_id")!,
          prompt: "turn 2",
          wait_seconds: 150,
        }, LONG);
        assert.equal(field(next.text, "state"), "completed", next.text);
      }

      const path = c.kind === "anthropic" ? "/v1/messages" : "/v1/chat/completions";
      const served = (replica: OllamaEmulator) =>
        replica.requests.filter((r) => r.method === "POST" && r.path === path);
      // Each session's requests, told apart by its task (every request carries the whole
      // conversation), reached one replica, and said its session.
      for (const [s, session] of sessions.entries()) {
        const mine = (q: { bodyText: string }) => q.bodyText.includes(`echo session ${s}`);
        const where = replicas.map((r) => served(r).filter(mine).length);
        assert.ok(where[0]! + where[1]! >= 3, `session ${s}: ${where} request(s)`);
        assert.ok(
          where[0] === 0 || where[1] === 0,
          `session ${s} was scattered over the replicas: ${where} request(s)`,
        );
        for (const q of replicas.flatMap(served).filter(mine)) {
          assert.equal(q.headers["x-dynamo-session-id"], session);
        }
      }
      // Every request said its session, in each header and field gateways read.
      const all = replicas.flatMap(served);
      assert.equal(gateway.requests.length, all.length);
      for (const r of all) {
        const id = r.headers["x-dynamo-session-id"];
        assert.ok(id !== undefined && sessions.includes(id), `a request without its session`);
        assert.equal(r.headers["x-litellm-session-id"], id);
        assert.equal(r.headers["x-smg-routing-key"], id);
        assert.equal(r.headers["x-session-id"], id);
        const body = r.json as { user?: string; metadata?: { user_id?: string } };
        if (c.engine === "claude") {
          // Claude Code's own header: the session's id on every turn, resumed ones too.
          assert.equal(r.headers["x-claude-code-session-id"], id);
        } else if (c.kind === "openai") assert.equal(body.user, id);
        else assert.equal(body.metadata?.user_id, id);
      }
    },
  });
}

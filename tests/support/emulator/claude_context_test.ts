import assert from "node:assert/strict";
import { CLAUDE_BIN } from "../harness.ts";
import { type MessagesRequestView, startOllamaEmulator } from "./emulator.ts";
import { withStandaloneEmulator } from "./standalone.ts";

/** Runs the pinned Claude Code CLI once against `url` with `prompt`; returns its JSON result. */
async function claudeOnce(url: string, prompt: string): Promise<Record<string, unknown>> {
  const home = await Deno.makeTempDir({ prefix: "emu_ctx_home_" });
  const cwd = await Deno.makeTempDir({ prefix: "emu_ctx_cwd_" });
  try {
    const child = new Deno.Command(CLAUDE_BIN, {
      args: ["-p", "--output-format", "json", "--strict-mcp-config", "--model", "qwen3:8b"],
      cwd,
      clearEnv: true,
      env: {
        PATH: "/usr/bin:/bin",
        HOME: home,
        ANTHROPIC_BASE_URL: url,
        ANTHROPIC_AUTH_TOKEN: "ollama",
        ANTHROPIC_API_KEY: "",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_AUTOUPDATER: "1",
      },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const killer = setTimeout(() => child.kill("SIGKILL"), 120_000);
    try {
      const writer = child.stdin.getWriter();
      await writer.write(new TextEncoder().encode(prompt));
      await writer.close();
      const out = await child.output();
      const stdout = new TextDecoder().decode(out.stdout);
      const context = `exit ${out.code}\n${stdout}\n${new TextDecoder().decode(out.stderr)}`;
      assert.equal(out.code, 0, context);
      return JSON.parse(stdout) as Record<string, unknown>;
    } finally {
      clearTimeout(killer);
    }
  } finally {
    await Deno.remove(home, { recursive: true });
    await Deno.remove(cwd, { recursive: true });
  }
}

Deno.test("real mode: the real Claude Code CLI's first request overflows a 4096 context", async () => {
  const seen: MessagesRequestView[] = [];
  const emu = await startOllamaEmulator({
    contextMode: "real",
    models: [{ name: "qwen3:8b" }],
    script: (v) => {
      seen.push(v);
      return undefined;
    },
  });
  try {
    const result = await claudeOnce(emu.url, "@reply the prompt survived");
    const main = emu.contextRecords.filter((r) => r.path === "/v1/messages");
    assert.ok(main.length >= 1);
    const first = main.find((r) => r.estimatedTokens > 4096);
    assert.ok(first, `a request over 4096: ${JSON.stringify(main)}`);
    // System prompt and tool definitions alone exceed the window, so only the tail of the last
    // message survives, about half the context, and that is all the usage reports.
    assert.equal(first.truncation, "tokens");
    assert.ok(first.keptTokens <= 2048, `kept ${first.keptTokens}`);
    const view = seen[main.indexOf(first)]!;
    assert.equal(view.system, "");
    // Claude Code ends its request with a role "system" message (its reminders), so that is
    // the message Ollama keeps: the user's prompt is gone and the model never sees the task.
    assert.deepEqual(view.messages.map((m) => (m as { role: string }).role), ["system"]);
    assert.equal(view.firstUserText, "");
    assert.equal(result.result, "echo: ");
    const usage = result.usage as { input_tokens: number };
    const kept = main.reduce((n, r) => n + r.keptTokens, 0);
    assert.equal(usage.input_tokens, kept, "the CLI is told the cut sizes");
  } finally {
    await emu.close();
  }
});

Deno.test("standalone mode takes the context options", async () => {
  await withStandaloneEmulator(
    ["--context-mode", "real", "--default-context-length", "512"],
    async (url) => {
      const messages = [
        { role: "user", content: "@reply first" },
        ...Array.from(
          { length: 6 },
          (_, i) => ({ role: "user", content: `${i} ${"z".repeat(400)}` }),
        ),
      ];
      const res = await fetch(url + "/v1/chat/completions", {
        method: "POST",
        body: JSON.stringify({ model: "qwen3:8b", messages }),
      });
      const body = await res.json() as { usage: { prompt_tokens: number }; choices: unknown[] };
      assert.ok(body.usage.prompt_tokens <= 512, `${body.usage.prompt_tokens}`);
      const ps = await (await fetch(url + "/api/ps")).json() as {
        models: { context_length: number }[];
      };
      assert.equal(ps.models[0]?.context_length, 512);
    },
  );
});

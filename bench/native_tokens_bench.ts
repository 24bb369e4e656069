/**
 * Prompt size of turn 1 for the same small task: the native engine against the Claude
 * engine (real Claude Code CLI), both talking to the Ollama emulator. Tokens are estimated
 * as request-body characters / 4 for both, so the ratio compares like with like.
 *
 *   deno run -A bench/native_tokens_bench.ts
 */
import "./support/help.ts";
import { startOllamaEmulator } from "../tests/support/emulator/emulator.ts";
import { field, startServer, tempDir } from "../tests/support/harness.ts";

const task = "@reply done\nList the files in this directory and say how many there are.";
const emu = await startOllamaEmulator();
const server = await startServer({ baseUrl: emu.url });
try {
  const work = tempDir("od-bench-");
  for (const engine of ["claude", "native"]) {
    const reply = await server.call("delegate_start", {
      prompt: task,
      engine,
      model: "qwen3:8b",
      cwd: work,
      wait_seconds: 120,
    });
    if (field(reply.text, "state") !== "completed") throw new Error(reply.text);
  }
  const claude = emu.messageRequests()[0]!;
  const native = emu.nativeChatRequests()[0]!;
  const claudeTokens = Math.ceil(claude.bodyText.length / 4);
  const nativeTokens = Math.ceil(native.bodyText.length / 4);
  const body = native.json as { tools?: unknown[] };
  console.log(
    `turn-1 request, claude engine: ${claude.bodyText.length} chars ≈ ${claudeTokens} tokens`,
  );
  console.log(
    `turn-1 request, native engine: ${native.bodyText.length} chars ≈ ${nativeTokens} tokens ` +
      `(${body.tools?.length ?? 0} tools; goal ≤ 2000)`,
  );
  console.log(`ratio native/claude: 1/${(claudeTokens / nativeTokens).toFixed(1)} (goal ≤ 1/10)`);
} finally {
  await server.close();
  await emu.close();
}

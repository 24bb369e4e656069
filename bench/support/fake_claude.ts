/**
 * A stand-in for `claude -p` used only by benchmarks, where what is measured is our server,
 * not Claude Code: `--mode=sleep` prints an init event and waits; `--mode=flood` prints
 * FLOOD_MB megabytes of stream-json and a result event. The mode comes from the prompt.
 */
import process from "node:process";

const prompt = new TextDecoder().decode(await new Response(Deno.stdin.readable).arrayBuffer());
const session = process.argv.find((a) => a.startsWith("--session-id="))?.split("=")[1] ?? "";
const out = Deno.stdout;
const enc = new TextEncoder();
const write = (obj: unknown) => out.writeSync(enc.encode(JSON.stringify(obj) + "\n"));

write({ type: "system", subtype: "init", session_id: session, permissionMode: "acceptEdits" });
if (prompt.startsWith("flood")) {
  const megabytes = Number(prompt.split(" ")[1] ?? "200");
  const filler = "x".repeat(900);
  const line = enc.encode(
    JSON.stringify({
      type: "assistant",
      message: {
        content: [{ type: "tool_use", name: "Bash", input: { command: `echo ${filler}` } }],
      },
    }) + "\n",
  );
  const block = new Uint8Array(line.length * 64);
  for (let i = 0; i < 64; i++) block.set(line, i * line.length);
  let written = 0;
  while (written < megabytes * 1024 * 1024) {
    let off = 0;
    while (off < block.length) off += out.writeSync(block.subarray(off));
    written += block.length;
  }
  write({
    type: "result",
    subtype: "success",
    is_error: false,
    result: "flood done",
    num_turns: 1,
    // More than the whole prompt the engine sends: the server's check for a prompt Ollama cut
    // (src/engines/claude/context_check.ts) finds nothing to say about it.
    usage: { input_tokens: 100_000, output_tokens: 1 },
  });
} else {
  await new Promise((r) => setTimeout(r, 600_000));
}

/**
 * OpenTelemetry end to end, on both engines: the real server with OTEL_EXPORTER_OTLP_ENDPOINT
 * set exports to an OTLP/HTTP receiver on loopback (tests/support/otlp_receiver.ts). A job
 * with a tool call and a verification, started by a tool call whose `_meta` carries a W3C
 * traceparent, and its follow-up: the spans, their parents and attributes (GenAI semantic
 * conventions), and the metrics. Without the variable nothing is sent.
 */
import assert from "node:assert/strict";
import process from "node:process";
import type { MessagesRequestView, Reply } from "../support/emulator/emulator.ts";
import { field, tempDir } from "../support/harness.ts";
import { startInProcessScene } from "../support/in_process_scene.ts";
import { type ReceivedSpan, startOtlpReceiver } from "../support/otlp_receiver.ts";

const linux = process.platform === "linux";
const MODEL = "qwen3:8b";
const LONG = { timeoutMs: 200_000 };
const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";

/** The claude engine's model: one Bash call, then its answer. */
function oneCommand(req: MessagesRequestView): Reply {
  if (req.lastToolResult !== undefined) return { kind: "text", text: "ran it" };
  return { kind: "tool_use", name: "Bash", input: { command: "echo hello > out.txt" } };
}

for (const engine of ["native", "claude"] as const) {
  Deno.test({
    name: `${engine}: a job's spans and metrics reach an OTLP receiver, under the caller's trace`,
    ignore: !linux,
    async fn() {
      await using receiver = startOtlpReceiver();
      await using scene = await startInProcessScene({
        emulator: engine === "claude" ? { script: oneCommand } : {},
        env: {
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
          OTEL_METRIC_EXPORT_INTERVAL: "600000",
          OTEL_SERVICE_NAME: "od-test",
        },
      });
      const work = tempDir("od-otel-");
      const reply = await scene.call("delegate_start", {
        engine,
        model: MODEL,
        prompt: engine === "native" ? "@bash echo hello > out.txt" : "write out.txt",
        cwd: work,
        allowed_tools: ["Bash"],
        verify: "cat out.txt",
        wait_seconds: 150,
      }, { ...LONG, meta: { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` } });
      assert.equal(field(reply.text, "state"), "completed (verified)", reply.text);
      const session = field(reply.text, "session_id")!.split(" ")[0]!;
      const next = await scene.call("delegate_followup", {
        job_id: field(reply.text, "job_id"),
        prompt: "and again",
        wait_seconds: 150,
      }, LONG);
      assert.equal(field(next.text, "state"), "completed (verified)", next.text);
      // The server's stop sends what is pending.
      await scene.server.close();

      const spans = receiver.spans;
      const jobs = spans.filter((s) => s.name.startsWith("invoke_agent "));
      assert.equal(jobs.length, 2, spans.map((s) => s.name).join(", "));
      const [first, second] = jobs.sort((a, b) => a.startMs - b.startMs) as [
        ReceivedSpan,
        ReceivedSpan,
      ];
      // The first job runs under the trace its tool call carried; both turns share the
      // conversation id, the session's.
      assert.equal(first.traceId, TRACE_ID);
      assert.equal(first.parentSpanId, CALLER_SPAN);
      assert.notEqual(second.traceId, TRACE_ID, "the follow-up's call sent no trace");
      for (const job of jobs) {
        assert.equal(job.attributes["gen_ai.operation.name"], "invoke_agent");
        assert.equal(job.attributes["gen_ai.conversation.id"], session);
        assert.equal(job.attributes["gen_ai.request.model"], MODEL);
        assert.equal(job.attributes["ollama_delegate.engine"], engine);
        assert.equal(job.attributes["ollama_delegate.state"], "completed");
        assert.equal(typeof job.attributes["gen_ai.usage.input_tokens"], "number");
        assert.equal(job.resource["service.name"], "od-test");
      }
      assert.equal(first.attributes["ollama_delegate.verify.verdict"], "passed");

      const under = (job: ReceivedSpan) => spans.filter((s) => s.parentSpanId === job.spanId);
      const children = under(first);
      const chats = children.filter((s) => s.name === `chat ${MODEL}`);
      assert.ok(chats.length >= 2, children.map((s) => s.name).join(", "));
      const port = Number(new URL(scene.emulator.url).port);
      for (const chat of chats) {
        assert.equal(chat.traceId, TRACE_ID);
        assert.equal(chat.kind, 3, "a client span");
        assert.equal(chat.attributes["gen_ai.operation.name"], "chat");
        assert.equal(chat.attributes["gen_ai.request.model"], MODEL);
        assert.equal(chat.attributes["gen_ai.conversation.id"], session);
        assert.equal(chat.attributes["server.address"], "127.0.0.1");
        assert.equal(chat.attributes["server.port"], port);
        assert.ok((chat.attributes["gen_ai.usage.input_tokens"] as number) > 0);
      }
      // The native engine reads each reply's usage; Claude Code's stream says a message's
      // output only in the turn's total, which the job's span carries.
      if (engine === "native") {
        assert.ok(chats.every((c) => (c.attributes["gen_ai.usage.output_tokens"] as number) > 0));
      }
      assert.ok((first.attributes["gen_ai.usage.output_tokens"] as number) > 0);
      const tools = children.filter((s) => s.name === "execute_tool Bash");
      assert.equal(tools.length, 1, children.map((s) => s.name).join(", "));
      assert.equal(tools[0]!.attributes["gen_ai.tool.name"], "Bash");
      assert.equal(tools[0]!.attributes["ollama_delegate.command.exit_code"], 0);
      const verify = children.filter((s) => s.name === "verify");
      assert.equal(verify.length, 1);
      assert.equal(verify[0]!.attributes["ollama_delegate.verify.passed"], true);
      assert.ok(under(second).some((s) => s.name === `chat ${MODEL}`));

      const metric = (name: string) => receiver.points.filter((p) => p.metric === name);
      const ended = metric("ollama_delegate.jobs");
      assert.equal(
        ended.filter((p) => p.attributes["ollama_delegate.state"] === "completed")
          .reduce((n, p) => n + p.value, 0),
        2,
      );
      const tokens = metric("gen_ai.client.token.usage");
      assert.deepEqual(
        [...new Set(tokens.map((p) => p.attributes["gen_ai.token.type"]))].sort(),
        ["input", "output"],
      );
      assert.ok(metric("gen_ai.client.operation.duration").length > 0);
      assert.ok(metric("ollama_delegate.job.duration").length > 0);
      assert.ok(metric("ollama_delegate.job.queue_wait").length > 0);
      assert.equal(
        metric("ollama_delegate.verify.runs").find((p) =>
          p.attributes["ollama_delegate.verify.passed"] === true
        )?.value,
        2,
        "each turn's check ran once and passed",
      );
      assert.ok(receiver.contentTypes.every((c) => c.endsWith("application/json")));
    },
  });
}

Deno.test({
  name: "without an OTLP endpoint nothing is sent, even to a collector on the default port",
  ignore: !linux,
  async fn() {
    await using receiver = startOtlpReceiver();
    await using scene = await startInProcessScene({
      // Only an unrelated OTEL variable: not a configuration.
      env: { OTEL_SERVICE_NAME: "od-test", OTEL_RESOURCE_ATTRIBUTES: `url=${receiver.url}` },
    });
    const reply = await scene.call("delegate_start", {
      engine: "native",
      model: MODEL,
      prompt: "hi",
      allowed_tools: [],
      wait_seconds: 60,
    }, LONG);
    assert.equal(field(reply.text, "state"), "completed", reply.text);
    await scene.server.close();
    assert.equal(receiver.spans.length + receiver.points.length, 0);
    assert.doesNotMatch(scene.server.stderr(), /OpenTelemetry/);
  },
});

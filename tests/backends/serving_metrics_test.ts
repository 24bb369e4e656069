/** Reading a serving engine's queue from its Prometheus text. */
import assert from "node:assert/strict";
import { parseQueue } from "../../src/backends/serving_metrics.ts";

Deno.test("parseQueue: vLLM's gauges summed over its engines, the fullest KV cache", () => {
  const text = [
    "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.",
    "# TYPE vllm:num_requests_waiting gauge",
    'vllm:num_requests_waiting{engine="0",model_name="m"} 2.0',
    'vllm:num_requests_waiting{engine="1",model_name="m"} 3.0',
    'vllm:num_requests_running{engine="0",model_name="m"} 8.0',
    'vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.42',
    'vllm:kv_cache_usage_perc{engine="1",model_name="m"} 0.91',
    'vllm:iteration_tokens_total_bucket{le="1.0",model_name="m"} 3.0',
  ].join("\n");
  assert.deepEqual(parseQueue(text), { waiting: 5, running: 8, kvUsage: 0.91 });
});

Deno.test("parseQueue: older vLLM names, llama-server's deferred requests, and none at all", () => {
  assert.deepEqual(
    parseQueue(
      'vllm:num_requests_waiting{model_name="m"} 1\nvllm:gpu_cache_usage_perc{model_name="m"} 0.5',
    ),
    { waiting: 1, running: 0, kvUsage: 0.5 },
  );
  assert.deepEqual(
    parseQueue("llamacpp:requests_processing 1\nllamacpp:requests_deferred 4\n"),
    { waiting: 4, running: 1 },
  );
  // Ollama and gateways say nothing of a queue: no reading, not "empty".
  assert.equal(parseQueue("litellm_requests_total 12\n"), undefined);
  assert.equal(parseQueue("<html>404</html>"), undefined);
  assert.equal(parseQueue("vllm:num_requests_waiting NaN\n"), undefined);
});

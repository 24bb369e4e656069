/**
 * A model list that could not be had, in the doctor's words: the server's own message from each
 * error shape the servers in front of models answer with (errorDetail, the one reader), and the
 * system's reason for a connection that was refused.
 */
import assert from "node:assert/strict";
import { listModels, modelEntries } from "../../src/backends/model_list.ts";

/** A loopback server that answers every request with `status` and `body`. */
function answering(status: number, body: string, type: string) {
  return Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response(body, { status, headers: { "content-type": type } }),
  );
}

const JSON_TYPE = "application/json";

Deno.test("model list: each error shape is quoted by the server's message", async () => {
  const cases: Array<[number, string, string, RegExp]> = [
    // OpenAI's and Anthropic's shape.
    [
      401,
      '{"error":{"message":"invalid api key"}}',
      JSON_TYPE,
      /failed \(HTTP 401: invalid api key\)$/,
    ],
    // Ollama's shape.
    [500, '{"error":"runner crashed"}', JSON_TYPE, /failed \(HTTP 500: runner crashed\)$/],
    // FastAPI's (vLLM, LiteLLM).
    [404, '{"detail":"Not Found"}', JSON_TYPE, /failed \(HTTP 404: Not Found\)$/],
    // No JSON at all: the text itself.
    [502, "Bad Gateway\n", "text/plain", /failed \(HTTP 502: Bad Gateway\)$/],
  ];
  for (const [status, body, type, expected] of cases) {
    await using server = answering(status, body, type);
    const url = `http://127.0.0.1:${server.addr.port}`;
    const got = await listModels({ url, label: "t" }, 2000, "OpenAI-compatible");
    assert.equal(got.ok, false);
    assert.match(got.summary, expected, body);
    assert.ok(got.summary.startsWith(`${url}/v1/models failed`), got.summary);
    assert.equal(!got.ok && got.rejected, status === 401 ? true : undefined, body);
    await assert.rejects(modelEntries({ url, label: "t" }, 2000), { message: got.summary });
  }
});

Deno.test("model list: a refused connection says the system's code", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const url = `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`;
  listener.close();
  const got = await listModels({ url, label: "t" }, 2000, "OpenAI-compatible");
  assert.equal(got.summary, `${url}/v1/models cannot be reached (ECONNREFUSED)`);
});

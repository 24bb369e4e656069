/**
 * An OpenAI-compatible endpoint as a backend (vLLM, LM Studio, llama.cpp server, OpenRouter):
 * chat completions, and everything else it says about itself from `/v1/models` (the models,
 * a model's context window where the server reports one).
 */
import type { BackendClient, BackendTarget, ChatOptions, Identity } from "./backend_client.ts";
import { readBounded, REPLY_LIMITS, sizeText } from "./bounded.ts";
import { isObject, parseJson } from "./http_util.ts";
import { ChatClient } from "./openai.ts";

export function openaiBackend(target: BackendTarget): BackendClient {
  // Ollama's keep_alive means nothing here.
  const chat = ({ keepAlive: _, ...options }: ChatOptions) =>
    new ChatClient({
      ...options,
      baseUrl: target.url,
      label: target.label,
      ...(target.apiKey ? { apiKey: target.apiKey } : {}),
    });
  return {
    serverName: "the server behind it",
    chat,
    async connect(model, options) {
      const client = chat(options);
      const contextLength = await client.contextLength(model).catch(() => undefined);
      return {
        client,
        model: contextLength !== undefined ? { contextLength } : undefined,
        loadedContext: undefined,
      };
    },
    models(timeoutMs) {
      return chat({}).models(timeoutMs);
    },
    identify: (timeoutMs) => listModels(target, timeoutMs),
  };
}

/** `GET /v1/models` with the endpoint's key, in the words of the doctor's report. */
async function listModels(target: BackendTarget, timeoutMs: number): Promise<Identity> {
  const url = `${target.url}/v1/models`;
  let response: Response;
  let text: string;
  try {
    response = await fetch(url, {
      headers: {
        "content-type": "application/json",
        ...(target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {}),
      },
      signal: AbortSignal.timeout(timeoutMs),
    });
    const max = response.ok ? REPLY_LIMITS.jsonBodyBytes : REPLY_LIMITS.errorBodyBytes;
    const read = await readBounded(response.body, max);
    if (response.ok && !read.complete) {
      return { ok: false, summary: `${url} answered with over ${sizeText(max)}` };
    }
    text = new TextDecoder().decode(read.bytes);
  } catch (cause) {
    const inner = (cause as { cause?: { code?: string; message?: string } }).cause;
    const why = (cause as Error).name === "TimeoutError"
      ? `no answer within ${timeoutMs / 1000} s`
      : inner?.code ?? inner?.message ?? (cause as Error).message;
    return { ok: false, summary: `${url} cannot be reached (${why})` };
  }
  const body = parseJson(text);
  if (!response.ok) {
    const error = isObject(body) ? body.error : undefined;
    const detail = typeof error === "string"
      ? error
      : isObject(error) && typeof error.message === "string"
      ? error.message
      : text.slice(0, 200);
    return {
      ok: false,
      summary: `${url} failed (HTTP ${response.status}: ${detail})`,
      ...(response.status === 401 || response.status === 403 ? { rejected: true } : {}),
    };
  }
  const data = isObject(body) && Array.isArray(body.data) ? body.data : null;
  if (!data) {
    return {
      ok: false,
      summary: `${url} answered without a model list, so it is not OpenAI-compatible at this URL`,
      foreign: true,
    };
  }
  const ids = data.flatMap((m) => isObject(m) && typeof m.id === "string" ? [m.id] : []);
  return {
    ok: true,
    summary: `${target.url} lists ${ids.length} model(s)`,
    details: { models: ids },
  };
}

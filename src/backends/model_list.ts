/**
 * What a server that is not Ollama says about its models: `GET /v1/models` (OpenAI's list,
 * which vLLM, llama.cpp's llama-server, LiteLLM and Anthropic's own API all serve: `data[].id`)
 * and the context a model runs with. vLLM gives it in the list as `max_model_len` (the limit
 * every request is checked against), OpenRouter as `context_length`; llama-server lists only
 * the model's training context (`meta.n_ctx_train`) and serves the one it runs with from
 * `GET /props` (`default_generation_settings.n_ctx`, its README "GET /props").
 */
import { isObject } from "../platform/json_object.ts";
import type { BackendTarget, Identity } from "./backend_client.ts";
import { readBounded, REPLY_LIMITS, sizeText } from "./bounded.ts";
import { errorDetail, fetchFailure, type Json, parseJson } from "./http_util.ts";

/** The headers a GET of a listing sends: the endpoint's key both ways servers read one. */
function listHeaders(target: BackendTarget): Record<string, string> {
  return {
    "content-type": "application/json",
    ...(target.apiKey
      ? { authorization: `Bearer ${target.apiKey}`, "x-api-key": target.apiKey }
      : {}),
  };
}

/** A GET of JSON under the JSON cap, or why it failed in the doctor's words. */
async function getJson(
  target: BackendTarget,
  path: string,
  timeoutMs: number,
): Promise<{ ok: true; body: unknown } | { ok: false; status?: number; summary: string }> {
  const url = `${target.url}${path}`;
  let response: Response;
  let text: string;
  try {
    response = await fetch(url, {
      headers: listHeaders(target),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const max = response.ok ? REPLY_LIMITS.jsonBodyBytes : REPLY_LIMITS.errorBodyBytes;
    const read = await readBounded(response.body, max);
    if (response.ok && !read.complete) {
      return { ok: false, summary: `${url} answered with over ${sizeText(max)}` };
    }
    text = new TextDecoder().decode(read.bytes);
  } catch (cause) {
    const why = (cause as Error).name === "TimeoutError"
      ? `no answer in time (${timeoutMs / 1000} s)`
      : fetchFailure(cause);
    return { ok: false, summary: `${url} cannot be reached (${why})` };
  }
  const body = parseJson(text);
  if (!response.ok) {
    return {
      ok: false,
      status: response.status,
      summary: `${url} failed (HTTP ${response.status}: ${errorDetail(body, text)})`,
    };
  }
  return { ok: true, body };
}

/** The entries of `GET /v1/models`; throws with the doctor's words when there is no list. */
export async function modelEntries(target: BackendTarget, timeoutMs: number): Promise<Json[]> {
  const got = await getJson(target, "/v1/models", timeoutMs);
  if (!got.ok) throw new Error(got.summary);
  const data = isObject(got.body) && Array.isArray(got.body.data) ? got.body.data : null;
  if (!data) throw new Error(`${target.url}/v1/models answered without a model list`);
  return data.filter(isObject);
}

/**
 * `GET /v1/models` with the endpoint's key, in the words of the doctor's report; `what` names
 * the API a server at this URL should speak ("OpenAI-compatible").
 */
export async function listModels(
  target: BackendTarget,
  timeoutMs: number,
  what: string,
): Promise<Identity> {
  const got = await getJson(target, "/v1/models", timeoutMs);
  if (!got.ok) {
    return {
      ok: false,
      summary: got.summary,
      ...(got.status === 401 || got.status === 403 ? { rejected: true } : {}),
    };
  }
  const data = isObject(got.body) && Array.isArray(got.body.data) ? got.body.data : null;
  if (!data) {
    return {
      ok: false,
      summary: `${target.url}/v1/models answered without a model list, so it is not ${what} ` +
        "at this URL",
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

/** A positive whole number, or undefined. */
const count = (v: unknown): number | undefined =>
  typeof v === "number" && Number.isInteger(v) && v > 0 ? v : undefined;

/**
 * The context `model` runs with at this endpoint, in tokens; undefined when the server does
 * not say. A llama-server serves one model whatever a request names, so its `/props` answers
 * for any name when its list holds that one model.
 */
export async function servedContext(
  target: BackendTarget,
  model: string,
  timeoutMs: number,
): Promise<number | undefined> {
  const entries = await modelEntries(target, timeoutMs);
  const entry = entries.find((m) => m.id === model);
  const listed = entry && (count(entry.max_model_len) ?? count(entry.context_length));
  if (listed !== undefined) return listed;
  const llamaServer = entries.length === 1 && entries[0]!.owned_by === "llamacpp";
  if (!entry && !llamaServer) return undefined;
  const props = await getJson(target, "/props", timeoutMs);
  if (!props.ok || !isObject(props.body)) return undefined;
  const settings = props.body.default_generation_settings;
  return isObject(settings) ? count(settings.n_ctx) : undefined;
}

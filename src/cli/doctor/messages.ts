/**
 * `doctor` checks of a backend whose kind serves Anthropic's Messages API and does not size the
 * context per request (kind anthropic: any `/v1/messages` server, vLLM, llama-server, a LiteLLM
 * proxy; chosen by the kind's facts, so a new kind of that sort gets them too), the way the
 * Ollama checks go, beyond the answer its own check reports:
 * the model a job would ask for is listed, the context it is served with holds the claude
 * engine's request and the 64k coding agents need, and it takes tools: one request of one
 * token that carries a tool, which a vLLM started without `--enable-auto-tool-choice` or a
 * llama-server without `--jinja` refuses.
 */
import { kindFacts } from "../../backends/kinds.ts";
import { modelEntries, servedContext } from "../../backends/model_list.ts";
import { sameModel } from "../../settings/model_names.ts";
import { escapeLine } from "../../platform/plain_text.ts";
import { endpointsOf, type Settings } from "../../settings/types.ts";
import { type Check, fetchJson, HTTP_TIMEOUT_MS, NEEDED_CONTEXT } from "./check.ts";

/** A request that runs the model gets longer than a listing: a loaded model, a short reply. */
const TOOL_TIMEOUT_MS = 30_000;

/** The checks of every such backend that answers. */
export async function messagesChecks(
  s: Settings,
  env: Record<string, string | undefined>,
  claudeContext: number,
): Promise<Check[]> {
  // Ollama's context is checked by its own checks (ollama_context.ts): it sizes it per request.
  const named = Object.entries(s.backends).filter(([, spec]) => {
    const facts = kindFacts(spec.kind);
    return facts.messages && !facts.sizesContext;
  });
  const each = await Promise.all(named.map(async ([name, spec]) => {
    const key = spec.apiKeyEnv ? env[spec.apiKeyEnv] : undefined;
    // A pool serves the same models at each endpoint: the first is asked (its own check
    // says which answer).
    const target = { url: endpointsOf(spec)[0]!.url, label: name, ...(key ? { apiKey: key } : {}) };
    let listed: string[];
    try {
      listed = (await modelEntries(target, HTTP_TIMEOUT_MS)).flatMap((m) =>
        typeof m.id === "string" ? [m.id] : []
      );
    } catch {
      return []; // Its own check says why it did not answer.
    }
    return await backendModelChecks(name, target, listed, s, claudeContext);
  }));
  return each.flat();
}

async function backendModelChecks(
  name: string,
  target: { url: string; label: string; apiKey?: string },
  listed: readonly string[],
  s: Settings,
  claudeContext: number,
): Promise<Check[]> {
  const base = (what: string, title: string) => ({
    id: `backend.${name}.${what}`,
    title: `Backend ${name} ${title}`,
  });
  const wanted = s.defaultModel || s.allowedModels[0] || "";
  const model = listed.find((m) => wanted !== "" && sameModel(m, wanted)) ??
    // A llama-server serves its one model whatever a request names.
    (listed.length === 1 ? listed[0] : undefined);
  if (model === undefined) {
    return [{
      ...base("model", "model"),
      status: wanted === "" ? "warn" : "fail",
      summary: wanted === ""
        ? `${listed.length} model(s) listed and no default model set: jobs must name one`
        : `"${escapeLine(wanted)}" is not among the ${listed.length} model(s) it lists` +
          (listed.length > 0 ? ` (${listed.slice(0, 5).map(escapeLine).join(", ")})` : ""),
      hint: `Name one of its models in delegate_start's model, or set it as the default: ` +
        `ollama-delegate config --default-model <model> (the id as /v1/models lists it)`,
      details: { models: [...listed] },
    }];
  }
  const [context, tools] = await Promise.all([
    servedContext(target, model, HTTP_TIMEOUT_MS).catch(() => undefined),
    toolRequest(target, model),
  ]);
  return [
    {
      ...base("model", "model"),
      status: "pass",
      summary: `serves "${escapeLine(model)}"`,
      details: { model },
    },
    contextCheck(base("context", "context"), model, context, claudeContext),
    tools.ok
      ? {
        ...base("tools", "tool use"),
        status: "pass",
        summary: `"${escapeLine(model)}" accepts a request with tools`,
      }
      : {
        ...base("tools", "tool use"),
        status: "fail",
        summary: `a request with tools failed: ${escapeLine(tools.why)}`,
        hint: "Delegates call tools on every turn. Start vLLM with --enable-auto-tool-choice " +
          "--tool-call-parser <the model's>, llama-server with --jinja, or give LiteLLM a model " +
          "that supports function calling",
      },
  ];
}

function contextCheck(
  base: { id: string; title: string },
  model: string,
  context: number | undefined,
  claudeContext: number,
): Check {
  if (context === undefined) {
    return {
      ...base,
      status: "warn",
      summary: `the server does not say the context it serves "${escapeLine(model)}" with`,
      hint: `Make sure it is at least ${NEEDED_CONTEXT} tokens (vLLM --max-model-len, ` +
        "llama-server --ctx-size): a longer conversation is refused, not cut",
    };
  }
  const details = { model, context, needed: NEEDED_CONTEXT, claudeRequest: claudeContext };
  if (context < claudeContext) {
    return {
      ...base,
      status: "fail",
      summary: `${context} tokens: less than the claude engine's first request needs ` +
        `(${claudeContext})`,
      hint: `Serve it with more context (vLLM --max-model-len ${NEEDED_CONTEXT}, llama-server ` +
        `--ctx-size ${NEEDED_CONTEXT})`,
      details,
    };
  }
  if (context < NEEDED_CONTEXT) {
    return {
      ...base,
      status: "warn",
      summary: `${context} tokens: a coding job's conversation outgrows it (agents need ` +
        `${NEEDED_CONTEXT})`,
      hint: `Serve it with --max-model-len ${NEEDED_CONTEXT} (vLLM) or --ctx-size ` +
        `${NEEDED_CONTEXT} (llama-server) if the GPU has room`,
      details,
    };
  }
  return { ...base, status: "pass", summary: `${context} tokens`, details };
}

/** One non-streamed request of one token with one tool. */
async function toolRequest(
  target: { url: string; apiKey?: string },
  model: string,
): Promise<{ ok: true } | { ok: false; why: string }> {
  const answer = await fetchJson(`${target.url}/v1/messages`, {
    method: "POST",
    headers: {
      "anthropic-version": "2023-06-01",
      ...(target.apiKey
        ? { authorization: `Bearer ${target.apiKey}`, "x-api-key": target.apiKey }
        : {}),
    },
    body: JSON.stringify({
      model,
      max_tokens: 1,
      stream: false,
      messages: [{ role: "user", content: "Say ok." }],
      tools: [{
        name: "ping",
        description: "Answers pong.",
        input_schema: { type: "object", properties: {} },
      }],
    }),
  }, TOOL_TIMEOUT_MS);
  return answer.ok ? { ok: true } : { ok: false, why: answer.why };
}

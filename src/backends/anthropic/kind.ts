/**
 * An Anthropic-compatible endpoint as a backend: any server of `POST /v1/messages` (vLLM, whose
 * docs have a Claude Code page; llama.cpp's llama-server; a LiteLLM proxy; Ollama too). The
 * claude engine points Claude Code at it; the native engine chats over the same Messages API
 * (chat.ts). Its models and their context come from `/v1/models` and, for
 * llama-server, `/props` (model_list.ts): these servers have no Ollama `/api/*`.
 */
import type { BackendClient, BackendTarget, ChatOptions } from "../backend_client.ts";
import { MessagesChatClient } from "./chat.ts";
import { listModels, modelEntries, servedContext } from "../model_list.ts";

export function anthropicBackend(target: BackendTarget): BackendClient {
  // Ollama's keep_alive means nothing here.
  const chat = ({ keepAlive: _, ...options }: ChatOptions) =>
    new MessagesChatClient({
      ...options,
      baseUrl: target.url,
      label: target.label,
      ...(target.apiKey ? { apiKey: target.apiKey } : {}),
    });
  return {
    serverName: "the server behind it",
    chat,
    async connect(model, options) {
      // Unknown when the server does not say: the chat request then reports why.
      const contextLength = await servedContext(target, model, 5000).catch(() => undefined);
      return {
        client: chat(options),
        model: contextLength !== undefined ? { contextLength } : undefined,
        loaded: [],
      };
    },
    async models(timeoutMs) {
      return (await modelEntries(target, timeoutMs)).flatMap((m) =>
        typeof m.id === "string" && m.id !== "" ? [m.id] : []
      );
    },
    identify: (timeoutMs) => listModels(target, timeoutMs, "an Anthropic-compatible server"),
  };
}

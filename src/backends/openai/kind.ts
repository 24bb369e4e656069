/**
 * An OpenAI-compatible endpoint as a backend (vLLM, LM Studio, llama.cpp server, OpenRouter):
 * chat completions, and everything else it says about itself from `/v1/models` (the models,
 * a model's context window where the server reports one).
 */
import type { BackendClient, BackendTarget, ChatOptions } from "../backend_client.ts";
import { listModels } from "../model_list.ts";
import { ChatClient } from "./chat.ts";

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
        loaded: [],
      };
    },
    models(timeoutMs) {
      return chat({}).models(timeoutMs);
    },
    identify: (timeoutMs) => listModels(target, timeoutMs, "OpenAI-compatible"),
  };
}

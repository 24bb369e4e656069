/**
 * An Ollama endpoint as a backend: chat over its native `/api/chat` (the only one of Ollama's
 * APIs that sets the context per request), the model's context and capabilities from
 * `/api/show`, the context it is loaded with from `/api/ps`, its models from `/api/tags`.
 */
import { failureFacts } from "../../errors.ts";
import type { BackendClient, BackendTarget, ChatOptions } from "../backend_client.ts";
import { OllamaClient } from "./api.ts";
import { OllamaChatClient } from "./chat.ts";

export function ollamaBackend(target: BackendTarget): BackendClient {
  const chat = ({ keepAlive, ...options }: ChatOptions) =>
    new OllamaChatClient({
      ...options,
      baseUrl: target.url,
      label: target.label,
      ...(target.apiKey ? { apiKey: target.apiKey } : {}),
      ...(keepAlive ? { keepAlive } : {}),
    });
  return {
    serverName: "the Ollama server behind it",
    chat,
    async connect(model, options) {
      const ollama = new OllamaClient(target.url);
      // Unknown (undefined) when Ollama cannot say: the chat request then reports why.
      const [shown, loaded] = await Promise.all([
        ollama.show(model).catch(() => undefined),
        ollama.ps().catch(() => []),
      ]);
      return { client: chat(options), model: shown, loaded };
    },
    async models(timeoutMs) {
      return (await new OllamaClient(target.url, timeoutMs).tags()).map((m) => m.name);
    },
    async identify(timeoutMs) {
      try {
        const version = await new OllamaClient(target.url, timeoutMs).version();
        return { ok: true, summary: `Ollama ${version} at ${target.url}`, details: { version } };
      } catch (e) {
        return { ok: false, summary: failureFacts(e) };
      }
    },
  };
}

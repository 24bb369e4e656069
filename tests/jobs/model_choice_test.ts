/** The engine, backend and model of a new job: each refusal is a JobError with its facts. */
import assert from "node:assert/strict";
import { OllamaClient } from "../../src/backends/ollama/api.ts";
import { isJobError, type JobProblem } from "../../src/jobs/errors.ts";
import { ModelChoice, type ModelRequest } from "../../src/jobs/model_choice.ts";
import { ModelCatalog } from "../../src/models/catalog.ts";
import { RetiredModels } from "../../src/models/retired.ts";
import { backendTable } from "../../src/settings/backends.ts";
import { tempDir } from "../support/harness.ts";

const settings: {
  baseUrl: string;
  baseUrls?: Array<{ url: string }>;
  backends: Record<
    string,
    { url: string; urls?: Array<{ url: string }>; kind: "openai" | "anthropic"; apiKeyEnv?: string }
  >;
  defaultModel: string;
  allowedModels: string[];
  residency?: "any" | "local";
} = {
  baseUrl: "http://127.0.0.1:9",
  backends: {
    lab: { url: "http://lab.example/v1", kind: "openai" as const, apiKeyEnv: "LAB_KEY" },
    gpus: { url: "http://gpus.example", kind: "anthropic" as const, apiKeyEnv: "LAB_KEY" },
  },
  defaultModel: "",
  allowedModels: ["qwen3:8b"],
};

function choice(extra: Partial<typeof settings> = {}): ModelChoice {
  const s = { ...settings, ...extra };
  // Nothing here reaches Ollama: the requests below are decided before the catalog asks it.
  const catalog = new ModelCatalog(
    new OllamaClient(s.baseUrl),
    { allowedModels: s.allowedModels, defaultModel: s.defaultModel },
    new RetiredModels(tempDir()),
  );
  return new ModelChoice(s, catalog, backendTable(s, { LAB_KEY: "sk-lab" }));
}

async function refusal(request: ModelRequest, extra = {}): Promise<JobProblem> {
  try {
    await choice(extra).choose(request);
  } catch (e) {
    assert.ok(isJobError(e), String(e));
    return e.problem;
  }
  throw new Error("no refusal");
}

Deno.test("ModelChoice: the claude engine takes backends that serve the Messages API, no files", async () => {
  assert.deepEqual(await refusal({ engine: "claude", backend: "lab", model: "qwen3:8b" }), {
    kind: "backend-api",
    engine: "claude",
    backend: "lab",
    backendKind: "openai",
    needs: "messages",
    kinds: ["ollama", "anthropic"],
  });
  assert.deepEqual(
    await choice().choose({ engine: "claude", backend: "gpus", model: "qwen3:8b" }),
    { model: "qwen3:8b", backend: "gpus", cloud: false },
  );
  assert.equal(choice().runsOn("claude", "gpus"), true);
  assert.equal(choice().runsOn("claude", "lab"), false);
  assert.equal(choice().runsOn("native", "lab"), true);
  assert.deepEqual(await refusal({ engine: "claude", files: ["a.ts"] }), {
    kind: "needs-native",
    what: "files",
    baseUrl: settings.baseUrl,
  });
});

Deno.test("ModelChoice: a named backend needs a known name and an allowed model", async () => {
  assert.deepEqual(await refusal({ engine: "native", backend: "nope" }), {
    kind: "unknown-backend",
    name: "nope",
    configured: ["ollama", "lab", "gpus"],
  });
  assert.deepEqual(await refusal({ engine: "native", backend: "lab" }), {
    kind: "no-model-for-backend",
    backend: "lab",
  });
  assert.deepEqual(await refusal({ engine: "native", backend: "lab", model: "gpt-x" }), {
    kind: "model-not-allowed",
    model: "gpt-x",
    allowed: ["qwen3:8b"],
  });
  assert.deepEqual(
    await choice().choose({ engine: "native", backend: "lab", model: " qwen3:8b " }),
    { model: "qwen3:8b", backend: "lab", cloud: false },
  );
  assert.deepEqual(
    await choice({ defaultModel: "qwen3:8b" }).choose({ engine: "native", backend: "lab" }),
    { model: "qwen3:8b", backend: "lab", cloud: false },
  );
});

Deno.test("ModelChoice: backends resolve with their own key; inherited names are none", () => {
  const c = choice();
  assert.deepEqual(c.backend("lab"), {
    name: "lab",
    url: "http://lab.example/v1",
    endpoints: [{ url: "http://lab.example/v1" }],
    kind: "openai",
    apiKeyEnv: "LAB_KEY",
    apiKey: "sk-lab",
  });
  assert.deepEqual(c.backend(undefined), {
    name: "ollama",
    url: settings.baseUrl,
    endpoints: [{ url: settings.baseUrl }],
    kind: "ollama",
    builtIn: true,
  });
  // A backend the user named "ollama" is theirs, not the default one (the claude engine sends
  // its turns through the key relay).
  const own = choice({ backends: { ollama: { url: "http://own:11434", kind: "anthropic" } } });
  assert.equal(own.backend("ollama")?.url, "http://own:11434");
  assert.equal(own.backend("ollama")?.builtIn, undefined);
  assert.equal(own.backend(undefined)?.builtIn, true);
  // The default Ollama as a pool: each endpoint, in order.
  const pool = choice({ baseUrls: [{ url: "http://gpu1:11434" }, { url: "http://gpu2:11434" }] })
    .backend(undefined);
  assert.deepEqual(pool?.endpoints, [{ url: "http://gpu1:11434" }, { url: "http://gpu2:11434" }]);
  assert.equal(pool?.url, "http://gpu1:11434");
  assert.equal(c.backend("constructor"), undefined);
  assert.deepEqual(c.configuredBackends().map((b) => b.name), ["lab", "gpus"]);
});

Deno.test("ModelChoice: residency local refuses a named backend off this machine and its network, and a cloud model on any", async () => {
  const backends = {
    lab: { url: "http://lab.example/v1", kind: "openai" as const },
    gpu: { url: "http://192.168.1.20:8000/v1", kind: "openai" as const },
    pool: {
      url: "http://127.0.0.1:8001",
      urls: [{ url: "http://127.0.0.1:8001" }, { url: "https://gpu.rented.example" }],
      kind: "openai" as const,
    },
  };
  const local = { residency: "local" as const, backends, allowedModels: [] };
  assert.deepEqual(
    await choice(local).choose({ engine: "native", backend: "gpu", model: "qwen3:8b" }),
    { model: "qwen3:8b", backend: "gpu", cloud: false },
  );
  assert.deepEqual(await refusal({ engine: "native", backend: "lab", model: "qwen3:8b" }, local), {
    kind: "not-local",
    role: "call",
    model: "qwen3:8b",
    backend: "lab",
    place: "remote",
    reason: "http://lab.example/v1 is not this machine nor a private network",
  });
  // One endpoint of a pool that is not local is enough: a turn may be placed there.
  const pool = await refusal({ engine: "native", backend: "pool", model: "qwen3:8b" }, local);
  assert.equal(
    pool.kind === "not-local" && pool.reason,
    "https://gpu.rented.example is not this machine nor a private network",
  );
  // A model on Ollama's cloud, served through an Ollama of the user's network.
  const cloud = await refusal(
    { engine: "native", backend: "gpu", model: "glm-5:cloud" },
    { ...local, defaultModel: "" },
  );
  assert.equal(cloud.kind === "not-local" && cloud.place, "cloud");
  // The default model is named as such.
  const byDefault = await refusal(
    { engine: "native", backend: "gpu" },
    { ...local, defaultModel: "glm-5:cloud" },
  );
  assert.equal(byDefault.kind === "not-local" && byDefault.role, "default");
  // Without the setting the same choices stand, and say where the model runs.
  assert.deepEqual(
    await choice({ backends, allowedModels: [] }).choose({
      engine: "native",
      backend: "lab",
      model: "glm-5:cloud",
    }),
    { model: "glm-5:cloud", backend: "lab", cloud: true },
  );
});

import assert from "node:assert/strict";
import { canonicalModelName, hasCloudSuffix, sameModel } from "../../src/settings/model_names.ts";

Deno.test("canonicalModelName adds :latest to an untagged name", () => {
  assert.equal(canonicalModelName("llama3"), "llama3:latest");
  assert.equal(canonicalModelName("qwen3-coder"), "qwen3-coder:latest");
});

Deno.test("canonicalModelName keeps an explicit tag unchanged", () => {
  assert.equal(canonicalModelName("llama3:latest"), "llama3:latest");
  assert.equal(canonicalModelName("llama3:8b"), "llama3:8b");
  assert.equal(canonicalModelName("gpt-oss:120b-cloud"), "gpt-oss:120b-cloud");
});

Deno.test("canonicalModelName trims surrounding whitespace", () => {
  assert.equal(canonicalModelName("  llama3 "), "llama3:latest");
  assert.equal(canonicalModelName("\tllama3:8b\n"), "llama3:8b");
});

Deno.test("canonicalModelName: a colon before the last slash is a registry port, not a tag", () => {
  assert.equal(canonicalModelName("host:5000/ns/m"), "host:5000/ns/m:latest");
  assert.equal(canonicalModelName("host:5000/ns/m:7b"), "host:5000/ns/m:7b");
  assert.equal(canonicalModelName("ns/m"), "ns/m:latest");
  assert.equal(
    canonicalModelName("registry.ollama.ai/library/m:q4"),
    "registry.ollama.ai/library/m:q4",
  );
});

Deno.test("sameModel treats llama3 and llama3:latest as the same model", () => {
  assert.equal(sameModel("llama3", "llama3:latest"), true);
  assert.equal(sameModel("llama3:latest", "llama3"), true);
  assert.equal(sameModel("llama3", "llama3"), true);
  assert.equal(sameModel(" llama3", "llama3:latest "), true);
  assert.equal(sameModel("host:5000/ns/m", "host:5000/ns/m:latest"), true);
});

Deno.test("sameModel tells different tags and names apart", () => {
  assert.equal(sameModel("llama3", "llama3:8b"), false);
  assert.equal(sameModel("llama3:8b", "llama3:70b"), false);
  assert.equal(sameModel("llama3", "llama3.1"), false);
  assert.equal(sameModel("ns/m", "m"), false);
  assert.equal(sameModel("host:5000/ns/m", "host:5001/ns/m"), false);
});

Deno.test("hasCloudSuffix: a :cloud tag or a tag ending -cloud is cloud", () => {
  assert.equal(hasCloudSuffix("x:cloud"), true);
  assert.equal(hasCloudSuffix("x:7b-cloud"), true);
  assert.equal(hasCloudSuffix("gpt-oss:120b-cloud"), true);
  assert.equal(hasCloudSuffix("qwen3-coder:480b-cloud"), true);
  assert.equal(hasCloudSuffix("host:5000/ns/m:cloud"), true);
});

Deno.test("hasCloudSuffix: cloud elsewhere than the tag's end is not cloud", () => {
  assert.equal(hasCloudSuffix("cloudy:7b"), false);
  assert.equal(hasCloudSuffix("cloud"), false, "untagged means :latest");
  assert.equal(hasCloudSuffix("x:cloudy"), false);
  assert.equal(hasCloudSuffix("x:cloud-7b"), false);
  assert.equal(hasCloudSuffix("llama3"), false);
  assert.equal(hasCloudSuffix("llama3:latest"), false);
  assert.equal(hasCloudSuffix("my-cloud/llama3"), false, "a namespace is not a tag");
});

Deno.test("sameModel: the cases of the native engine's former copy give its answers", () => {
  // It matched /api/ps names with its own regex (a tag is a colon after the last slash).
  assert.equal(sameModel("qwen3:8b", "qwen3:8b"), true);
  assert.equal(sameModel("ns/m:7b", "ns/m:7b"), true);
  assert.equal(sameModel("ns/m", "ns/m:latest"), true);
  assert.equal(sameModel("host:5000/m", "host:5000/m:latest"), true);
  assert.equal(sameModel("ns/m:7b", "ns/m:8b"), false);
  assert.equal(sameModel("host:5000/m", "host:5000/m:7b"), false);
});

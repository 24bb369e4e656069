import assert from "node:assert/strict";
import { placeReason, reachOf, runsOnCloud, workPlace } from "../../src/settings/residency.ts";
import { narrowResidency } from "../../src/settings/narrow.ts";

Deno.test("residency: this machine, a private network, or remote, by the URL's host alone", () => {
  const cases: Array<[string, ReturnType<typeof reachOf>]> = [
    ["http://127.0.0.1:11434", "this machine"],
    ["http://127.8.9.10:8000", "this machine"],
    ["http://localhost:11434", "this machine"],
    ["http://gpu.localhost:11434", "this machine"],
    ["http://[::1]:11434", "this machine"],
    ["http://[::ffff:127.0.0.1]:11434", "this machine"],
    ["http://10.0.0.5:8000", "a private network"],
    ["http://172.16.0.1:8000", "a private network"],
    ["http://172.31.255.255:8000", "a private network"],
    ["http://192.168.1.20:11434", "a private network"],
    ["http://169.254.1.1:11434", "a private network"],
    ["http://[fd12:3456::1]:8000", "a private network"],
    ["http://[fe80::1]:8000", "a private network"],
    ["http://[::ffff:10.1.2.3]:8000", "a private network"],
    // Public addresses and every other name: a name may resolve anywhere.
    ["http://172.32.0.1:8000", "remote"],
    ["http://172.15.0.1:8000", "remote"],
    ["http://192.169.0.1:8000", "remote"],
    ["http://100.64.0.1:8000", "remote"],
    ["http://8.8.8.8:8000", "remote"],
    ["http://[2001:db8::1]:8000", "remote"],
    ["http://[::ffff:8.8.8.8]:8000", "remote"],
    ["https://openrouter.ai/api", "remote"],
    ["http://gpu-box:8000", "remote"],
    ["http://localhost.example.com:8000", "remote"],
    ["http://127.0.0.1.nip.io:8000", "remote"],
    ["not a url", "remote"],
  ];
  for (const [url, want] of cases) assert.equal(reachOf(url), want, url);
});

Deno.test("residency: a cloud model by its name or as its Ollama lists it, whatever the endpoint", () => {
  assert.equal(runsOnCloud({ name: "gpt-oss:120b-cloud" }), true);
  assert.equal(runsOnCloud({ name: "glm-5:cloud" }), true);
  assert.equal(runsOnCloud({ name: "my-coder:latest", cloud: true }), true);
  assert.equal(runsOnCloud({ name: "qwen3:8b" }), false);
  const local = "http://127.0.0.1:11434";
  assert.deepEqual(workPlace([{ name: "qwen3:8b" }], [local]).place, "local");
  const cloud = workPlace([{ name: "qwen3:8b" }, { name: "glm-5:cloud" }], [local]);
  assert.equal(cloud.place, "cloud");
  assert.equal(placeReason(cloud), `glm-5:cloud runs on ollama.com, through ${local}`);
  const remote = workPlace([{ name: "qwen3:8b" }], [local, "https://openrouter.ai/api"]);
  assert.equal(remote.place, "remote");
  assert.equal(
    placeReason(remote),
    "https://openrouter.ai/api is not this machine nor a private network",
  );
  assert.equal(
    placeReason(workPlace([{ name: "q" }], [local, "http://10.0.0.2:11434"])),
    `${local}, http://10.0.0.2:11434, a private network`,
  );
});

Deno.test("residency: a project file may keep work local, never let it leave", () => {
  assert.deepEqual(narrowResidency("local", "any"), { value: "local" });
  assert.deepEqual(narrowResidency("local", "local"), { value: "local" });
  assert.deepEqual(narrowResidency("any", "any"), { value: "any" });
  const refused = narrowResidency("any", "local");
  assert.ok("refused" in refused && /leave this machine/.test(refused.refused));
});

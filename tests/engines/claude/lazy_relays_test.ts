/**
 * The claude engine loads its two relays when a turn first needs one (run.ts for the
 * permission-question relay, endpoint_target.ts for the key relay of a named backend): a turn on
 * the default Ollama with nobody to ask uses neither, and their HTTP server and MCP transport
 * cost a server about 40 ms to load before its first claude turn. So what the engine loads up
 * front (its graph without dynamic imports, as `deno info` lists it) holds neither relay nor
 * node:http.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { REPO } from "../../support/harness.ts";

interface InfoModule {
  specifier: string;
  dependencies?: { specifier: string; code?: { specifier: string }; isDynamic?: boolean }[];
}

/** Every module `root` loads before any of its dynamic imports run. */
function loadedUpFront(root: string): Set<string> {
  const info = JSON.parse(
    execFileSync(Deno.execPath(), ["info", "--json", "--config", join(REPO, "deno.json"), root], {
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
    }),
  ) as { roots: string[]; modules: InfoModule[] };
  const bySpecifier = new Map(info.modules.map((m) => [m.specifier, m]));
  const seen = new Set<string>();
  const visit = (specifier: string) => {
    if (seen.has(specifier)) return;
    seen.add(specifier);
    for (const dep of bySpecifier.get(specifier)?.dependencies ?? []) {
      // Type-only imports have no `code`; dynamic ones load when they run.
      if (dep.code && !dep.isDynamic) visit(dep.code.specifier);
    }
  };
  visit(info.roots[0]!);
  return seen;
}

Deno.test("claude engine: the relays and node:http load when a turn needs them, not with the engine", () => {
  const loaded = [...loadedUpFront(join(REPO, "src", "engines", "claude", "run.ts"))];
  // The walk reached the engine's graph.
  assert.ok(loaded.some((s) => s.endsWith("/src/engines/claude/turn_confinement.ts")));
  assert.ok(loaded.some((s) => s.endsWith("/src/engines/claude/endpoint_target.ts")));
  for (const lazy of ["/src/engines/claude/ask_relay.ts", "/src/backends/key_relay.ts"]) {
    assert.deepEqual(loaded.filter((s) => s.endsWith(lazy)), [], `${lazy} loads with the engine`);
  }
  assert.deepEqual(loaded.filter((s) => /^node:https?$/.test(s)), []);
});

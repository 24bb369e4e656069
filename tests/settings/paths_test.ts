import assert from "node:assert/strict";
import { join, resolve } from "node:path";
import { absolutePath, configLocations, expandHome } from "../../src/settings/paths.ts";

const HOME = resolve("/home/tester");
const CWD = resolve("/work/proj");

Deno.test("expandHome expands ~ and ~/ only", () => {
  assert.equal(expandHome("~", HOME), HOME);
  assert.equal(expandHome("~/x", HOME), join(HOME, "x"));
  assert.equal(expandHome("~/a/b", HOME), join(HOME, "a", "b"));
  assert.equal(expandHome("~\\x", HOME), join(HOME, "x"));
  assert.equal(expandHome("~other/x", HOME), "~other/x", "~user is not expanded");
  assert.equal(expandHome("x/~/y", HOME), "x/~/y");
  assert.equal(expandHome("/abs/path", HOME), "/abs/path");
  assert.equal(expandHome("", HOME), "");
});

Deno.test("absolutePath: ~ becomes home, never a literal ./~", () => {
  assert.equal(absolutePath("~/x", CWD, HOME), join(HOME, "x"));
  assert.equal(absolutePath("~", CWD, HOME), HOME);
  assert.ok(!absolutePath("~/x", CWD, HOME).includes("~"));
});

Deno.test("absolutePath: relative paths resolve from the base, absolute ones stay", () => {
  assert.equal(absolutePath("jobs", CWD, HOME), join(CWD, "jobs"));
  assert.equal(absolutePath("./a/../b", CWD, HOME), join(CWD, "b"));
  assert.equal(absolutePath(resolve("/var/jobs"), CWD, HOME), resolve("/var/jobs"));
});

Deno.test("configLocations: defaults are ~/.ollama-mcp/config.json and ./ollama-mcp.config.json", () => {
  assert.deepEqual(configLocations({}, CWD, HOME), {
    userFile: join(HOME, ".ollama-mcp", "config.json"),
    projectFile: join(CWD, "ollama-mcp.config.json"),
  });
});

Deno.test("configLocations: OLLAMA_MCP_CONFIG replaces the user file only", () => {
  const abs = resolve("/etc/ollama/mine.json");
  assert.deepEqual(configLocations({ OLLAMA_MCP_CONFIG: abs }, CWD, HOME), {
    userFile: abs,
    projectFile: join(CWD, "ollama-mcp.config.json"),
  });
  assert.equal(
    configLocations({ OLLAMA_MCP_CONFIG: "~/cfg/o.json" }, CWD, HOME).userFile,
    join(HOME, "cfg", "o.json"),
  );
  assert.equal(
    configLocations({ OLLAMA_MCP_CONFIG: "rel/o.json" }, CWD, HOME).userFile,
    join(CWD, "rel", "o.json"),
  );
  assert.equal(
    configLocations({ OLLAMA_MCP_CONFIG: `  ${abs}  ` }, CWD, HOME).userFile,
    abs,
    "surrounding spaces are trimmed",
  );
});

Deno.test("configLocations: an empty OLLAMA_MCP_CONFIG means the default user file", () => {
  const def = join(HOME, ".ollama-mcp", "config.json");
  assert.equal(configLocations({ OLLAMA_MCP_CONFIG: "" }, CWD, HOME).userFile, def);
  assert.equal(configLocations({ OLLAMA_MCP_CONFIG: "   " }, CWD, HOME).userFile, def);
  assert.equal(configLocations({ OLLAMA_MCP_CONFIG: undefined }, CWD, HOME).userFile, def);
});

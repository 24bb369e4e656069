import assert from "node:assert/strict";
import { protectedFileRules } from "../../../src/engines/claude/file_rules.ts";

Deno.test("protectedFileRules: absolute // paths, the path and everything below it", () => {
  const rules = protectedFileRules({
    roots: ["/w/proj", "/w/extra/"],
    home: "/home/u",
    protect: ["/home/u/.ollama-mcp/jobs"],
  });
  for (
    const rule of [
      "Edit(//w/proj/.git)",
      "Edit(//w/proj/.git/**)",
      "Edit(//w/proj/.envrc)",
      "Edit(//w/extra/CLAUDE.md)",
      "Edit(//w/extra/.claude/**)",
      "Read(//home/u/.ssh/**)",
      "Edit(//home/u/.aws)",
      "Read(//home/u/.config/gcloud/**)",
      "Read(//home/u/.ollama-mcp/jobs/**)",
      "Edit(//home/u/.ollama-mcp/jobs)",
      // At any depth below each root: cwd may be a folder of projects.
      "Edit(//w/proj/**/.git)",
      "Edit(//w/proj/**/.git/**)",
      "Edit(//w/extra/**/.envrc)",
      "Edit(//w/extra/**/.ollama-delegate/**)",
    ]
  ) {
    assert.ok(rules.includes(rule), rule);
  }
  // Reading host-run files is fine; only their edits are refused.
  assert.ok(!rules.some((r) => r.startsWith("Read(//w/proj")));
  assert.equal(new Set(rules).size, rules.length);
});

Deno.test("protectedFileRules: Windows drive paths in Claude Code's //c/ form", () => {
  const rules = protectedFileRules({ roots: ["C:\\work\\proj"], protect: [] });
  assert.ok(rules.includes("Edit(//c/work/proj/.git/**)"), rules.join(" "));
});

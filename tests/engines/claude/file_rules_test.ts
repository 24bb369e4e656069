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
      // $HOME holds no root: denied whole, whatever a new tool keeps in it.
      "Read(//home/u)",
      "Read(//home/u/**)",
      "Edit(//home/u/**)",
      // Credential stores inside a root, at any depth.
      "Read(//w/proj/**/.ssh/**)",
      "Read(//w/extra/**/.aws)",
      "Read(//home/u/.ollama-mcp/jobs/**)",
      "Edit(//home/u/.ollama-mcp/jobs)",
      // At any depth below each root, the top included (`**/` matches no folder too): cwd may
      // be a folder of projects.
      "Edit(//w/proj/**/.git)",
      "Edit(//w/proj/**/.git/**)",
      "Edit(//w/extra/**/.envrc)",
      "Edit(//w/extra/**/.ollama-delegate/**)",
    ]
  ) {
    assert.ok(rules.includes(rule), rule);
  }
  // No literal path inside a root: Claude Code's sandbox would mount /dev/null at each one
  // that does not exist, and a delegate's ls would show them.
  assert.ok(
    !rules.some((r) => /^(Read|Edit)\(\/\/w\/(proj|extra)\/(?!\*\*)/.test(r)),
    rules.join(" "),
  );
  // Reading host-run files is fine; only their edits are refused.
  assert.ok(
    !rules.some((r) => /^Read\(\/\/w\/proj\/\.git(\/|\))/.test(r) || r === "Read(//w/proj)"),
  );
  assert.equal(new Set(rules).size, rules.length);
});

Deno.test("protectedFileRules: Windows drive paths in Claude Code's //c/ form", () => {
  const rules = protectedFileRules({ roots: ["C:\\work\\proj"], protect: [] });
  assert.ok(rules.includes("Edit(//c/work/proj/**/.git/**)"), rules.join(" "));
});

Deno.test("protectedFileRules: where the jail hides every credential store, no Read pattern inside the roots", () => {
  const scope = { roots: ["/w/proj"], home: "/home/u", protect: [] };
  const hidden = protectedFileRules({ ...scope, credentialsHidden: true });
  // Claude Code's sandbox reads the whole tree before every command to expand a Read pattern.
  assert.deepEqual(hidden.filter((r) => r.startsWith("Read(//w/proj/")), []);
  // The file tools still may not make one; $HOME's rules are not patterns inside the roots.
  for (const rule of ["Edit(//w/proj/**/.ssh)", "Edit(//w/proj/**/.ssh/**)", "Read(//home/u)"]) {
    assert.ok(hidden.includes(rule), rule);
  }
  assert.ok(protectedFileRules(scope).includes("Read(//w/proj/**/.ssh)"));
});

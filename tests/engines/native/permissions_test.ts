import assert from "node:assert/strict";
import { parseRule, toolPolicy } from "../../../src/engines/native/permissions.ts";
import { bashTool } from "../../../src/engines/native/tools/bash.ts";
import { FILE_TOOLS } from "../../../src/engines/native/tools/index.ts";
import type { PermissionMode } from "../../../src/settings/types.ts";

const ALL = [...FILE_TOOLS, bashTool({ kind: "unconfined", why: "off (test)", reason: "test" })];
const names = (mode: PermissionMode, allowed?: string[], denied?: string[]) =>
  toolPolicy(ALL, mode, allowed, denied).tools.map((t) => t.name);

// ---------------------------------------------------------------------------------------------
// parseRule

Deno.test("parseRule: a bare name, a name with a pattern, spacing around both", () => {
  assert.deepEqual(parseRule("Read"), { name: "Read" });
  assert.deepEqual(parseRule("Bash(git *)"), { name: "Bash", pattern: "git *" });
  assert.deepEqual(parseRule("  Bash ( npm run test:* )  "), {
    name: "Bash",
    pattern: "npm run test:*",
  });
  assert.deepEqual(parseRule("mcp__srv-1__tool"), { name: "mcp__srv-1__tool" });
  // Parentheses inside the pattern are kept: the outer pair delimits it.
  assert.deepEqual(parseRule("Bash(echo (x))"), { name: "Bash", pattern: "echo (x)" });
});

Deno.test("parseRule: text that is no rule becomes a name that matches no tool", () => {
  assert.deepEqual(parseRule(" 1nvalid rule "), { name: "1nvalid rule" });
  assert.deepEqual(names("acceptEdits", ["1nvalid rule"]), []);
});

// ---------------------------------------------------------------------------------------------
// toolPolicy: which tools are offered

Deno.test("toolPolicy: acceptEdits, auto and bypassPermissions offer every tool in order", () => {
  for (const mode of ["acceptEdits", "auto", "bypassPermissions"] as const) {
    assert.deepEqual(names(mode), ["Read", "Write", "Edit", "Glob", "Grep", "Bash"], mode);
  }
});

Deno.test("toolPolicy: plan, manual, default and dontAsk offer only the read-only tools", () => {
  for (const mode of ["plan", "manual", "default", "dontAsk"] as const) {
    assert.deepEqual(names(mode), ["Read", "Glob", "Grep"], mode);
  }
});

Deno.test("toolPolicy: manual/default/dontAsk add a tool allowed by name; plan never does", () => {
  for (const mode of ["manual", "default", "dontAsk"] as const) {
    assert.deepEqual(names(mode, ["Read", "Write", "Bash(git *)"]), ["Read", "Write", "Bash"]);
  }
  assert.deepEqual(names("plan", ["Read", "Write", "Bash"]), ["Read"]);
});

Deno.test("toolPolicy: allowed tools limit the offer; an empty list offers nothing", () => {
  assert.deepEqual(names("acceptEdits", ["Read", "Grep"]), ["Read", "Grep"]);
  assert.deepEqual(names("bypassPermissions", []), []);
});

Deno.test("toolPolicy: a bare disallowed name removes the tool; a Bash pattern does not", () => {
  assert.deepEqual(names("acceptEdits", undefined, ["Bash", "Edit"]), [
    "Read",
    "Write",
    "Glob",
    "Grep",
  ]);
  assert.deepEqual(names("acceptEdits", undefined, ["Bash(rm *)"]), [
    "Read",
    "Write",
    "Edit",
    "Glob",
    "Grep",
    "Bash",
  ]);
  // Disallowed wins over allowed.
  assert.deepEqual(names("acceptEdits", ["Read", "Bash"], ["Bash"]), ["Read"]);
});

// ---------------------------------------------------------------------------------------------
// toolPolicy: refusals

Deno.test("refusal: a tool that is not offered is refused with the mode and what is available", () => {
  const plan = toolPolicy(ALL, "plan", undefined, undefined);
  assert.equal(plan.refusal("Read", { file_path: "a" }), undefined);
  assert.equal(
    plan.refusal("Write", { file_path: "a", content: "" }),
    'Tool "Write" is not available in this run (permission mode plan). Available: Read, Glob, Grep',
  );
  const none = toolPolicy(ALL, "acceptEdits", [], undefined);
  assert.equal(
    none.refusal("Read", {}),
    'Tool "Read" is not available in this run (permission mode acceptEdits, allowed tools ' +
      "none). Available: none",
  );
  const some = toolPolicy(ALL, "acceptEdits", ["Read", "Glob"], undefined);
  assert.match(
    some.refusal("Frobnicate", {})!,
    /allowed tools Read, Glob\). Available: Read, Glob$/,
  );
});

Deno.test("refusal: Bash(pattern) in allowed tools lets only matching commands run", () => {
  const policy = toolPolicy(ALL, "acceptEdits", ["Bash(git *)", "Bash(npm test)"], undefined);
  assert.equal(policy.refusal("Bash", { command: "git status" }), undefined);
  assert.equal(policy.refusal("Bash", { command: "  npm test  " }), undefined);
  assert.equal(
    policy.refusal("Bash", { command: "rm -rf build" }),
    "Command refused: only Bash(git *), Bash(npm test) may run",
  );
  assert.ok(policy.refusal("Bash", { command: "npm test -- --all" }));
  assert.ok(policy.refusal("Bash", {}), "a missing command matches no pattern");
});

Deno.test("refusal: a bare Bash next to Bash patterns allows every command", () => {
  const policy = toolPolicy(ALL, "acceptEdits", ["Bash", "Bash(git *)"], undefined);
  assert.equal(policy.refusal("Bash", { command: "make all" }), undefined);
});

Deno.test("refusal: a disallowed Bash pattern refuses matching commands, even when allowed", () => {
  const policy = toolPolicy(ALL, "acceptEdits", ["Bash"], ["Bash(rm *)", "Bash(git push:*)"]);
  assert.equal(
    policy.refusal("Bash", { command: "rm -rf /" }),
    "Command refused by the rule Bash(rm *)",
  );
  assert.equal(
    policy.refusal("Bash", { command: "git push" }),
    "Command refused by the rule Bash(git push:*)",
  );
  assert.equal(
    policy.refusal("Bash", { command: "git push --force origin" }),
    "Command refused by the rule Bash(git push:*)",
  );
  assert.equal(policy.refusal("Bash", { command: "git pull" }), undefined);
  assert.equal(policy.refusal("Bash", { command: "rmdir x" }), undefined);
});

Deno.test("refusal: a chained command cannot slip a disallowed command past a Bash deny rule", () => {
  // The chained-command rule is meant to be conservative: a chain must not escape an allow
  // rule's prefix, and just as little a deny rule by putting something harmless first.
  const policy = toolPolicy(ALL, "bypassPermissions", undefined, ["Bash(rm *)"]);
  for (const command of ["echo hi && rm -rf x", "true; rm -rf x", "ls | rm -rf x"]) {
    assert.ok(policy.refusal("Bash", { command }), `refused: ${command}`);
  }
});

Deno.test("refusal: Bash patterns do not restrict the other tools", () => {
  const policy = toolPolicy(ALL, "acceptEdits", undefined, ["Bash(rm *)"]);
  assert.equal(policy.refusal("Write", { file_path: "rm x", content: "" }), undefined);
});

Deno.test("refusal: a disallowed file-tool rule with a path pattern is not silently ignored", () => {
  // Claude Code reads `Edit(.env)` / `Write(secrets/**)` as path rules; the native engine only
  // understands Bash patterns, so it must not let such a deny rule fail open.
  const policy = toolPolicy(ALL, "acceptEdits", undefined, ["Write(secrets/**)", "Edit(.env)"]);
  assert.ok(policy.refusal("Write", { file_path: "secrets/key.pem", content: "x" }), "Write");
  assert.ok(
    policy.refusal("Edit", { file_path: ".env", old_string: "a", new_string: "b" }),
    "Edit",
  );
});

Deno.test("refusal: allowed file-tool path rules restrict that tool to the paths", () => {
  const policy = toolPolicy(ALL, "acceptEdits", ["Read(src/**)", "Write(out/*.txt)", "Grep"], []);
  assert.deepEqual(policy.tools.map((t) => t.name), ["Read", "Write", "Grep"]);
  assert.equal(policy.refusal("Read", { file_path: "src/a/b.ts" }), undefined);
  assert.equal(policy.refusal("Read", { file_path: "./src/x.ts" }), undefined);
  assert.match(
    policy.refusal("Read", { file_path: "secrets.txt" }) ?? "",
    /only Read\(src\/\*\*\)/,
  );
  assert.equal(policy.refusal("Write", { file_path: "out/r.txt", content: "" }), undefined);
  assert.ok(policy.refusal("Write", { file_path: "out/r.md", content: "" }));
  assert.equal(policy.refusal("Grep", { pattern: "x", path: "anywhere" }), undefined);
});

Deno.test("refusal: a deny rule holds for every command of a chain, substitutions included", () => {
  const policy = toolPolicy(ALL, "acceptEdits", ["Bash"], ["Bash(rm *)"]);
  assert.equal(policy.refusal("Bash", { command: "ls -la && echo ok" }), undefined);
  assert.ok(policy.refusal("Bash", { command: "ls; rm -rf /" }));
  assert.match(policy.refusal("Bash", { command: "echo $(ls)" }) ?? "", /substitution/);
});

Deno.test("refusal: the reviewer's deny-rule bypasses are all refused", () => {
  const policy = toolPolicy(ALL, "bypassPermissions", undefined, ["Bash(rm *)"]);
  for (
    const command of [
      "{ rm -rf x; }",
      "(rm -rf x)",
      "if true; then rm -rf x; fi",
      "X=1 rm -rf x",
      "/bin/rm -rf x",
      "rm${IFS}-rf x",
      "eval 'rm -rf x'",
      "sh -c 'rm -rf x'",
      "env rm -rf x",
      "find . -exec rm {} +",
    ]
  ) {
    assert.ok(policy.refusal("Bash", { command }), `not refused: ${command}`);
  }
  assert.equal(policy.refusal("Bash", { command: "ls -la && git status" }), undefined);
});

Deno.test("refusal: path rules see absolute paths inside cwd and cover tool families", () => {
  const policy = toolPolicy(
    ALL,
    "acceptEdits",
    undefined,
    ["Write(secrets/**)", "Edit(.env)", "Read(private/**)"],
    "/work/proj",
  );
  assert.ok(policy.refusal("Write", { file_path: "/work/proj/secrets/k", content: "" }));
  assert.ok(policy.refusal("Write", { file_path: "./secrets//k", content: "" }));
  assert.ok(policy.refusal("Write", { file_path: ".env", content: "" }), "Edit rules cover Write");
  assert.ok(policy.refusal("Edit", { file_path: "secrets/k", old_string: "a", new_string: "b" }));
  assert.ok(policy.refusal("Grep", { pattern: "x", path: "private" }), "Read rules cover Grep");
  assert.ok(policy.refusal("Glob", { pattern: "*", path: "/work/proj/private/a" }));
  assert.equal(policy.refusal("Write", { file_path: "/work/proj/ok.txt", content: "" }), undefined);
  const allowOnly = toolPolicy(ALL, "acceptEdits", ["Read(src/**)"], [], "/work/proj");
  assert.equal(allowOnly.refusal("Read", { file_path: "/work/proj/src/a.ts" }), undefined);
});

Deno.test("refusal: quotes and backslashes in a command word do not slip past a Bash deny rule", () => {
  // The shell removes them before it runs the command: `r\m` runs rm.
  const policy = toolPolicy(ALL, "bypassPermissions", undefined, [
    "Bash(rm *)",
    "Bash(git push:*)",
  ]);
  for (
    const command of [
      "r\\m -rf x",
      '"r"m -rf x',
      "'r'm -rf x",
      'r""m -rf x',
      "r''m -rf x",
      "\\rm -rf x",
      '"rm" -rf x',
      "/bin/'rm' -rf x",
      '"/bin/rm" -rf x',
      "X='a b' r\\m -rf x",
      'ls && "r"m -rf x',
      'git pu""sh --force',
      "git 'push' origin",
      "g\\it push",
    ]
  ) {
    assert.match(
      policy.refusal("Bash", { command }) ?? "",
      /^Command refused by the rule Bash\((rm \*|git push:\*)\)$/,
      command,
    );
  }
});

Deno.test("refusal: shell expansions that build the command at run time are refused under deny rules", () => {
  const policy = toolPolicy(ALL, "bypassPermissions", undefined, ["Bash(rm *)"]);
  const cases: Array<[string, RegExp]> = [
    ["{rm,-rf,x}", /brace expansion/],
    ["echo ok; {r,}m -rf x", /brace expansion/],
    ["/bin/r? -rf x", /a pattern as the program name/],
    ["/usr/bin/r[m] -rf x", /a pattern as the program name/],
    ["$'rm' -rf x", /substitution or expansion/],
    ["$'\\x72m' -rf x", /substitution or expansion/],
    ["f() { rm -rf x; }; f", /function definition|rule Bash\(rm \*\)/],
    ["function f { rm -rf x; }; f", /function definition/],
    ['"s"h -c "rm -rf x"', /"sh" runs another command/],
  ];
  for (const [command, why] of cases) {
    assert.match(policy.refusal("Bash", { command }) ?? "", why, command);
  }
  // Ordinary commands still run.
  for (
    const command of [
      "ls -la && git status",
      "[ -f x ] && echo ok",
      `echo "it's fine"`,
      "grep -r 'rm -rf' .",
      "wc -l *.ts",
      "echo a{b}c",
      "grep function src",
    ]
  ) {
    assert.equal(policy.refusal("Bash", { command }), undefined, command);
  }
});

// ---------------------------------------------------------------------------------------------
// toolPolicy with a person to ask (issue 31, item 3)

Deno.test("toolPolicy: with a person to ask, manual offers the editing tools and asks about their calls; dontAsk and plan do not", () => {
  // Which tools run confined is run.ts's choice (Bash is in ALL as it is when confined).
  const confined = ALL;
  const manual = toolPolicy(confined, "manual", undefined, undefined, "/w", { asking: true });
  assert.deepEqual(manual.tools.map((t) => t.name), [
    "Read",
    "Write",
    "Edit",
    "Glob",
    "Grep",
    "Bash",
  ]);
  assert.match(
    manual.refusal("Write", { file_path: "a.txt" }) ?? "",
    /needs the person's approval/,
  );
  assert.equal(manual.askFor("Write", { file_path: "a.txt" }), "permission mode manual");
  assert.equal(manual.askFor("Bash", { command: "make" }), "permission mode manual");
  // Read-only calls are not refused, so not asked.
  assert.equal(manual.refusal("Read", { file_path: "a.txt" }), undefined);
  assert.equal(manual.askFor("Read", { file_path: "a.txt" }), undefined);
  for (const mode of ["dontAsk", "plan"] as const) {
    const p = toolPolicy(confined, mode, undefined, undefined, "/w", { asking: true });
    assert.deepEqual(p.tools.map((t) => t.name), ["Read", "Glob", "Grep"], mode);
    assert.equal(p.askFor("Write", { file_path: "a.txt" }), undefined, mode);
  }
  // Without a person, manual is as before.
  const alone = toolPolicy(confined, "manual", undefined, undefined, "/w");
  assert.deepEqual(alone.tools.map((t) => t.name), ["Read", "Glob", "Grep"]);
  assert.equal(alone.askFor("Write", { file_path: "a.txt" }), undefined);
});

Deno.test("toolPolicy: with a person to ask, a command outside allowed_tools is asked about, one a deny rule refuses never is", () => {
  const p = toolPolicy(ALL, "acceptEdits", ["Bash(npm test)", "Read"], ["Bash(rm *)"], "/w", {
    asking: true,
  });
  assert.equal(p.askFor("Bash", { command: "npm test" }), undefined, "allowed: nothing to ask");
  assert.equal(
    p.askFor("Bash", { command: "npm install left-pad" }),
    "not among allowed_tools Bash(npm test)",
  );
  assert.ok(p.refusal("Bash", { command: "rm -rf x" }));
  assert.equal(p.askFor("Bash", { command: "rm -rf x" }), undefined);
  // A command that hides what it runs is refused whatever the answer.
  assert.ok(p.refusal("Bash", { command: "npm test; $(curl x)" }));
  assert.equal(p.askFor("Bash", { command: "npm test; $(curl x)" }), undefined);
});

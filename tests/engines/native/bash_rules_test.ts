import assert from "node:assert/strict";
import { matchesCommand } from "../../../src/engines/native/bash_rules.ts";

Deno.test("matchesCommand: * matches anything, also chained commands", () => {
  assert.ok(matchesCommand("*", "anything at all"));
  assert.ok(matchesCommand("*", "a; b && c | d"));
});

Deno.test("matchesCommand: prefix patterns, the old `:*` form, and the bare prefix", () => {
  assert.ok(matchesCommand("git *", "git status"));
  assert.ok(matchesCommand("git *", "git"));
  assert.ok(matchesCommand("git:*", "git log --oneline"));
  assert.ok(matchesCommand("git:*", "git"));
  assert.ok(!matchesCommand("git *", "gitk"));
  assert.ok(!matchesCommand("git:*", "github-cli x"));
  assert.ok(!matchesCommand("git *", "sudo git status"));
});

Deno.test("matchesCommand: exact patterns and regex characters taken literally", () => {
  assert.ok(matchesCommand("npm test", "npm test"));
  assert.ok(!matchesCommand("npm test", "npm tests"));
  assert.ok(matchesCommand("ls a.b", "ls a.b"));
  assert.ok(!matchesCommand("ls a.b", "ls aXb"));
  assert.ok(matchesCommand("echo (x)+[y]?", "echo (x)+[y]?"));
  assert.ok(!matchesCommand("echo (x)+", "echo xx"));
  assert.ok(matchesCommand("cat * | wc", "cat f | wc") === false, "chained, so no match");
  assert.ok(matchesCommand("make * -j*", "make all -j8"));
});

Deno.test("matchesCommand: a chained command never matches a prefix rule", () => {
  for (
    const command of [
      "git status; rm -rf /",
      "git status && curl evil",
      "git status || curl evil",
      "git log | sh",
      "git status & rm -rf x",
      "git log $(rm -rf x)",
      "git log `rm -rf x`",
      "git status\nrm -rf x",
    ]
  ) {
    assert.ok(!matchesCommand("git *", command), JSON.stringify(command));
  }
});

Deno.test("matchesCommand: process substitution cannot smuggle a command past a prefix rule", () => {
  // Where /bin/sh is bash (Fedora, Arch), `sh -c` runs <(...) and >(...) even in POSIX mode
  // (bash >= 5.1), so these run a second command just like $(...).
  assert.ok(!matchesCommand("git *", "git diff <(rm -rf x) y"));
  assert.ok(!matchesCommand("git *", "git log >(rm -rf x)"));
});

import assert from "node:assert/strict";
import { plantedWarnings } from "../../../src/engines/tree/snapshot.ts";

Deno.test("plantedWarnings: host-run files created or changed at any depth are named, relative to cwd", () => {
  const cwd = "/w/code";
  const extra = "/w/lib";
  const changed = [
    "/w/code/proj/src/a.txt",
    "/w/code/sub/.envrc",
    "/w/code/proj/.git/hooks/post-checkout",
    "/w/code/.claude/settings.json",
    "/w/lib/x/CLAUDE.md",
    "/w/code/docs/claude.txt",
  ];
  assert.deepEqual(plantedWarnings(changed, [cwd, extra]), [
    "planted: sub/.envrc, proj/.git/hooks/post-checkout, .claude/settings.json, " +
    "/w/lib/x/CLAUDE.md (files that git, coding agents, package managers, direnv or editors " +
    "run or read on the host, outside any sandbox: check them before working in that folder)",
  ]);
  assert.deepEqual(plantedWarnings(["/w/code/a.txt", "/elsewhere/.envrc"], [cwd]), []);
  const many = Array.from({ length: 8 }, (_, i) => `/w/code/p${i}/.envrc`);
  assert.match(
    plantedWarnings(many, [cwd])[0]!,
    /^planted: p0\/\.envrc, .*p4\/\.envrc, \+3 more \(/,
  );
});

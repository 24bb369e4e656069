/**
 * The turn-start identities of protected files (src/guard/identities.ts): what they
 * find under other names (link targets, hard links, links out of host-run folders), the
 * widened secret names, the user's allowed names, and that they say so when a bound stopped
 * them (callers then fail closed).
 */
import assert from "node:assert/strict";
import { link, mkdir, realpath, rm, stat, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { collectGuardIdentities, identityKey } from "../../src/guard/identities.ts";
import {
  pathIdentityRefusal,
  readIdentityRefusal,
  writeIdentityRefusal,
} from "../../src/guard/refusals.ts";

async function withTree(fn: (top: string) => Promise<void>): Promise<void> {
  const top = await realpath(await Deno.makeTempDir({ prefix: "guard_identities_" }));
  try {
    await fn(top);
  } finally {
    await rm(top, { recursive: true, force: true });
  }
}

async function put(path: string, text = "x"): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
}

const key = async (path: string) => identityKey(await stat(path));

Deno.test("guard: host-run paths under other names, by identity and by path", async () => {
  await withTree(async (top) => {
    await put(join(top, "tools/claude/settings.json"), "{}");
    await symlink("tools/claude", join(top, ".claude"));
    await put(join(top, "config/mcp.json"), "{}");
    await symlink("config/mcp.json", join(top, ".mcp.json"));
    await put(join(top, "RULES.md"), "be nice");
    await symlink("RULES.md", join(top, "CLAUDE.md"));
    await put(join(top, "sub/.envrc"), "export A=1");
    await link(join(top, "sub/.envrc"), join(top, "sub/envrc.bak"));
    await put(join(top, ".git/config"), "[core]");
    await put(join(top, "hooks/pre-commit"), "#!/bin/sh");
    await symlink("../hooks/pre-commit", join(top, ".git/hooks-pre-commit"));
    await put(join(top, "nested/.vscode/tasks.json"), "{}");
    await link(join(top, "nested/.vscode/tasks.json"), join(top, "tasks-copy.json"));
    await put(join(top, "src/a.ts"), "ok");
    const g = await collectGuardIdentities([top]);
    assert.equal(g.incomplete, undefined);
    assert.equal(g.hostRun.get(await key(join(top, "tools/claude"))), join(top, ".claude"));
    assert.equal(g.hostRun.get(await key(join(top, "config/mcp.json"))), join(top, ".mcp.json"));
    assert.equal(g.hostRun.get(await key(join(top, "RULES.md"))), join(top, "CLAUDE.md"));
    assert.equal(g.hostRun.get(await key(join(top, "sub/envrc.bak"))), join(top, "sub/.envrc"));
    assert.equal(g.hostRun.get(await key(join(top, "hooks/pre-commit"))), join(top, ".git"));
    assert.equal(
      g.hostRun.get(await key(join(top, "tasks-copy.json"))),
      join(top, "nested/.vscode"),
    );
    assert.equal(g.hostRun.has(await key(join(top, "src/a.ts"))), false);
    assert.equal(g.hostRun.has(await key(join(top, "src"))), false);
    assert.deepEqual(g.hostRunPaths, [
      join(top, "RULES.md"),
      join(top, "config/mcp.json"),
      join(top, "hooks/pre-commit"),
      join(top, "sub/envrc.bak"),
      join(top, "tasks-copy.json"),
      join(top, "tools/claude"),
    ]);
    assert.match(
      writeIdentityRefusal(g, await stat(join(top, "tools/claude"))) ?? "",
      /^it is "\.claude" under another name .*"\.claude" is run or trusted by the host's own/,
    );
    assert.match(
      await pathIdentityRefusal(g, join(top, "tools/claude/new/x.md"), "write") ?? "",
      /"tools\/claude" is "\.claude" under another name/,
    );
    assert.equal(await pathIdentityRefusal(g, join(top, "src/b.ts"), "write"), undefined);
  });
});

Deno.test("guard: a host-run link to what does not exist yet protects the path it names", async () => {
  await withTree(async (top) => {
    await symlink("RULES.md", join(top, "CLAUDE.md"));
    await symlink("docs/claude", join(top, ".claude"));
    // Inside a host-run folder the name protects it already.
    await mkdir(join(top, ".vscode"));
    await symlink(".vscode/mcp.json", join(top, ".mcp.json"));
    const g = await collectGuardIdentities([top]);
    const byPath = [...g.hostRunMissing].sort((a, b) => a.path < b.path ? -1 : 1);
    assert.deepEqual(byPath, [
      { path: join(top, "RULES.md"), kind: "file" },
      { path: join(top, "docs/claude"), kind: "dir" },
    ]);
    assert.match(
      await pathIdentityRefusal(g, join(top, "RULES.md"), "write") ?? "",
      /"RULES\.md" is "CLAUDE\.md" under another name/,
    );
    assert.match(
      await pathIdentityRefusal(g, join(top, "docs/claude/settings.json"), "write") ?? "",
      /"docs\/claude" is "\.claude" under another name/,
    );
  });
});

Deno.test("guard: secret files by the widened names, their links, hard links and allowed names", async () => {
  await withTree(async (top) => {
    const secrets = [
      ".env",
      "app/.env.local",
      "deploy/app.env",
      ".envrc",
      "infra/prod.tfvars",
      "infra/terraform.tfstate.backup",
      "worker/.dev.vars",
      "certs/server.key",
      ".devcontainer/.env",
    ];
    for (const path of secrets) await put(join(top, path), `SECRET ${path}`);
    for (
      const path of [".env.example", "deploy/app.env.sample", "src/environment.ts", "main.tf"]
    ) await put(join(top, path), "fine");
    await link(join(top, ".env"), join(top, "notes.txt"));
    await put(join(top, "config/real.txt"), "TOKEN=1");
    await symlink("config/real.txt", join(top, "prod.env"));
    const g = await collectGuardIdentities([top]);
    assert.deepEqual(
      g.secretPaths,
      [...secrets, "notes.txt", "config/real.txt"].map((p) => join(top, p)).sort(),
    );
    assert.equal(g.secret.get(await key(join(top, "notes.txt"))), join(top, ".env"));
    assert.equal(g.secret.get(await key(join(top, "config/real.txt"))), join(top, "prod.env"));
    assert.match(
      readIdentityRefusal(g, await stat(join(top, "notes.txt"))) ?? "",
      /^it is the secret file "\.env" under another name .*looks like a secret/,
    );
    assert.equal(readIdentityRefusal(g, await stat(join(top, "main.tf"))), undefined);
    // The user's allowed names are not collected: their hard links read as they do.
    const allowed = await collectGuardIdentities([top], { allowSecretFiles: [".env", "*.env"] });
    assert.equal(readIdentityRefusal(allowed, await stat(join(top, "notes.txt"))), undefined);
    assert.equal(allowed.secretPaths.includes(join(top, ".env")), false);
    assert.equal(allowed.secretPaths.includes(join(top, "config/real.txt")), false);
    assert.equal(allowed.secretPaths.includes(join(top, "certs/server.key")), true);
  });
});

Deno.test("guard: a bound reached makes it incomplete, and the checks fail closed", async () => {
  await withTree(async (top) => {
    await put(join(top, "a/b/c/d/e.txt"), "deep");
    await put(join(top, "x.txt"), "one link");
    await link(join(top, "x.txt"), join(top, "y.txt"));
    const g = await collectGuardIdentities([top], { bounds: { maxDirs: 1000, maxDepth: 2 } });
    assert.match(g.incomplete ?? "", /nested deeper than 2 folders/);
    assert.equal(g.pathsIncomplete, g.incomplete);
    assert.match(
      writeIdentityRefusal(g, await stat(join(top, "a"))) ?? "",
      /could not all be checked .* writes are refused this turn/,
    );
    assert.match(readIdentityRefusal(g, await stat(join(top, "x.txt"))) ?? "", /2 hard links/);
    assert.equal(readIdentityRefusal(g, await stat(join(top, "a/b/c/d/e.txt"))), undefined);
    // Inside host-run folders too, and when looking for other hard links.
    await put(join(top, "p/.claude/skills/s1.md"));
    await put(join(top, "p/.claude/skills/s2.md"));
    const small = await collectGuardIdentities([top], { maxHostRunEntries: 2 });
    assert.match(small.incomplete ?? "", /host-run folders .* hold over 2 entries/);
    await put(join(top, ".env"), "K=1");
    await link(join(top, ".env"), join(top, "env-link"));
    const links = await collectGuardIdentities([top], { maxLinkSearchFiles: 3 });
    assert.equal(links.incomplete, undefined);
    assert.match(links.pathsIncomplete ?? "", /over 3 files to look through for other hard links/);
  });
});

Deno.test("guard: git's object store and Claude Code's worktrees are not walked as host-run content", async () => {
  await withTree(async (top) => {
    for (let i = 0; i < 30; i++) {
      await put(join(top, `.git/objects/a${i}/obj`));
      await put(join(top, `.git/modules/sub/refs/heads/b${i}`));
      await put(join(top, `.claude/worktrees/w/src/f${i}.ts`));
    }
    await put(join(top, ".claude/skills/worktrees/s.md"));
    await put(join(top, "x.txt"));
    await link(join(top, "x.txt"), join(top, ".claude/skills/worktrees/hard.md"));
    const g = await collectGuardIdentities([top], { maxHostRunEntries: 20 });
    assert.equal(g.incomplete, undefined);
    // Below `.claude/skills`, a folder of that name is walked as any other.
    assert.equal(g.hostRun.get(await key(join(top, "x.txt"))), join(top, ".claude"));
    assert.deepEqual(g.hostRunPaths, [join(top, "x.txt")]);
  });
});

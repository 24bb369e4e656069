import assert from "node:assert/strict";
import {
  credentialRefusal,
  hostRunPart,
  isHostRunDir,
  isHostRunEntry,
  isSecretFileName,
  readRefusal,
  storeHeads,
  writeRefusal,
} from "../../src/guard/protected_paths.ts";

Deno.test("writeRefusal: host-run paths at any depth, with everything below them", () => {
  for (
    const path of [
      ".git",
      ".git/config",
      ".git/hooks/pre-commit",
      "./.claude/settings.json",
      ".claude/commands/x.md",
      ".mcp.json",
      ".envrc",
      ".vscode/tasks.json",
      "CLAUDE.md",
      "ollama-mcp.config.json",
      ".husky/pre-commit",
      ".ollama-delegate/agents/a.md",
    ]
  ) {
    assert.match(writeRefusal(path) ?? "", /host's own tools/, path);
  }
  // git, Claude Code, direnv and editors honour these in any folder they run in: a delegate
  // working in a folder of projects must not reach `proj/.git/hooks`.
  const nested: [string, string][] = [
    ["proj/.git/hooks/pre-commit", "proj/.git"],
    ["proj/.git", "proj/.git"],
    ["a/b/.claude/settings.json", "a/b/.claude"],
    ["src/CLAUDE.md", "src/CLAUDE.md"],
    ["docs/.vscode/x", "docs/.vscode"],
    ["sub/.envrc", "sub/.envrc"],
    ["x/y/lefthook.yml", "x/y/lefthook.yml"],
    ["srv/.ollama-delegate/agents/a.md", "srv/.ollama-delegate"],
    ["srv/ollama-mcp.config.json", "srv/ollama-mcp.config.json"],
  ];
  for (const [path, named] of nested) {
    assert.equal(hostRunPart(path), named, path);
    assert.match(writeRefusal(path) ?? "", new RegExp(`^"${named}" is run or trusted`), path);
  }
  for (const path of ["gitconfig", ".gitignore", "src/a.ts", "docs/claude.md.txt", "a/.github/x"]) {
    assert.equal(writeRefusal(path), undefined, path);
    assert.equal(hostRunPart(path), undefined, path);
  }
});

Deno.test("credential paths are refused at any depth, for reading and writing", () => {
  for (
    const path of [
      ".ssh/id_rsa",
      "home/u/.ssh",
      "x/.aws/credentials",
      ".config/gcloud/a",
      "a/b/.netrc",
      ".ollama-mcp/config.json",
      "u/.local/share/keyrings/k",
    ]
  ) {
    assert.ok(credentialRefusal(path), path);
    assert.match(writeRefusal(path) ?? "", /credentials/, path);
    assert.match(readRefusal(path) ?? "", /credentials/, path);
  }
  assert.equal(credentialRefusal(".config/other/x"), undefined);
  assert.equal(credentialRefusal("sshkeys/readme"), undefined);
});

Deno.test("readRefusal: secret files unless templates or allowed by name", () => {
  for (
    const path of [
      ".env",
      "app/.env.local",
      "certs/server.pem",
      "tls.key",
      "id_rsa",
      "keys/id_ed25519",
      "prod.tfstate",
    ]
  ) {
    assert.match(readRefusal(path) ?? "", /looks like a secret/, path);
    assert.ok(isSecretFileName(path.split("/").at(-1)!), path);
  }
  for (const path of [".env.example", ".env.sample", "id_rsa.pub", "keyboard.ts", "src/env.ts"]) {
    assert.equal(readRefusal(path), undefined, path);
  }
  assert.equal(readRefusal(".env.test", [".env.test"]), undefined);
  assert.equal(readRefusal("fixtures/a.pem", ["*.pem"]), undefined);
  assert.ok(readRefusal(".env", [".env.test"]));
  // Allowing a name never opens a credential store.
  assert.ok(readRefusal(".ssh/config", ["config"]));
});

Deno.test("isSecretFileName: the widened names (dotenv by other names, direnv, Terraform, Wrangler)", () => {
  for (
    const name of [
      ".envrc",
      ".envrc.private",
      "app.env",
      "prod.env",
      ".dev.vars",
      ".dev.vars.staging",
      ".secrets",
      "prod.tfvars",
      "x.auto.tfvars",
      "prod.tfvars.json",
      "terraform.tfstate.backup",
      ".pgpass",
      ".htpasswd",
      "putty.ppk",
      "AuthKey_ABC123.p8",
      "service.keytab",
      ".ENV",
      "App.ENV",
    ]
  ) {
    assert.ok(isSecretFileName(name), name);
  }
  // Templates, code and manifests that are usually what the delegate is asked to work on.
  for (
    const name of [
      ".env.example",
      "app.env.sample",
      ".envrc.example",
      "prod.tfvars.example",
      ".dev.vars.example",
      "environment.ts",
      "env.go",
      "main.tf",
      "variables.tf",
      "secrets.yaml",
      "secret.yaml",
      "envrc.md",
    ]
  ) {
    assert.equal(isSecretFileName(name), false, name);
  }
  // `.envrc` is host-run (never written) and a secret (never read).
  assert.match(writeRefusal(".envrc") ?? "", /host's own tools/);
  assert.match(readRefusal(".envrc") ?? "", /looks like a secret \(\.envrc\)/);
  assert.equal(isSecretFileName("app.env", ["*.env"]), false);
  assert.equal(isSecretFileName("APP.ENV", ["app.env"]), false);
});

Deno.test("host-run paths: other agents' files and package-manager configuration at any depth; a folder's other entries stay the project's", () => {
  for (
    const rel of [
      "AGENTS.md",
      "pkg/AGENTS.md",
      ".npmrc",
      "apps/web/.npmrc",
      ".github/hooks/x.json",
      "sub/.github/copilot-instructions.md",
      ".cursor/mcp.json",
      ".yarn/releases/yarn-4.cjs",
      ".config/mise/config.toml",
      "crates/a/.cargo/config.toml",
    ]
  ) {
    assert.ok(writeRefusal(rel), rel);
  }
  assert.equal(hostRunPart("pkg/.github/hooks/pre.json"), "pkg/.github/hooks");
  for (
    const rel of [
      ".github/workflows/ci.yml",
      ".github/ISSUE_TEMPLATE/bug.md",
      ".yarn/cache/x.zip",
      "hooks/x.json",
      "src/agents.ts",
      ".config/other.toml",
    ]
  ) {
    assert.equal(writeRefusal(rel), undefined, rel);
  }
  assert.equal(isHostRunEntry(".github", "hooks"), true);
  assert.equal(isHostRunEntry("src", "hooks"), false);
  assert.equal(isHostRunDir("/p/.github/hooks"), true);
  assert.equal(isHostRunDir("/p/.github/mcp.json"), false);
});

Deno.test("storeHeads: the folders a store of several parts is known by, shallow first", () => {
  assert.deepEqual(storeHeads("/p/tools/.config/gh"), ["/p/tools/.config"]);
  assert.deepEqual(storeHeads("/p/.config/helm/registry"), ["/p/.config", "/p/.config/helm"]);
  assert.deepEqual(storeHeads("/p/a/.local/share/uv/credentials"), [
    "/p/a/.local",
    "/p/a/.local/share",
    "/p/a/.local/share/uv",
  ]);
  assert.deepEqual(storeHeads("/p/sub/.ssh"), []);
  assert.deepEqual(storeHeads("/p/docs/gh"), []);
});

import assert from "node:assert/strict";
import {
  credentialRefusal,
  isSecretFileName,
  readRefusal,
  writeRefusal,
} from "../../src/engines/protected_paths.ts";

Deno.test("writeRefusal: host-run paths at the top of a root, with everything below them", () => {
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
  // Only at the top: a nested CLAUDE.md or docs/.vscode is ordinary project content.
  for (const path of ["src/CLAUDE.md", "docs/.vscode/x", "gitconfig", ".gitignore", "src/a.ts"]) {
    assert.equal(writeRefusal(path), undefined, path);
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

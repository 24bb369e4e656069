import assert from "node:assert/strict";
import {
  CREDENTIAL_PATHS,
  HOST_RUN_PATHS,
  isSecretFileName,
  SECRET_FILE_PATTERNS,
} from "../../../src/guard/protected_paths.ts";
import { isMarkedName } from "../../../src/engines/tree/names.ts";

/** Names made from each pattern: its stars filled, in several cases, with neighbours. */
function namesFrom(pattern: string): string[] {
  const fills = ["", "x", "prod", ".d", "a.b"];
  const out = fills.map((f) => pattern.replaceAll("*", f));
  return [...out, ...out.map((n) => n.toUpperCase()), ...out.map((n) => `${n}.example`)];
}

Deno.test("tree names: every secret, host-run and credential name is kept; ordinary names are not", () => {
  const secretish = SECRET_FILE_PATTERNS.flatMap(namesFrom);
  for (const name of secretish) {
    if (isSecretFileName(name)) assert.ok(isMarkedName(name), name);
  }
  // A two-part entry (`.github/hooks`): its inner name, which the scan meets in its folder.
  for (const entry of HOST_RUN_PATHS) assert.ok(isMarkedName(entry.split("/").at(-1)!), entry);
  for (const name of CREDENTIAL_PATHS.filter((p) => !p.includes("/"))) {
    assert.ok(isMarkedName(name), name);
  }
  for (const name of ["index.js", "f12.js", "README.md", "package.json", ".gitignore", "env"]) {
    assert.equal(isMarkedName(name), false, name);
  }
  // Templates are no secrets, as for the file tools.
  assert.equal(isMarkedName(".env.example"), false);
});

import assert from "node:assert/strict";
import { storesAllHidden } from "../../../src/engines/claude/turn_confinement.ts";
import type { JailLayout } from "../../../src/engines/claude/jail.ts";

const jail = { cwd: "/w", writable: ["/w"], readOnly: [], root: false, tmpMb: 64 } as JailLayout;
const found = { nestedGit: [], credentials: ["/w/sub/.ssh"] };

Deno.test("storesAllHidden: only in the jail, and only when the turn found every store", () => {
  assert.equal(storesAllHidden(jail, found), true);
  // No jail: nothing hides them; the Read patterns are the file tools' line.
  assert.equal(storesAllHidden(undefined, found), false);
  // The turn did not look, the walk stopped at its limit, or a folder could not be read (a
  // command could chmod it open, and a store in it would be neither hidden nor denied).
  assert.equal(storesAllHidden(jail, undefined), false);
  assert.equal(storesAllHidden(jail, { ...found, capped: true }), false);
  assert.equal(storesAllHidden(jail, { ...found, unread: true }), false);
});

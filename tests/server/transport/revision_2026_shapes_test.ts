import assert from "node:assert/strict";
import { protocolFields } from "../../../src/server/transport/revision_2026_shapes.ts";

/** A 2026-07-28 request's params declaring `capabilities`. */
const params = (capabilities: Record<string, unknown>) => ({
  _meta: {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": capabilities,
  },
});

Deno.test("protocolFields: form elicitation is declared by `elicitation: {}` or `{ form }`, not by url alone (issue 31)", () => {
  assert.equal(protocolFields(params({}))?.elicitation, false);
  assert.equal(protocolFields(params({ elicitation: {} }))?.elicitation, true);
  assert.equal(protocolFields(params({ elicitation: { form: {}, url: {} } }))?.elicitation, true);
  assert.equal(protocolFields(params({ elicitation: { url: {} } }))?.elicitation, false);
  assert.equal(protocolFields(params({ elicitation: true }))?.elicitation, false);
  assert.equal(protocolFields({}), undefined, "a 2025 request claims nothing");
});

import assert from "node:assert/strict";
import { checkArguments } from "../../../src/engines/native/text_call_arguments.ts";
import { readTool } from "../../../src/engines/native/tools/read.ts";

Deno.test("checkArguments: required fields, types, enums and unknown names", () => {
  const read = { name: "Read", parameters: readTool.parameters };
  assert.equal(checkArguments(read, { file_path: "a" }), undefined);
  assert.equal(checkArguments(read, { file_path: "a", offset: 2 }), undefined);
  assert.match(checkArguments(read, { file_path: "a", offset: "2" }) ?? "", /must be an integer/);
  assert.match(checkArguments(read, { file_path: "a", colour: 1 }) ?? "", /no parameter "colour"/);
  assert.match(checkArguments(read, []) ?? "", /must be a JSON object/);
  const grep = {
    name: "Grep",
    parameters: {
      type: "object" as const,
      properties: { output_mode: { type: "string", enum: ["content", "count"] } },
    },
  };
  assert.match(checkArguments(grep, { output_mode: "all" }) ?? "", /one of content, count/);
});

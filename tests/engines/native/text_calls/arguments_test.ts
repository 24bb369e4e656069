import assert from "node:assert/strict";
import { checkArguments } from "../../../../src/engines/native/text_calls/arguments.ts";
import { readTool } from "../../../../src/engines/native/tools/read.ts";

Deno.test("checkArguments: required fields, types, enums and unknown names", () => {
  const read = { name: "Read", parameters: readTool.parameters };
  assert.equal(checkArguments(read, { file_path: "a" }), undefined);
  assert.equal(checkArguments(read, { file_path: "a", offset: 2 }), undefined);
  assert.match(checkArguments(read, { file_path: "a", offset: "2" }) ?? "", /must be an integer/);
  assert.match(checkArguments(read, { file_path: "a", colour: 1 }) ?? "", /no parameter "colour"/);
  assert.match(checkArguments(read, []) ?? "", /must be a JSON object/);
  // A parameter of Claude Code's Read that ours does not take is no error; types unchecked.
  assert.equal(checkArguments(read, { file_path: "a", pages: "1-3" }), undefined);
  assert.equal(checkArguments(read, { file_path: "a", allow_large: "yes" }), undefined);
  const bash = {
    name: "Bash",
    parameters: {
      type: "object" as const,
      properties: { command: { type: "string" } },
      required: ["command"],
    },
  };
  assert.equal(checkArguments(bash, { command: "ls", description: "List" }), undefined);
  assert.match(checkArguments(bash, { description: "List" }) ?? "", /needs "command"/);
  // Claude Code's Read has no "description": still refused there.
  assert.match(
    checkArguments(read, { file_path: "a", description: "x" }) ?? "",
    /no parameter "description"/,
  );
  const grep = {
    name: "Grep",
    parameters: {
      type: "object" as const,
      properties: { output_mode: { type: "string", enum: ["content", "count"] } },
    },
  };
  assert.match(checkArguments(grep, { output_mode: "all" }) ?? "", /one of content, count/);
});

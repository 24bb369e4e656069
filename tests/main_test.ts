/**
 * Which commands turn on V8's regex fallback under Node (src/node_main.ts): every one that may
 * run an engine, whose Grep and Glob run patterns a model wrote, and any command not known to
 * run none; the listing and hook commands skip it and the `node:v8` it loads.
 */
import assert from "node:assert/strict";
import { needsRegexFallback } from "../src/main.ts";

Deno.test("the regex fallback: on for the server and every command that may run an engine", () => {
  for (
    const argv of [[], ["serve"], ["review", "--gate"], ["doctor", "--probe"], ["models"], [
      "a-command-added-later",
    ]]
  ) {
    assert.equal(needsRegexFallback(argv), true, argv.join(" ") || "(no command)");
  }
});

Deno.test("the regex fallback: off for the commands that never run an engine", () => {
  for (
    const argv of [
      ["jobs"],
      ["jobs", "show", "d11250a8"],
      ["stats"],
      ["unread", "--hook"],
      [
        "config",
      ],
      ["--version"],
      ["--help"],
      ["help"],
    ]
  ) {
    assert.equal(needsRegexFallback(argv), false, argv.join(" "));
  }
});

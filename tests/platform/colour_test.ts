/**
 * The one colour rule of the terminal commands. It replaced two: the doctor's (a terminal and
 * no NO_COLOR) and the jobs commands' (the same, and not TERM=dumb). Each old case is here,
 * with FORCE_COLOR, which neither knew.
 */
import assert from "node:assert/strict";
import { colourWanted, paint } from "../../src/platform/colour.ts";

Deno.test("colourWanted: a terminal gets colour, a pipe does not", () => {
  assert.equal(colourWanted({}, true), true);
  assert.equal(colourWanted({ TERM: "xterm-256color" }, true), true);
  assert.equal(colourWanted({}, false), false);
});

Deno.test("colourWanted: any non-empty NO_COLOR turns it off; an empty one does not", () => {
  assert.equal(colourWanted({ NO_COLOR: "1" }, true), false);
  assert.equal(colourWanted({ NO_COLOR: "0" }, true), false);
  assert.equal(colourWanted({ NO_COLOR: "" }, true), true);
});

Deno.test("colourWanted: a dumb terminal gets none (the jobs commands' rule, now the doctor's)", () => {
  assert.equal(colourWanted({ TERM: "dumb" }, true), false);
});

Deno.test("colourWanted: FORCE_COLOR wins over NO_COLOR and a pipe; 0 and false turn it off", () => {
  assert.equal(colourWanted({ FORCE_COLOR: "1" }, false), true);
  assert.equal(colourWanted({ FORCE_COLOR: "3", NO_COLOR: "1" }, false), true);
  assert.equal(colourWanted({ FORCE_COLOR: "true", TERM: "dumb" }, true), true);
  assert.equal(colourWanted({ FORCE_COLOR: "0" }, true), false);
  assert.equal(colourWanted({ FORCE_COLOR: "false" }, true), false);
  assert.equal(colourWanted({ FORCE_COLOR: "" }, true), true, "empty is unset");
});

Deno.test("paint: SGR codes when on, closed by their own reset; the text as is when off", () => {
  assert.equal(paint("green", "PASS", true), "\x1b[32mPASS\x1b[39m");
  assert.equal(paint("dim", "fix", true), "\x1b[2mfix\x1b[22m");
  assert.equal(paint(["bold", "red"], "x", true), "\x1b[1m\x1b[31mx\x1b[39m\x1b[22m");
  assert.equal(paint("green", "PASS", false), "PASS");
});

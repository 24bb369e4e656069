import assert from "node:assert/strict";
import { normaliseCommand, shellWords } from "../../../src/engines/native/shell_words.ts";

Deno.test("shellWords: words as the shell splits and unquotes them", () => {
  assert.deepEqual(shellWords(`a 'b c' "d \\"e\\" \\x" f\\ g h""i`).words, [
    "a",
    "b c",
    'd "e" \\x',
    "f g",
    "hi",
  ]);
  assert.equal(shellWords("echo {a,b}").braces, true);
  assert.equal(shellWords("echo '{a,b}'").braces, false);
  assert.equal(shellWords("find . -exec rm {} +").braces, false);
  assert.equal(shellWords("X=1 /bin/r* -f").globbedProgram, true);
  assert.equal(shellWords("ls *.txt").globbedProgram, false);
  assert.equal(normaliseCommand(`( "/usr/bin/r"'m' -rf x`), "rm -rf x");
});

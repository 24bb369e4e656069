/**
 * Property test: for any arguments without CR/LF/NUL/Ctrl-Z and any batch file path, the
 * cmd.exe line we build, run through the model of cmd.exe (two passes, the second from a `%*`
 * shim) and of the MSVCRT split, gives every argument back unchanged, and cmd.exe acts on
 * nothing but our own zero-length `%cd:~,%` expansions: no operator outside quotes, no other
 * variable expanded, no dangling caret.
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import {
  caretEscape,
  cmdArguments,
  inertPercent,
  quoteArgument,
} from "../../../src/platform/windows/command_line.ts";
import { type CmdEvent, HOSTILE_ENV, simulateCmd } from "./support/windows_parse_model.ts";

const SHIM = '"C:\\Program Files\\nodejs\\node.exe" "C:\\npm\\cli.js"';

/** Pieces that matter to one of the three parsers, mixed with ordinary and exotic text. */
const token = fc.constantFrom(
  '"',
  '""',
  "\\",
  "\\\\",
  "\\\\\\",
  '\\"',
  '\\\\"',
  "%",
  "%%",
  "%PATH%",
  "%VAR%",
  "%cd:~,%",
  "%PATH:~0,1%",
  "%PATH:a=b%",
  "%=C:%",
  "!x!",
  "!",
  "^",
  "^^",
  "&",
  "&&",
  "|",
  "||",
  "<",
  ">",
  "2>&1",
  "(",
  ")",
  " ",
  "\t",
  ",",
  ";",
  "=",
  "*",
  "?",
  "'",
  "`",
  "[",
  "]",
  "a",
  "Z",
  "0",
  "calc.exe",
  'x" & calc.exe & "',
  "\u00e9",
  "\u4e2d\u6587",
  "\u{1F600}",
  "\u200b",
  "\u00a0",
  "\ud800",
);
// deno-lint-ignore no-control-regex -- these are exactly the characters cmd.exe cannot take
const UNESCAPABLE = /[\r\n\0\x1a]/g;
/** Arbitrary UTF-16, lone surrogates included, minus what we refuse on purpose. */
const anyText = fc.string({ unit: "binary", maxLength: 6 }).map((s) => s.replace(UNESCAPABLE, "_"));
const argument = fc.oneof(
  { weight: 6, arbitrary: fc.array(fc.oneof(token, token, anyText), { maxLength: 12 }) },
  { weight: 1, arbitrary: fc.constant([""]) },
).chain((parts) =>
  // Trailing backslash runs, which the closing quote must not swallow.
  fc.nat(3).map((n) => parts.join("") + (n === 3 ? "\\\\\\" : n === 2 ? "\\" : ""))
);
const pathSegment = fc.array(
  fc.constantFrom("a", "B", " ", "&", "(", ")", "%", "!", "^", ",", ";", "=", "\u00e9", "x86"),
  { minLength: 1, maxLength: 6 },
).map((chars) => chars.join(""));
const script = fc.tuple(fc.array(pathSegment, { maxLength: 3 }), fc.constantFrom(".cmd", ".bat"))
  .map(([dirs, ext]) => ["C:", ...dirs, `tool${ext}`].join("\\"));

function unintended(events: CmdEvent[]): CmdEvent[] {
  return events.filter((e) => !(e.kind === "expansion" && e.spec.toLowerCase() === "cd:~,"));
}

const RUNS = 15_000;

Deno.test("property: escape, then cmd.exe twice (%* shim) and MSVCRT, gives every argument back", () => {
  let checked = 0;
  const started = performance.now();
  fc.assert(
    fc.property(script, fc.array(argument, { minLength: 5, maxLength: 10 }), (file, args) => {
      checked += args.length;
      const run = simulateCmd(cmdArguments(file, args), HOSTILE_ENV, SHIM);
      assert.equal(run.file, file);
      assert.deepEqual(run.argv, args);
      assert.deepEqual(run.argvLegacy, args);
      assert.deepEqual(unintended(run.events), []);
    }),
    { numRuns: RUNS, seed: Number(Deno.env.get("FC_SEED") ?? Date.now() % 2 ** 31) },
  );
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`  ${checked} generated arguments checked in ${seconds} s`);
  assert.ok(checked >= 100_000, `only ${checked} arguments`);
});

Deno.test("property: one caret pass suffices when cmd.exe starts the program itself", () => {
  fc.assert(
    fc.property(fc.array(argument, { minLength: 1, maxLength: 8 }), (args) => {
      const words = [
        '"C:\\bin\\prog.exe"',
        ...args.map((a) => caretEscape(inertPercent(quoteArgument(a)))),
      ];
      const run = simulateCmd(
        ["/d", "/e:on", "/v:off", "/s", "/c", `"${words.join(" ")}"`],
        HOSTILE_ENV,
      );
      assert.equal(run.file, "C:\\bin\\prog.exe");
      assert.deepEqual(run.argv, args);
      assert.deepEqual(unintended(run.events), []);
    }),
    { numRuns: 2_000 },
  );
});

import assert from "node:assert/strict";
import { isDelegateError } from "../../../src/errors.ts";
import {
  batchCommandLine,
  caretEscape,
  cmdArguments,
  escapeBatchArgument,
  inertPercent,
  isBatchFile,
  quoteArgument,
} from "../../../src/platform/windows/command_line.ts";
import { windowsLaunch } from "../../../src/platform/windows/launch.ts";
import { allowlistedEnv } from "../../../src/platform/env.ts";
import {
  type CmdEnv,
  type CmdEvent,
  HOSTILE_ENV,
  parseCrtCommandLine,
  simulateCmd,
} from "./support/windows_parse_model.ts";

const SCRIPT = "C:\\Users\\me\\AppData\\Roaming\\npm\\claude.cmd";
/** npm's cmd-shim forwards `%*` to node with the package's entry point. */
const SHIM = '"C:\\Program Files\\nodejs\\node.exe" "C:\\npm\\cli.js"';

/** Every event is one of the zero-length `%cd:~,%` expansions that make `%` inert. */
function unintended(events: CmdEvent[]): CmdEvent[] {
  return events.filter((e) => !(e.kind === "expansion" && e.spec.toLowerCase() === "cd:~,"));
}

function runThroughShim(script: string, args: string[], env: CmdEnv = HOSTILE_ENV) {
  return simulateCmd(cmdArguments(script, args), env, SHIM);
}

Deno.test("quoteArgument: MSVCRT quoting, 2n+1 backslashes before a quote, 2n at the end", () => {
  const cases: Array<[string, string]> = [
    ["", '""'],
    ["a", '"a"'],
    ["a b", '"a b"'],
    ['a"b', '"a\\"b"'],
    ["a\\b", '"a\\b"'],
    ["a\\", '"a\\\\"'],
    ["a\\\\", '"a\\\\\\\\"'],
    ['a\\"b', '"a\\\\\\"b"'],
    ['\\\\"', '"\\\\\\\\\\""'],
    ['"', '"\\""'],
  ];
  for (const [arg, quoted] of cases) {
    assert.equal(quoteArgument(arg), quoted, JSON.stringify(arg));
    // And the model's MSVCRT split gives the argument back.
    assert.deepEqual(parseCrtCommandLine(`p ${quoted}`, "ucrt"), ["p", arg]);
  }
});

Deno.test("caretEscape and inertPercent: exact output", () => {
  assert.equal(caretEscape('"a&b|c<d>e(f)g^h!i"'), '^"a^&b^|c^<d^>e^(f^)g^^h^!i^"');
  assert.equal(caretEscape("plain, text; =*?"), "plain, text; =*?");
  assert.equal(inertPercent("%PATH%"), "%%cd:~,%PATH%%cd:~,%");
});

Deno.test("cmdArguments: cmd.exe switches and the whole line in one pair of quotes", () => {
  assert.deepEqual(cmdArguments("C:\\a b\\x.cmd", ["-p", "a&b"]), [
    "/d",
    "/e:on",
    "/v:off",
    "/s",
    "/c",
    '""C:\\a b\\x.cmd" ^^^"-p^^^" ^^^"a^^^&b^^^""',
  ]);
  assert.deepEqual(cmdArguments("C:\\x.cmd", []).at(-1), '""C:\\x.cmd""');
});

Deno.test("known attacks arrive literally through cmd.exe and a %* shim", () => {
  const attacks = [
    'x" & calc.exe & "',
    "a&b",
    "%PATH%",
    '\\\\"',
    '\\"',
    "\\",
    "a b\\",
    '"',
    '""',
    "",
    "^",
    "!PATH!",
    "%PATH:a=b%",
    "%PATH:~0,1%",
    "%cd:~,%",
    "%%",
    "100%",
    "(echo pwned)",
    '" | calc & rem "',
    "^&calc",
    '\\" & calc & \\"',
    "é 中 😀",
  ];
  const run = runThroughShim(SCRIPT, attacks);
  assert.equal(run.file, SCRIPT);
  assert.deepEqual(run.argv, attacks);
  assert.deepEqual(run.argvLegacy, attacks);
  assert.deepEqual(unintended(run.events), []);
  // Every `%` was neutralised by exactly one zero-length expansion.
  const percents = attacks.join("").split("%").length - 1;
  assert.equal(run.events.length, percents);
});

Deno.test("a batch file path with spaces, &, parentheses, % and ! is run as given", () => {
  const script = "C:\\Program Files (x86)\\a&b\\%USERNAME%\\!x!^\\tool.bat";
  const run = runThroughShim(script, ["ok"]);
  assert.equal(run.file, script);
  assert.deepEqual(run.argv, ["ok"]);
  assert.deepEqual(unintended(run.events), []);
});

Deno.test("the model catches claude-ollama-delegate-mcp's and cross-spawn's holes (each can fail)", () => {
  const line = (words: string[]) => ["/d", "/s", "/c", `"${words.join(" ")}"`];
  // claude-ollama-delegate-mcp: arguments without spaces left unquoted and unescaped.
  const bare = simulateCmd(line(['"C:\\x.cmd"', "a&b"]), HOSTILE_ENV, SHIM);
  assert.ok(unintended(bare.events).some((e) => e.kind === "operator" && e.char === "&"));
  // One caret pass only: `\"` flips cmd.exe's quote state in the shim's pass.
  const once = (a: string) => caretEscape(quoteArgument(a));
  const single = simulateCmd(line(['"C:\\x.cmd"', once('a"&calc')]), HOSTILE_ENV, SHIM);
  assert.ok(unintended(single.events).some((e) => e.kind === "operator" && e.char === "&"));
  // `^%` before each percent (cross-spawn) still lets `%PATH:a=b^%` expand.
  const caretPercent = (a: string) =>
    caretEscape(caretEscape(quoteArgument(a))).replaceAll("%", "^%");
  const pct = simulateCmd(line(['"C:\\x.cmd"', caretPercent("%PATH:a=b%")]), HOSTILE_ENV, SHIM);
  assert.ok(unintended(pct.events).some((e) => e.kind === "expansion"));
  assert.notDeepEqual(pct.argv, ["%PATH:a=b%"]);
});

Deno.test("CR, LF, NUL and Ctrl-Z are refused with the argument's index", () => {
  const cases: Array<[string, RegExp]> = [
    ["line1\nline2", /argument 2 .*a line feed/],
    ["a\rb", /argument 2 .*a carriage return/],
    ["a\0b", /argument 2 .*a NUL character/],
    ["a\x1ab", /argument 2 .*Ctrl-Z/],
  ];
  for (const [bad, message] of cases) {
    assert.throws(
      () => cmdArguments(SCRIPT, ["--print", "ok", bad]),
      (e: unknown) => {
        assert.ok(isDelegateError(e), String(e));
        assert.match((e as Error).message, message);
        assert.match((e as Error).message, /claude\.cmd/);
        return true;
      },
    );
  }
  assert.throws(() => escapeBatchArgument("x\n", 7, SCRIPT), /Cannot pass argument 7 to/);
  assert.throws(() => batchCommandLine('C:\\a"b.cmd', []), TypeError);
  assert.throws(() => batchCommandLine("C:\\dir\\", []), TypeError);
  assert.throws(() => batchCommandLine("C:\\a\nb.cmd", []), /its own file name/);
});

Deno.test("isBatchFile: .bat/.cmd in any case, with Windows' ignored trailing dots and spaces", () => {
  for (const p of ["a.cmd", "A.CMD", "x\\y.Bat", "t.bat.", "t.bat  ", "t.cmd. ."]) {
    assert.equal(isBatchFile(p), true, p);
  }
  for (const p of ["a.exe", "a.com", "cmd", "a.cmdx", "a.bat.exe", "bat"]) {
    assert.equal(isBatchFile(p), false, p);
  }
});

Deno.test("windowsLaunch: .exe as given; .cmd via System32\\cmd.exe from the parent's spelling", () => {
  // The child environment keeps the parent's spelling of SystemRoot (allowlistedEnv).
  const env = allowlistedEnv({ SYSTEMROOT: "D:\\Win", Path: "C:\\bin", SECRET: "x" }, true);
  assert.deepEqual(env, { SYSTEMROOT: "D:\\Win", Path: "C:\\bin" });
  assert.deepEqual(windowsLaunch("C:\\bin\\claude.exe", ["-p", "a&b"], env), {
    command: "C:\\bin\\claude.exe",
    args: ["-p", "a&b"],
    verbatim: false,
  });
  const batch = windowsLaunch("C:\\bin\\claude.CMD", ["-p", "a&b"], env);
  assert.equal(batch.command, "D:\\Win\\System32\\cmd.exe");
  assert.equal(batch.verbatim, true);
  assert.deepEqual(batch.args, cmdArguments("C:\\bin\\claude.CMD", ["-p", "a&b"]));
  assert.deepEqual(simulateCmd(batch.args, HOSTILE_ENV, SHIM).argv, ["-p", "a&b"]);
  assert.throws(() => windowsLaunch("C:\\x.cmd", [], { Path: "C:\\bin" }), /SystemRoot is not set/);
  assert.throws(
    () => windowsLaunch("C:\\x.cmd", [], { SystemRoot: "C:\\My Windows" }),
    /contains a space/,
  );
});

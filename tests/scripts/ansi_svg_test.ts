/**
 * The terminal-to-SVG renderer behind the README's pictures: what a terminal would show, in
 * its colours, with every character of the text escaped for XML.
 */
import assert from "node:assert/strict";
import { ansiToSvg, escapeXml } from "../../scripts/ansi_svg.ts";
import { applySgr, DEFAULT_FG, PALETTE, Terminal } from "../../scripts/ansi_terminal.ts";

const ESC = "\x1b";

/** The text of each `<text>` line, tags dropped, entities left as they are. */
function lines(svg: string): string[] {
  return [...svg.matchAll(/<text xml:space="preserve"[^>]*>(.*?)<\/text>/g)].map((m) =>
    m[1]!.replace(/<[^>]+>/g, "")
  );
}

function textOf(text: string, columns = 40): string[] {
  const t = new Terminal(columns);
  t.write(text);
  return t.lines().map((l) => l.map((c) => c.ch).join(""));
}

Deno.test("ansi_svg: <, &, > and quotes in the text are escaped, never markup", () => {
  const svg = ansiToSvg(`a <b> && "c" 'd'\n</text><script>x</script>`, {
    columns: 60,
    title: "jobs <&>",
  });
  assert.deepEqual(lines(svg), [
    "a &#60;b&#62; &#38;&#38; &#34;c&#34; &#39;d&#39;",
    "&#60;/text&#62;&#60;script&#62;x&#60;/script&#62;",
  ]);
  assert.ok(!svg.includes("<script"), svg);
  assert.match(svg, /<title>jobs &#60;&#38;&#62;<\/title>/);
  assert.match(svg, /aria-label="jobs &#60;&#38;&#62;"/);
  assert.equal(escapeXml(`<&>"'`), "&#60;&#38;&#62;&#34;&#39;");
  // Every tag opened is closed: the document is one <svg> element.
  assert.equal(svg.match(/<text /g)?.length, svg.match(/<\/text>/g)?.length);
  assert.match(svg.trimEnd(), /^<svg [^]*<\/svg>$/);
});

Deno.test("ansi_svg: the console's SGR colours and weights become fills and classes", () => {
  const svg = ansiToSvg(
    `${ESC}[1m  ID${ESC}[0m\n${ESC}[32mcompleted${ESC}[0m ${ESC}[31mfailed${ESC}[0m ` +
      `${ESC}[33mrunning${ESC}[0m ${ESC}[2mdim${ESC}[0m plain`,
    { columns: 60 },
  );
  assert.match(svg, /<tspan x="[\d.]+" class="b"> {2}ID<\/tspan>/);
  assert.match(svg, new RegExp(`<tspan x="[\\d.]+" fill="${PALETTE[2]}">completed</tspan>`));
  assert.match(svg, new RegExp(`<tspan x="[\\d.]+" fill="${PALETTE[1]}">failed</tspan>`));
  assert.match(svg, new RegExp(`<tspan x="[\\d.]+" fill="${PALETTE[3]}">running</tspan>`));
  // Dim is a darker colour of its own, and plain text takes the default from its <text>.
  const dim = /<tspan x="[\d.]+" fill="(#[0-9a-f]{6})">dim<\/tspan>/.exec(svg);
  assert.ok(dim, svg);
  assert.notEqual(dim[1], DEFAULT_FG);
  assert.match(svg, /<tspan x="[\d.]+"> plain<\/tspan>/);
  // Runs start at their column: "failed" at column 10, 7.8 px a column after 14 px of padding.
  assert.match(svg, /<tspan x="92" fill="[^"]+">failed<\/tspan>/);
});

Deno.test("ansi_svg: SGR resets, bright, 256 and true colours", () => {
  let s = applySgr({}, [1, 31]);
  assert.deepEqual(s, { bold: true, fg: PALETTE[1] });
  s = applySgr(s, [22]);
  assert.deepEqual(s, { fg: PALETTE[1] });
  assert.deepEqual(applySgr(s, []), {});
  assert.deepEqual(applySgr({}, [92]), { fg: PALETTE[10] });
  assert.deepEqual(applySgr({}, [38, 5, 196]), { fg: "#ff0000" });
  assert.deepEqual(applySgr({}, [38, 2, 1, 2, 3]), { fg: "#010203" });
  assert.deepEqual(applySgr({}, [48, 5, 232]), { bg: "#080808" });
  // Out of range: ignored, not drawn black.
  assert.deepEqual(applySgr({}, [38, 2, 999, 0, 0]), {});
  const svg = ansiToSvg(`${ESC}[44m bg ${ESC}[0m`, { columns: 10 });
  assert.match(
    svg,
    new RegExp(`<rect x="14" y="\\d+" width="31.2" height="18" fill="${PALETTE[4]}"/>`),
  );
});

Deno.test("ansi_svg: a status line redrawn in place leaves only its last state", () => {
  assert.deepEqual(
    textOf(
      `--- job ---\r\n${ESC}[2mrunning 1s${ESC}[0m\r${ESC}[2K${ESC}[2mrunning 2s${ESC}[0m` +
        `\r${ESC}[2K[tool] Bash: ls\r\n--- completed ---\r\n`,
    ),
    ["--- job ---", "[tool] Bash: ls", "--- completed ---"],
  );
  // Erase to the end of the line, backspace, carriage return over text.
  assert.deepEqual(textOf(`abcdef${ESC}[3D${ESC}[K!\nxy\bZ\n12345\rab`), ["abc!", "xZ", "ab345"]);
});

Deno.test("ansi_svg: long lines wrap at the last column, as a terminal wraps them", () => {
  assert.deepEqual(textOf("0123456789abc", 10), ["0123456789", "abc"]);
  // Exactly full: no empty line after it.
  assert.deepEqual(textOf("0123456789\nnext", 10), ["0123456789", "next"]);
  assert.deepEqual(textOf("a\tb", 20), ["a       b"]);
});

Deno.test("ansi_svg: titles, private modes and sequences cut between writes draw nothing", () => {
  const t = new Terminal(40);
  t.write(`${ESC}[0G${ESC}]0;window title${ESC}\\${ESC}]8;;http://x${"\x07"}link${ESC}[?25l`);
  t.write(`${ESC}[3`);
  t.write(`2mgreen${ESC}[0m\x07\x00`);
  const [line] = t.lines();
  assert.equal(line!.map((c) => c.ch).join(""), "linkgreen");
  assert.equal(line![4]!.style.fg, PALETTE[2]);
  assert.equal(line![0]!.style.fg, undefined);
  assert.throws(() => new Terminal(0), /Cannot make a terminal 0 columns wide/);
});

/**
 * Turns what a program wrote to a terminal (text with ANSI escape sequences) into an SVG
 * picture of that terminal, for the README: monospace text on a dark window, in the colours
 * and weights the SGR sequences asked for (the terminal itself: scripts/ansi_terminal.ts).
 * Used by scripts/capture_jobs.ts.
 */
import {
  type Cell,
  type CellStyle,
  DEFAULT_BG,
  DEFAULT_FG,
  hex,
  Terminal,
} from "./ansi_terminal.ts";

export interface SvgOptions {
  columns: number;
  /** Shown in the window's title bar and read out by screen readers. */
  title?: string;
}

const FONT_SIZE = 13;
/** The advance of a monospace font, 0.6 em; each run is placed by its column anyway. */
const CHAR_WIDTH = 7.8;
const LINE_HEIGHT = 18;
const PAD = 14;
const BAR = 30;
const FONT = "ui-monospace, SFMono-Regular, Menlo, Consolas, 'Liberation Mono', " +
  "'DejaVu Sans Mono', monospace";

/** Text for SVG character data and attribute values. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function sameStyle(a: CellStyle, b: CellStyle): boolean {
  return a.fg === b.fg && a.bg === b.bg && !!a.bold === !!b.bold && !!a.dim === !!b.dim &&
    !!a.italic === !!b.italic && !!a.underline === !!b.underline && !!a.inverse === !!b.inverse;
}

/** Runs of equal style on one line, with the column each starts at. */
function runsOf(line: Cell[]): Array<{ col: number; text: string; style: CellStyle }> {
  const runs: Array<{ col: number; text: string; style: CellStyle }> = [];
  for (const [col, cell] of line.entries()) {
    const last = runs.at(-1);
    if (last && sameStyle(last.style, cell.style)) last.text += cell.ch;
    else runs.push({ col, text: cell.ch, style: cell.style });
  }
  return runs;
}

/** How much of its colour dim text keeps. */
const DIM = 0.6;

/** `a` and `b` (`#rrggbb`) mixed, `share` of `a`. */
function mix(a: string, b: string, share: number): string {
  const channel = (c: string, i: number) => parseInt(c.slice(1 + i * 2, 3 + i * 2), 16);
  const v = [0, 1, 2].map((i) => Math.round(channel(a, i) * share + channel(b, i) * (1 - share)));
  return hex(v[0]!, v[1]!, v[2]!)!;
}

const fmt = (n: number) => Number(n.toFixed(2)).toString();

/** The lines of a terminal as an SVG document. */
export function linesToSvg(lines: Cell[][], options: SvgOptions): string {
  const width = PAD * 2 + options.columns * CHAR_WIDTH;
  const height = BAR + PAD * 2 + Math.max(1, lines.length) * LINE_HEIGHT;
  const title = options.title ?? "terminal";
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${fmt(width)}" height="${height}" ` +
    `viewBox="0 0 ${fmt(width)} ${height}" role="img" aria-label="${escapeXml(title)}">`,
    `<title>${escapeXml(title)}</title>`,
    `<style>text{font-family:${FONT};font-size:${FONT_SIZE}px;white-space:pre}` +
    `.b{font-weight:bold}.i{font-style:italic}.u{text-decoration:underline}</style>`,
    `<rect width="100%" height="100%" rx="8" fill="${DEFAULT_BG}"/>`,
    `<rect width="100%" height="${BAR}" rx="8" fill="#2c313a"/>`,
    `<rect y="${BAR - 8}" width="100%" height="8" fill="#2c313a"/>`,
    ...["#ff5f57", "#febc2e", "#28c840"].map((c, i) =>
      `<circle cx="${18 + i * 20}" cy="${BAR / 2}" r="6" fill="${c}"/>`
    ),
    `<text x="${fmt(width / 2)}" y="${BAR / 2 + 4}" text-anchor="middle" fill="#9da5b4">` +
    `${escapeXml(title)}</text>`,
  ];
  for (const [row, line] of lines.entries()) {
    const y = BAR + PAD + row * LINE_HEIGHT;
    const spans: string[] = [];
    for (const run of runsOf(line)) {
      const s = run.style;
      const colour = (s.inverse ? s.bg ?? DEFAULT_BG : s.fg) ?? DEFAULT_FG;
      // Dim as a colour of its own: not every SVG renderer applies opacity to a tspan.
      const fg = s.dim ? mix(colour, DEFAULT_BG, DIM) : colour;
      const bg = s.inverse ? s.fg ?? DEFAULT_FG : s.bg;
      const x = PAD + run.col * CHAR_WIDTH;
      if (bg !== undefined) {
        out.push(
          `<rect x="${fmt(x)}" y="${y}" width="${fmt(run.text.length * CHAR_WIDTH)}" ` +
            `height="${LINE_HEIGHT}" fill="${bg}"/>`,
        );
      }
      if (run.text.trim() === "" && !s.underline) continue;
      const classes = [s.bold && "b", s.italic && "i", s.underline && "u"]
        .filter(Boolean).join(" ");
      spans.push(
        `<tspan x="${fmt(x)}"${fg === DEFAULT_FG ? "" : ` fill="${fg}"`}` +
          `${classes ? ` class="${classes}"` : ""}>${escapeXml(run.text)}</tspan>`,
      );
    }
    if (spans.length > 0) {
      // xml:space as well as the CSS: renderers that ignore white-space still keep spaces.
      out.push(
        `<text xml:space="preserve" y="${y + LINE_HEIGHT - 5}" fill="${DEFAULT_FG}">` +
          `${spans.join("")}</text>`,
      );
    }
  }
  out.push("</svg>");
  return out.join("\n") + "\n";
}

/** What a terminal `columns` wide shows after `text`, as an SVG document. */
export function ansiToSvg(text: string, options: SvgOptions): string {
  const terminal = new Terminal(options.columns);
  terminal.write(text);
  return linesToSvg(terminal.lines(), options);
}

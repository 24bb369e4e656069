/**
 * A small model of a terminal, for drawing what a program wrote to one (scripts/ansi_svg.ts):
 * printable characters at the cursor, wrapping at the last column, `\r`, `\n` (as a terminal
 * with `onlcr` shows it: back to the first column), `\b`, tabs, SGR colours and attributes,
 * erase in line (`\e[K`, `\e[2K`) and cursor moves along the line: what our console writes.
 * Everything else (OSC titles, other CSI sequences, control characters) is dropped, never
 * drawn. Every character counts as one column: the console prints no wide characters.
 */

/** How a cell looks: colours as `#rrggbb` (undefined = the terminal's default). */
export interface CellStyle {
  fg?: string;
  bg?: string;
  bold?: boolean;
  dim?: boolean;
  italic?: boolean;
  underline?: boolean;
  inverse?: boolean;
}

export interface Cell {
  ch: string;
  style: CellStyle;
}

export const DEFAULT_FG = "#d7dae0";
export const DEFAULT_BG = "#1d2026";

/** SGR 30-37 and 90-97 (40-47 and 100-107 for backgrounds): normal, then bright. */
export const PALETTE = [
  "#4b5263", // black
  "#ef6b73", // red
  "#8fcf6f", // green
  "#e5c07b", // yellow
  "#61afef", // blue
  "#c678dd", // magenta
  "#56b6c2", // cyan
  "#d7dae0", // white
  "#7f848e",
  "#ff8087",
  "#a5e075",
  "#f0d28a",
  "#7cc2ff",
  "#d99bf0",
  "#6fd0dd",
  "#ffffff",
] as const;

/** The 256-colour table: the 16 above, a 6x6x6 cube, then 24 greys. */
function colour256(n: number): string | undefined {
  if (!Number.isInteger(n) || n < 0 || n > 255) return undefined;
  if (n < 16) return PALETTE[n];
  if (n >= 232) return hex(8 + (n - 232) * 10, 8 + (n - 232) * 10, 8 + (n - 232) * 10);
  const i = n - 16;
  const level = (v: number) => (v === 0 ? 0 : 55 + v * 40);
  return hex(level(Math.floor(i / 36)), level(Math.floor(i / 6) % 6), level(i % 6));
}

/** `#rrggbb`, or undefined when a channel is not 0-255. */
export function hex(r: number, g: number, b: number): string | undefined {
  if (![r, g, b].every((v) => Number.isInteger(v) && v >= 0 && v <= 255)) return undefined;
  return "#" + [r, g, b].map((v) => v.toString(16).padStart(2, "0")).join("");
}

/** Applies one SGR sequence's parameters to a style; unknown parameters are ignored. */
export function applySgr(style: CellStyle, params: readonly number[]): CellStyle {
  let s: CellStyle = { ...style };
  const p = params.length === 0 ? [0] : params;
  for (let i = 0; i < p.length; i++) {
    const n = p[i]!;
    if (n === 0) s = {};
    else if (n === 1) s.bold = true;
    else if (n === 2) s.dim = true;
    else if (n === 3) s.italic = true;
    else if (n === 4) s.underline = true;
    else if (n === 7) s.inverse = true;
    else if (n === 22) s.bold = s.dim = false;
    else if (n === 23) s.italic = false;
    else if (n === 24) s.underline = false;
    else if (n === 27) s.inverse = false;
    else if (n >= 30 && n <= 37) s.fg = PALETTE[n - 30];
    else if (n >= 90 && n <= 97) s.fg = PALETTE[n - 90 + 8];
    else if (n === 39) delete s.fg;
    else if (n >= 40 && n <= 47) s.bg = PALETTE[n - 40];
    else if (n >= 100 && n <= 107) s.bg = PALETTE[n - 100 + 8];
    else if (n === 49) delete s.bg;
    else if (n === 38 || n === 48) {
      // 38;5;n or 38;2;r;g;b (48 the same for the background).
      let colour: string | undefined;
      if (p[i + 1] === 5) {
        colour = colour256(p[i + 2] ?? -1);
        i += 2;
      } else if (p[i + 1] === 2) {
        colour = hex(p[i + 2] ?? -1, p[i + 3] ?? -1, p[i + 4] ?? -1);
        i += 4;
      } else break;
      if (colour !== undefined) s[n === 38 ? "fg" : "bg"] = colour;
    }
  }
  // Drop the false flags, so equal looks compare equal.
  for (const key of Object.keys(s) as (keyof CellStyle)[]) {
    if (s[key] === false) delete s[key];
  }
  return s;
}

/** A terminal `columns` wide that keeps every line it was given (no scrolling off). */
export class Terminal {
  #lines: Cell[][] = [[]];
  #row = 0;
  #col = 0;
  /** The last column was written: the next printable character goes on a new line. */
  #pendingWrap = false;
  #style: CellStyle = {};
  /** An escape sequence cut by the end of a write, completed by the next one. */
  #partial = "";

  constructor(readonly columns: number) {
    if (!Number.isInteger(columns) || columns < 1) {
      throw new RangeError(
        `Cannot make a terminal ${columns} columns wide: need a positive integer`,
      );
    }
  }

  write(text: string): void {
    const input = this.#partial + text;
    this.#partial = "";
    let i = 0;
    while (i < input.length) {
      const ch = input[i]!;
      if (ch === "\x1b") {
        const used = this.#escape(input, i);
        if (used === undefined) {
          this.#partial = input.slice(i);
          return;
        }
        i += used;
        continue;
      }
      i++;
      if (ch === "\n") this.#newLine();
      else if (ch === "\r") this.#moveTo(0);
      else if (ch === "\b") this.#moveTo(Math.max(0, this.#col - 1));
      else if (ch === "\t") {
        this.#moveTo(Math.min(this.columns - 1, (Math.floor(this.#col / 8) + 1) * 8));
      } else if (ch < " " || ch === "\x7f" || (ch >= "\x80" && ch < "\xa0")) continue;
      else this.#put(ch);
    }
  }

  /** The lines so far, trailing blank cells and blank last lines dropped. */
  lines(): Cell[][] {
    const out = this.#lines.map((line) => {
      let end = line.length;
      while (end > 0 && line[end - 1]!.ch === " " && line[end - 1]!.style.bg === undefined) end--;
      return line.slice(0, end);
    });
    while (out.length > 0 && out.at(-1)!.length === 0) out.pop();
    return out;
  }

  #line(): Cell[] {
    while (this.#lines.length <= this.#row) this.#lines.push([]);
    return this.#lines[this.#row]!;
  }

  #put(ch: string): void {
    if (this.#pendingWrap) this.#newLine();
    const line = this.#line();
    while (line.length < this.#col) line.push({ ch: " ", style: {} });
    line[this.#col] = { ch, style: this.#style };
    if (this.#col === this.columns - 1) this.#pendingWrap = true;
    else this.#col++;
  }

  #newLine(): void {
    this.#row++;
    this.#col = 0;
    this.#pendingWrap = false;
    this.#line();
  }

  #moveTo(col: number): void {
    this.#col = Math.max(0, Math.min(this.columns - 1, col));
    this.#pendingWrap = false;
  }

  /** Handles the sequence at `at`; returns its length, or undefined when it is cut short. */
  #escape(input: string, at: number): number | undefined {
    const next = input[at + 1];
    if (next === undefined) return undefined;
    if (next === "]") {
      // OSC (window titles, links): up to BEL or ESC \, never drawn.
      for (let j = at + 2; j < input.length; j++) {
        if (input[j] === "\x07") return j - at + 1;
        if (input[j] === "\x1b" && input[j + 1] === "\\") return j - at + 2;
      }
      return undefined;
    }
    if (next !== "[") return 2;
    let j = at + 2;
    while (j < input.length && /[0-?]/.test(input[j]!)) j++;
    while (j < input.length && /[ -/]/.test(input[j]!)) j++;
    if (j >= input.length) return undefined;
    const final = input[j]!;
    const raw = input.slice(at + 2, j);
    const private_ = /^[<=>?]/.test(raw);
    const params = raw === "" ? [] : raw.split(/[;:]/).map((v) => (v === "" ? 0 : Number(v)));
    if (!private_ && params.every((n) => Number.isFinite(n))) this.#csi(final, params);
    return j - at + 1;
  }

  #csi(final: string, params: number[]): void {
    const n = Math.max(1, params[0] ?? 1);
    switch (final) {
      case "m":
        this.#style = applySgr(this.#style, params);
        break;
      case "K": {
        const line = this.#line();
        const mode = params[0] ?? 0;
        if (mode === 2) line.length = 0;
        else if (mode === 0) line.length = Math.min(line.length, this.#col);
        else if (mode === 1) {
          for (let c = 0; c <= this.#col && c < line.length; c++) line[c] = { ch: " ", style: {} };
        }
        break;
      }
      case "C":
        this.#moveTo(this.#col + n);
        break;
      case "D":
        this.#moveTo(this.#col - n);
        break;
      case "G":
        this.#moveTo(n - 1);
        break;
    }
  }
}

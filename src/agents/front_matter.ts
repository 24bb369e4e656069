/**
 * The front matter of an agent file: a `---` line, `key: value` lines, a closing `---` line,
 * then the body. Deliberately not YAML: a small strict subset whose every line means one thing,
 * so a file either says exactly what it seems to or is refused with its line number.
 */
import { cutTo } from "../platform/text_cut.ts";

/** One `key: value` line, with the 1-based line number it came from. */
export interface FrontMatterEntry {
  key: string;
  value: string;
  line: number;
}

export interface ParsedFile {
  entries: FrontMatterEntry[];
  body: string;
  /** The 1-based line number where the body starts. */
  bodyLine: number;
}

/** A problem at a line of the file (line 0: the file as a whole). */
export class FrontMatterError extends Error {
  override name = "FrontMatterError";
  constructor(readonly line: number, message: string) {
    super(message);
  }
}

const KEY = /^([a-z][a-z0-9_]*)\s*:(.*)$/;

/** Splits a file into its front matter entries and body; throws FrontMatterError. */
export function parseFrontMatter(text: string): ParsedFile {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  if (lines[0]?.trim() !== "---") {
    throw new FrontMatterError(
      1,
      'the file must start with a "---" line, then "key: value" lines and another "---" line',
    );
  }
  const entries: FrontMatterEntry[] = [];
  const seen = new Set<string>();
  for (let i = 1; i < lines.length; i++) {
    const raw = lines[i]!;
    const number = i + 1;
    if (raw.trim() === "---") {
      return { entries, body: lines.slice(i + 1).join("\n").trim(), bodyLine: number + 1 };
    }
    if (raw.trim() === "" || raw.trimStart().startsWith("#")) continue;
    const m = KEY.exec(raw.trim());
    if (!m) {
      throw new FrontMatterError(
        number,
        `"${cut(raw)}" is not a "key: value" line (keys are lower-case words; lists go on one ` +
          "line, comma-separated)",
      );
    }
    const key = m[1]!;
    if (seen.has(key)) throw new FrontMatterError(number, `"${key}" is given twice`);
    seen.add(key);
    entries.push({ key, value: unquote(m[2]!.trim()), line: number });
  }
  throw new FrontMatterError(0, 'the front matter has no closing "---" line');
}

/** `"x"` and `'x'` stand for x; anything else is taken as written. */
function unquote(value: string): string {
  if (value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.at(-1) === value[0]) {
    return value.slice(1, -1);
  }
  return value;
}

/** A comma-separated list, optionally in brackets: `Read, Grep` or `[Read, Grep]`. */
export function listValue(value: string): string[] {
  const inner = value.startsWith("[") && value.endsWith("]") ? value.slice(1, -1) : value;
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  // Commas inside parentheses belong to a rule's pattern: `Bash(git diff, git log)`.
  for (let i = 0; i <= inner.length; i++) {
    const c = inner[i];
    if (c === "(") depth++;
    else if (c === ")") depth = Math.max(0, depth - 1);
    else if (i === inner.length || (c === "," && depth === 0)) {
      const item = unquote(inner.slice(start, i).trim());
      if (item !== "") out.push(item);
      start = i + 1;
    }
  }
  return out;
}

function cut(text: string): string {
  return cutTo(text.trim(), 60);
}

/**
 * Calls written as code rather than JSON: Llama 3.2/4's pythonic `[get_weather(city='LA'),
 * f()]` (Meta's llama3_2 text prompt format) and Gemma 4's `call:name{city:<|"|>LA<|"|>}`
 * (its chat template: keys bare, strings between `<|"|>` tokens). One small reader of
 * literals serves both: strings in either quote or Gemma's tokens, numbers, Python and JSON
 * constants, lists, dicts with quoted or bare keys. One pass; nesting is bounded.
 */

const MAX_DEPTH = 64;
const GEMMA_QUOTE = '<|"|>';

const CONSTANTS: Readonly<Record<string, unknown>> = {
  true: true,
  false: false,
  null: null,
  True: true,
  False: false,
  None: null,
};

/** Reads literals from `text` starting at `at`; each method returns undefined on failure. */
export class LiteralReader {
  constructor(readonly text: string, public at = 0, readonly end = text.length) {}

  space(): void {
    while (this.at < this.end && /\s/.test(this.text[this.at]!)) this.at++;
  }

  /** Consumes `s` (after white space) when it comes next. */
  eat(s: string): boolean {
    this.space();
    if (this.at + s.length > this.end || !this.text.startsWith(s, this.at)) return false;
    this.at += s.length;
    return true;
  }

  name(): string | undefined {
    this.space();
    const start = this.at;
    while (this.at < this.end && /[\w.-]/.test(this.text[this.at]!)) this.at++;
    return this.at > start ? this.text.slice(start, this.at) : undefined;
  }

  value(depth = 0): { ok: true; value: unknown } | undefined {
    if (depth > MAX_DEPTH) return undefined;
    this.space();
    const c = this.text[this.at];
    if (this.text.startsWith(GEMMA_QUOTE, this.at)) return this.gemmaString();
    if (c === '"' || c === "'") return this.string(c);
    if (c === "[") return this.list(depth);
    if (c === "{") return this.dict(depth);
    const start = this.at;
    while (this.at < this.end && /[\w.+-]/.test(this.text[this.at]!)) this.at++;
    const word = this.text.slice(start, this.at);
    if (word === "") return undefined;
    if (Object.hasOwn(CONSTANTS, word)) return { ok: true, value: CONSTANTS[word] };
    const n = Number(word);
    return Number.isFinite(n) && /^[+-]?(\d|\.\d)/.test(word) ? { ok: true, value: n } : undefined;
  }

  /** `(k=v, k2: v2)` or `{k: v}`: named arguments, with `=` or `:`. */
  named(close: string, depth = 0): { ok: true; value: Record<string, unknown> } | undefined {
    const out: Record<string, unknown> = {};
    if (this.eat(close)) return { ok: true, value: out };
    while (true) {
      this.space();
      const q = this.text[this.at];
      const key = this.text.startsWith(GEMMA_QUOTE, this.at)
        ? this.gemmaString()?.value
        : q === '"' || q === "'"
        ? this.string(q)?.value
        : this.name();
      if (typeof key !== "string") return undefined;
      if (!this.eat("=") && !this.eat(":")) return undefined;
      const v = this.value(depth + 1);
      if (!v) return undefined;
      out[key] = v.value;
      if (this.eat(close)) return { ok: true, value: out };
      if (!this.eat(",")) return undefined;
      // A trailing comma before the closer.
      if (this.eat(close)) return { ok: true, value: out };
    }
  }

  private list(depth: number): { ok: true; value: unknown[] } | undefined {
    this.at++;
    const out: unknown[] = [];
    if (this.eat("]")) return { ok: true, value: out };
    while (true) {
      const v = this.value(depth + 1);
      if (!v) return undefined;
      out.push(v.value);
      if (this.eat("]")) return { ok: true, value: out };
      if (!this.eat(",")) return undefined;
      if (this.eat("]")) return { ok: true, value: out };
    }
  }

  private dict(depth: number): { ok: true; value: Record<string, unknown> } | undefined {
    this.at++;
    return this.named("}", depth);
  }

  private gemmaString(): { ok: true; value: string } | undefined {
    const start = this.at + GEMMA_QUOTE.length;
    const end = this.text.indexOf(GEMMA_QUOTE, start);
    if (end === -1 || end >= this.end) return undefined;
    this.at = end + GEMMA_QUOTE.length;
    return { ok: true, value: this.text.slice(start, end) };
  }

  private string(quote: string): { ok: true; value: string } | undefined {
    let out = "";
    let i = this.at + 1;
    while (i < this.end) {
      const c = this.text[i]!;
      if (c === quote) {
        this.at = i + 1;
        return { ok: true, value: out };
      }
      if (c === "\\" && i + 1 < this.end) {
        const e = this.text[i + 1]!;
        if (e === "u" && /^[0-9a-fA-F]{4}$/.test(this.text.slice(i + 2, i + 6))) {
          out += String.fromCharCode(parseInt(this.text.slice(i + 2, i + 6), 16));
          i += 6;
          continue;
        }
        out += ESCAPES[e] ?? e;
        i += 2;
        continue;
      }
      out += c;
      i++;
    }
    return undefined;
  }
}

const ESCAPES: Readonly<Record<string, string>> = { n: "\n", t: "\t", r: "\r", "0": "\0" };

/**
 * `[name(k=v), name2()]` or one `name(k=v)`, the whole of `text` (after white space): the
 * calls, or undefined when it is anything else.
 */
export function pythonicCalls(
  text: string,
): Array<{ name: string; args: Record<string, unknown> }> | undefined {
  const r = new LiteralReader(text);
  const listed = r.eat("[");
  const out: Array<{ name: string; args: Record<string, unknown> }> = [];
  while (true) {
    const name = r.name();
    if (!name || !r.eat("(")) return undefined;
    const args = r.named(")");
    if (!args) return undefined;
    out.push({ name, args: args.value });
    if (!listed) break;
    if (r.eat("]")) break;
    if (!r.eat(",")) return undefined;
  }
  r.space();
  return r.at === text.length ? out : undefined;
}

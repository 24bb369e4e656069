/**
 * Glob patterns as Claude Code's Glob and ripgrep's --glob read them: `**` (any number of
 * directories), `*`, `?`, `[abc]`/`[!a-z]` and `{a,b}`, with `\` escaping. Matched against
 * paths with `/` separators. `*` matches dot files too: the walk already skips .git.
 */

/** Brace expansions of one pattern above this count are refused (`{a,b}{c,d}...` grows fast). */
const MAX_EXPANSIONS = 1024;

/** The index of the `}` closing the `{` at `open`, and the top-level commas between. */
function braceGroup(p: string, open: number): { close: number; commas: number[] } | null {
  let depth = 0;
  const commas: number[] = [];
  for (let i = open; i < p.length; i++) {
    const c = p[i];
    if (c === "\\") i++;
    else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return { close: i, commas };
    else if (c === "," && depth === 1) commas.push(i);
  }
  return null;
}

/** `a{b,c{d,e}}` -> `ab`, `acd`, `ace`; braces without a comma stay literal. */
export function expandBraces(p: string): string[] {
  for (let i = 0; i < p.length; i++) {
    if (p[i] === "\\") {
      i++;
      continue;
    }
    if (p[i] !== "{") continue;
    const group = braceGroup(p, i);
    if (!group || group.commas.length === 0) continue;
    const pre = p.slice(0, i);
    const post = p.slice(group.close + 1);
    const bounds = [i, ...group.commas, group.close];
    const out: string[] = [];
    for (let k = 0; k + 1 < bounds.length; k++) {
      const alt = p.slice((bounds[k] ?? 0) + 1, bounds[k + 1]);
      out.push(...expandBraces(pre + alt + post));
      if (out.length > MAX_EXPANSIONS) {
        throw new RangeError(`pattern "${p}" expands to over ${MAX_EXPANSIONS} alternatives`);
      }
    }
    return out;
  }
  return [p];
}

const REGEX_SPECIAL = /[.*+?^${}()|[\]\\/]/g;

function escapeRegex(s: string): string {
  return s.replace(REGEX_SPECIAL, "\\$&");
}

/** `[...]` starting at `open` as a regex class, or null when it never closes. */
function charClass(p: string, open: number): { source: string; end: number } | null {
  let i = open + 1;
  let negate = false;
  if (p[i] === "!" || p[i] === "^") {
    negate = true;
    i++;
  }
  let body = "";
  for (let first = true; i < p.length; i++, first = false) {
    const c = p[i] as string;
    if (c === "]" && !first) {
      // A class never matches the separator, even negated.
      return { source: `(?!/)[${negate ? "^" : ""}${body}]`, end: i };
    }
    if (c === "\\" && i + 1 < p.length) {
      body += escapeRegex(p[++i] as string);
    } else {
      body += c === "-" ? "-" : escapeRegex(c);
    }
  }
  return null;
}

/** One brace-free pattern as a regex source, without anchors. */
function toSource(p: string): string {
  let out = "";
  for (let i = 0; i < p.length; i++) {
    const c = p[i] as string;
    if (c === "\\") {
      if (i + 1 < p.length) out += escapeRegex(p[++i] as string);
      continue;
    }
    if (c === "*") {
      const atStart = i === 0 || p[i - 1] === "/";
      if (p[i + 1] === "*" && atStart && (i + 2 === p.length || p[i + 2] === "/")) {
        if (i + 2 === p.length) {
          out += ".*";
        } else {
          out += "(?:.*/)?";
        }
        i += 2; // past the second `*` and the `/`
        continue;
      }
      while (p[i + 1] === "*") i++;
      out += "[^/]*";
    } else if (c === "?") {
      out += "[^/]";
    } else if (c === "[") {
      const cls = charClass(p, i);
      if (cls) {
        out += cls.source;
        i = cls.end;
      } else {
        out += "\\[";
      }
    } else {
      out += escapeRegex(c);
    }
  }
  return out;
}

/** A glob compiled to an anchored RegExp over `/`-separated paths. */
export function globToRegExp(pattern: string, ignoreCase = false): RegExp {
  const sources = expandBraces(pattern).map(toSource);
  return new RegExp(`^(?:${sources.join("|")})$`, ignoreCase ? "i" : "");
}

/** True when a pattern segment needs matching rather than a literal name. */
export function hasMagic(segment: string): boolean {
  return /[*?[{\\]/.test(segment);
}

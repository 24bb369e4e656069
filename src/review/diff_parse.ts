/**
 * A unified diff as git prints it (with a/ and b/ prefixes), split per file, with each file's
 * new-side lines in hunks noted: a reviewer's finding must point at one of them.
 */

export interface FileDiff {
  /** Relative to the repository's top, `/`-separated. */
  path: string;
  /** This file's part of the diff, from its `diff --git` line. */
  text: string;
  /** New-side line numbers inside its hunks, as [first, last] ranges. */
  lines: Array<[number, number]>;
  added: number;
  removed: number;
  binary: boolean;
  /**
   * Why the file is a secret though its name does not say so (a hard link to `.env`), or
   * that its content was never read (an untracked secret); its diff is then empty.
   */
  secret?: string;
  /**
   * Why the content of an untracked file was not read: it would take the untracked files'
   * diff past MAX_DIFF_BYTES; its diff is then empty.
   */
  tooLarge?: string;
}

/** A path as git prints it: as is, or C-quoted when it holds odd characters. */
function unquote(path: string): string {
  if (!path.startsWith('"') || !path.endsWith('"')) return path;
  const body = path.slice(1, -1);
  const bytes: number[] = [];
  const simple: Record<string, number> = { n: 10, t: 9, r: 13, '"': 34, "\\": 92, a: 7, b: 8 };
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== "\\") {
      bytes.push(...new TextEncoder().encode(c));
      continue;
    }
    const next = body[i + 1] ?? "";
    if (/[0-7]/.test(next)) {
      bytes.push(parseInt(body.slice(i + 1, i + 4), 8));
      i += 3;
    } else {
      bytes.push(simple[next] ?? next.charCodeAt(0));
      i += 1;
    }
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

function stripPrefix(path: string, prefix: string): string {
  const p = unquote(path.replace(/\t$/, ""));
  return p.startsWith(prefix) ? p.slice(prefix.length) : p;
}

/** Splits a unified diff (as git prints it with a/ and b/ prefixes) into its files. */
export function parseDiff(text: string): FileDiff[] {
  const out: FileDiff[] = [];
  const lines = text.split("\n");
  let current: { start: number; file: FileDiff } | undefined;
  let newLine = 0;
  let oldLeft = 0;
  let newLeft = 0;
  const close = (end: number) => {
    if (!current) return;
    current.file.text = lines.slice(current.start, end).join("\n").replace(/\n*$/, "\n");
    out.push(current.file);
    current = undefined;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (oldLeft > 0 || newLeft > 0) {
      const c = line[0];
      if (c === " " || c === "+" || (c === undefined && line === "")) {
        if (c === "+") current!.file.added++;
        else oldLeft--;
        addLine(current!.file.lines, newLine++);
        newLeft--;
        continue;
      }
      if (c === "-") {
        current!.file.removed++;
        oldLeft--;
        continue;
      }
      if (c === "\\") continue;
      oldLeft = newLeft = 0;
    }
    if (line.startsWith("diff --git ")) {
      close(i);
      // The b/ side of the header; replaced by the +++ line when there is one.
      const m = / b\/(.*)$/.exec(line) ?? / "b\/(.*)"$/.exec(line);
      current = {
        start: i,
        file: {
          path: m ? unquote(m[0].trim()).replace(/^b\//, "") : "",
          text: "",
          lines: [],
          added: 0,
          removed: 0,
          binary: false,
        },
      };
      continue;
    }
    if (!current) continue;
    if (line.startsWith("+++ ")) {
      const p = line.slice(4);
      if (p !== "/dev/null") current.file.path = stripPrefix(p, "b/");
    } else if (line.startsWith("--- ") && !current.file.path) {
      current.file.path = stripPrefix(line.slice(4), "a/");
    } else if (/^Binary files .* differ$/.test(line) || line === "GIT binary patch") {
      current.file.binary = true;
    } else {
      const h = /^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(line);
      if (h) {
        oldLeft = h[1] === undefined ? 1 : Number(h[1]);
        newLine = Number(h[2]);
        newLeft = h[3] === undefined ? 1 : Number(h[3]);
      }
    }
  }
  close(lines.length);
  return out;
}

function addLine(ranges: Array<[number, number]>, n: number): void {
  const last = ranges.at(-1);
  if (last && last[1] === n - 1) last[1] = n;
  else ranges.push([n, n]);
}

/** Whether `line` is inside one of `ranges`. */
export function inRanges(ranges: ReadonlyArray<readonly [number, number]>, line: number): boolean {
  return ranges.some(([a, b]) => line >= a && line <= b);
}

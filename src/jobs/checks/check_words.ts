/**
 * The simple commands of a `verify` command line, as the words a shell would pass to each
 * program, to learn which files the check runs (check_inputs.ts). It follows the POSIX shell's
 * token rules (XCU 2.3 Token Recognition, 2.2 Quoting) far enough for that: quotes removed,
 * operators (`&&`, `||`, `;`, `|`, `&`, parentheses, newlines) end a command, redirections
 * and their targets are dropped, comments skipped, and what runs inside `$(...)` and
 * backquotes is a command of its own. It runs nothing and expands nothing: a word holding an
 * expansion keeps a `$`, so no rule takes it for a file name.
 */

/** How deep commands inside commands are followed (`$(...)`, `sh -c`, an npm script's). */
export const MAX_DEPTH = 4;

/** Words that open or close a compound command: they are not a command's program. */
const RESERVED = new Set([
  "!",
  "{",
  "}",
  "if",
  "then",
  "else",
  "elif",
  "fi",
  "do",
  "done",
  "while",
  "until",
  "case",
  "esac",
  "time",
]);

/** Every simple command of `line` (and of what it nests), each as its words. */
export function simpleCommands(line: string, depth = 0): string[][] {
  const out: string[][] = [];
  const nested: string[] = [];
  let words: string[] = [];
  let word: string | undefined;
  let dropNext = false;
  const endWord = () => {
    if (word === undefined) return;
    if (dropNext) dropNext = false;
    else words.push(word);
    word = undefined;
  };
  const endCommand = () => {
    endWord();
    while (words.length > 0 && RESERVED.has(words[0]!)) words.shift();
    if (words.length > 0) out.push(words);
    words = [];
  };
  const add = (s: string) => (word = (word ?? "") + s);
  let i = 0;
  while (i < line.length) {
    const c = line[i]!;
    if (c === " " || c === "\t") {
      endWord();
      i++;
    } else if (c === "\n" || c === ";" || c === "&" || c === "|" || c === "(" || c === ")") {
      endCommand();
      i++;
    } else if (c === "<" || c === ">") {
      // `2>&1`, `>out.txt`, `< in`: the file descriptor before it and the target after it
      // are no words of the command.
      if (word !== undefined && /^\d+$/.test(word)) word = undefined;
      endWord();
      i++;
      while (i < line.length && /[<>&|]/.test(line[i]!)) i++;
      dropNext = true;
      if (/^\d/.test(line.slice(i, i + 1)) && line[i - 1] === "&") {
        while (i < line.length && /\d/.test(line[i]!)) i++;
        dropNext = false;
      }
    } else if (c === "#" && word === undefined) {
      while (i < line.length && line[i] !== "\n") i++;
    } else if (c === "\\") {
      if (line[i + 1] !== "\n") add(line[i + 1] ?? "");
      i += 2;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      add(line.slice(i + 1, end < 0 ? line.length : end));
      i = end < 0 ? line.length : end + 1;
    } else if (c === '"') {
      i = doubleQuoted(line, i + 1, add, nested);
    } else if (c === "`") {
      i = backquoted(line, i + 1, add, nested);
    } else if (c === "$" && line[i + 1] === "(") {
      i = substitution(line, i + 2, add, nested);
    } else {
      add(c);
      i++;
    }
  }
  endCommand();
  if (depth < MAX_DEPTH) {
    for (const inner of nested) out.push(...simpleCommands(inner, depth + 1));
  }
  return out;
}

/** From after an opening `"` to after its closing one; returns the index after it. */
function doubleQuoted(
  line: string,
  start: number,
  add: (s: string) => void,
  nested: string[],
): number {
  let i = start;
  add("");
  while (i < line.length && line[i] !== '"') {
    const c = line[i]!;
    if (c === "\\" && /["\\$`\n]/.test(line[i + 1] ?? "")) {
      if (line[i + 1] !== "\n") add(line[i + 1]!);
      i += 2;
    } else if (c === "`") {
      i = backquoted(line, i + 1, add, nested);
    } else if (c === "$" && line[i + 1] === "(") {
      i = substitution(line, i + 2, add, nested);
    } else {
      add(c);
      i++;
    }
  }
  return i + 1;
}

/** `` `cmd` ``: its command is nested; the word holds a `$`. */
function backquoted(
  line: string,
  start: number,
  add: (s: string) => void,
  nested: string[],
): number {
  let i = start;
  let inner = "";
  while (i < line.length && line[i] !== "`") {
    if (line[i] === "\\" && i + 1 < line.length) {
      inner += line[i + 1];
      i += 2;
    } else inner += line[i++];
  }
  nested.push(inner);
  add("$");
  return i + 1;
}

/** `$(cmd)`, up to its matching parenthesis (quotes inside kept whole). */
function substitution(
  line: string,
  start: number,
  add: (s: string) => void,
  nested: string[],
): number {
  let i = start;
  let open = 1;
  while (i < line.length) {
    const c = line[i]!;
    if (c === "'" || c === '"') {
      const end = line.indexOf(c, i + 1);
      i = end < 0 ? line.length : end + 1;
      continue;
    }
    if (c === "\\") {
      i += 2;
      continue;
    }
    if (c === "(") open++;
    if (c === ")" && --open === 0) break;
    i++;
  }
  nested.push(line.slice(start, i));
  add("$");
  return i + 1;
}

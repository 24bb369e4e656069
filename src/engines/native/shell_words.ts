/**
 * Reading a shell command as a POSIX shell would before it runs: words after quote removal,
 * what in them the shell would still expand (braces, a globbed program name), and one command
 * reduced to its program's name and arguments. Bash permission rules are matched on this, so
 * that `r\m`, `"r"m` and `/bin/rm` all read `rm`.
 */

/** Words that may come before a command's program: shell keywords and grouping. */
const KEYWORDS = new Set(["then", "do", "else", "elif", "if", "while", "until", "!", "{", "}"]);

/** One command's words after the shell's quote removal, and what in them would expand. */
export interface ShellWords {
  words: string[];
  /** Unquoted brace expansion (`{r,}m`, `{a..z}`), which builds words at run time. */
  braces: boolean;
  /** Unquoted glob characters in the first word: the program's name is a pattern. */
  globbedProgram: boolean;
}

/**
 * Splits a command into words as a POSIX shell does, removing quotes and backslashes, so that
 * `r\m`, `"r"m`, `'r'm` and `r""m` all read `rm`, as the shell runs them. Each word also keeps
 * a skeleton with quoted characters blanked out, to see what the shell would expand.
 */
export function shellWords(command: string): ShellWords {
  const words: string[] = [];
  const skeletons: string[] = [];
  let word = "";
  let skeleton = "";
  let inWord = false;
  const end = () => {
    if (inWord) {
      words.push(word);
      skeletons.push(skeleton);
    }
    [word, skeleton, inWord] = ["", "", false];
  };
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (c === "\\") {
      if (i + 1 < command.length) word += command[++i];
      skeleton += "_";
      inWord = true;
    } else if (c === "'") {
      const close = command.indexOf("'", i + 1);
      const stop = close === -1 ? command.length : close;
      word += command.slice(i + 1, stop);
      skeleton += "_".repeat(stop - i - 1);
      i = stop;
      inWord = true;
    } else if (c === '"') {
      for (i++; i < command.length && command[i] !== '"'; i++) {
        // Inside double quotes a backslash quotes only these characters.
        if (command[i] === "\\" && i + 1 < command.length && '"\\$`\n'.includes(command[i + 1]!)) {
          i++;
        }
        word += command[i];
        skeleton += "_";
      }
      inWord = true;
    } else if (/\s/.test(c)) {
      end();
    } else {
      word += c;
      skeleton += c;
      inWord = true;
    }
  }
  end();
  return {
    words,
    braces: skeletons.some((s) => /\{[^{}]*(?:,|\.\.)[^{}]*\}/.test(s)),
    globbedProgram: /[*?]|\[.*\]/.test(skeletons.find((_, i) => !isPrefixWord(words[i]!)) ?? ""),
  };
}

/** Words before the program: keywords, grouping and `VAR=value` assignments. */
function isPrefixWord(word: string): boolean {
  return KEYWORDS.has(word) || /^[({]+$/.test(word) || /^[A-Za-z_][A-Za-z0-9_]*=/.test(word);
}

/**
 * One command of a chain as a shell would run it: quotes removed, grouping, keywords and
 * `VAR=value` prefixes stripped, the program reduced to its name (`/bin/rm` is `rm`).
 */
export function normaliseCommand(part: string): string {
  const words = shellWords(part).words;
  let i = 0;
  while (i < words.length && isPrefixWord(words[i]!)) i++;
  const [first = "", ...args] = words.slice(i);
  const name = first.replace(/^[({]+/, "").split("/").at(-1) ?? first;
  return [name, ...args].join(" ").trim();
}

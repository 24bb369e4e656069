/**
 * Claims in a delegate's final text that the server's evidence contradicts: "tests pass" with no
 * test command run or a failing one, "created/updated X" with no change to X, "ran X" with no
 * such command, "no changes" with files changed. Conservative by design: a sentence that hedges,
 * negates, plans or asks is no claim, and a check whose evidence may be incomplete is not made
 * (tests/jobs/claims_corpus.ts holds the messages it must and must not flag).
 */
import { cutTo } from "../../platform/text_cut.ts";

/** What the server saw the delegate (and its own check) do. */
export interface ClaimEvidence {
  /** Commands in the order they ran; `failed` undefined when the outcome is not known. */
  commands: Array<{ command: string; failed?: boolean; byServer?: boolean }>;
  /** Files created or changed (absolute, or relative to the job's directory). */
  changedFiles: string[];
  /**
   * Whether `changedFiles` covers what commands changed too (the native engine's snapshots, a
   * worktree's diff). When not, "created X" is only checked if no command ran at all.
   */
  changesComplete: boolean;
}

export type ClaimKind = "tests-pass" | "changed-file" | "ran-command" | "no-changes";

export interface ClaimMismatch {
  kind: ClaimKind;
  /** The words of the claim, as written (one line, at most 80 characters). */
  claim: string;
  /** What the evidence shows instead. */
  reason: string;
}

/** Words that make a sentence no plain statement of fact: hedges, negations, plans, conditions. */
const HEDGE =
  /\b(not|n't|no|never|fail\w*|should|would|will|could|might|may|must|once|if|until|unless|when|whether|ensure|make sure|to make|so that|expect\w*|verify that|check that|hopefully|assum\w*|probably|likely|need\w*|want|try|trying|please|let me|going to|plan\w*|next|remaining|todo|before)\b/i;

const TESTS_PASS = [
  /\b(?:all\s+(?:\d+\s+)?|the\s+|every\s+)?(?:unit\s+|integration\s+|e2e\s+)?(?:tests?|test suite|specs)\s+(?:now\s+|still\s+)?(?:pass(?:es|ed)?|are passing|is passing|succeed(?:s|ed)?|are green|ran green)\b/i,
  /\b\d+\s+(?:tests?\s+)?passed\b(?![^.\n]*\b[1-9]\d*\s+failed)/i,
];

const TEST_COMMAND =
  /\b(?:(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?test|deno\s+test|pytest|py\.test|python3?\s+-m\s+(?:pytest|unittest)|go\s+test|cargo\s+(?:test|nextest)|jest|vitest|mocha|ava|tap|make\s+(?:test|check)|ctest|phpunit|rspec|tox|nox|mvn\s+(?:test|verify)|gradlew?\s+test|dotnet\s+test|node\s+--test|bun\s+test|mix\s+test)\b|\btests?\/|[._]test\.|\.spec\.|\b(?:run_?)?tests?\.(?:sh|py|js|ts|mjs|rb|pl)\b/i;

const FILE_EXTENSIONS =
  "ts|tsx|js|jsx|mjs|cjs|py|rs|go|rb|java|kt|c|h|cc|cpp|hpp|cs|swift|php|sh|md|json|yaml|yml|toml|txt|html|css|scss|sql|xml|ini|cfg|lock|gradle|vue|svelte";
const PATH = String.raw`(?:[\w@.-]+\/)*[\w@-][\w@.-]*`;
/**
 * A file in backticks: a known extension, or a folder in front. `console.log` and `os.path` are
 * code, not files.
 */
const QUOTED = String
  .raw`(?:${PATH}\.(?:${FILE_EXTENSIONS})|(?:[\w@.-]+\/)+[\w@-][\w@.-]*\.\w{1,8})`;
const CHANGED = [
  new RegExp(
    String
      .raw`\b(?:created|added|wrote|updated|modified|edited|changed|fixed|rewrote|refactored|implemented)\s+(?:(?:a|an|the|new|file|module|test|tests|script|config)\s+)*` +
      String.raw`(?:\x60(${QUOTED})\x60|(${PATH}\.(?:${FILE_EXTENSIONS})))(?![\w/])`,
    "i",
  ),
  new RegExp(
    String
      .raw`(?:\x60(${QUOTED})\x60|\b(${PATH}\.(?:${FILE_EXTENSIONS})))\s+(?:was|has been|is now)\s+(?:created|added|written|updated|modified|changed)\b`,
    "i",
  ),
];

const RAN = /\b(?:ran|executed|re-?ran)\s+\x60([^\x60\n]{2,200})\x60/i;

const NO_CHANGES = [
  /\bno (?:code |file )?changes (?:were |was |are )?(?:made|needed|necessary|required)\b/i,
  /\b(?:did not|didn't|have not|haven't) (?:change|modify|edit|touch)(?:d)? any(?:thing| files?| code)\b/i,
  /\bmade no (?:code |file )?changes\b/i,
  /\bleft (?:the )?(?:code|files?|repository|codebase) (?:unchanged|untouched|as it was)\b/i,
];
/** What narrows a "no changes" claim to part of the work: then it says nothing of the rest. */
const SCOPED =
  /\b(?:to|in|for|on|of|outside|beyond|besides|except|other than)\s+(?:the\s+)?[\w`'"./-]/i;

/** The sentences of `text`, code blocks left out (they quote output, not claims). */
export function sentences(text: string): string[] {
  const prose = text.replace(/```[\s\S]*?(```|$)/g, "\n").replace(/^\s{4,}.*$/gm, "");
  return prose.split(/\n+|(?<=[.!?])\s+(?=[A-Z*`-])/).map((s) => s.trim()).filter((s) => s !== "");
}

const quote = (text: string) => cutTo(text.replace(/\s+/g, " ").trim(), 80);

/** Whether the sentence before `index` (the claim's start) hedges or negates it. */
function hedged(sentence: string, index: number, length: number): boolean {
  const before = sentence.slice(0, index);
  const after = sentence.slice(index + length);
  return HEDGE.test(before) || /^\s*\?/.test(after) || sentence.trim().endsWith("?");
}

const words = (command: string) => command.trim().split(/\s+/).filter((w) => w !== "");

/** Whether `path` (as the model wrote it) is among the changed files. */
function changed(path: string, files: readonly string[]): boolean {
  const want = path.replace(/^\.\//, "");
  return files.some((f) => f === want || f.endsWith(`/${want}`));
}

/** The mismatches between the claims in `text` and `evidence`, at most one per claim. */
export function checkClaims(text: string, evidence: ClaimEvidence): ClaimMismatch[] {
  const out: ClaimMismatch[] = [];
  const seen = new Set<string>();
  const add = (m: ClaimMismatch) => {
    const key = `${m.kind}\0${m.claim.toLowerCase()}`;
    if (!seen.has(key)) seen.add(key), out.push(m);
  };
  const own = evidence.commands.filter((c) => !c.byServer);
  const tests = evidence.commands.filter((c) => TEST_COMMAND.test(c.command));
  let changeClaims = 0;
  const all = sentences(text);
  for (const sentence of all) {
    for (const re of CHANGED) {
      const m = re.exec(sentence);
      if (m && !hedged(sentence, m.index, m[0].length)) changeClaims++;
    }
  }
  for (const sentence of all) {
    for (const re of TESTS_PASS) {
      const m = re.exec(sentence);
      if (!m || hedged(sentence, m.index, m[0].length)) continue;
      const last = tests.at(-1);
      if (!last) {
        add({ kind: "tests-pass", claim: quote(m[0]), reason: "no test command was run" });
      } else if (last.failed === true) {
        add({
          kind: "tests-pass",
          claim: quote(m[0]),
          reason: `the last test command failed: ${quote(last.command)}`,
        });
      }
      break;
    }
    for (const re of CHANGED) {
      const m = re.exec(sentence);
      if (!m || hedged(sentence, m.index, m[0].length)) continue;
      const path = m[1] ?? m[2]!;
      if (changed(path, evidence.changedFiles)) continue;
      // Without full change tracking a command may have made it: only checked when none ran.
      if (!evidence.changesComplete && own.length > 0) continue;
      add({ kind: "changed-file", claim: quote(m[0]), reason: `no change to ${path} was seen` });
    }
    const ran = RAN.exec(sentence);
    if (ran && !hedged(sentence, ran.index, ran[0].length)) {
      const claimed = words(ran[1]!);
      // The program and its first argument, in order, in some command: conservative on flags.
      const key = claimed.slice(0, claimed[1]?.startsWith("-") ? 1 : 2);
      const found = own.some((c) => {
        const have = words(c.command);
        const at = have.indexOf(key[0]!);
        return at >= 0 && (key.length < 2 || have.slice(at + 1).includes(key[1]!));
      });
      if (!found) {
        add({ kind: "ran-command", claim: quote(ran[0]), reason: "no such command was run" });
      }
    }
    for (const re of NO_CHANGES) {
      const m = re.exec(sentence);
      if (!m || changeClaims > 0) continue;
      const after = sentence.slice(m.index + m[0].length);
      if (
        HEDGE.test(sentence.slice(0, m.index).replace(/\b(no|not|n't)\b/gi, "")) ||
        SCOPED.test(after)
      ) {
        continue;
      }
      if (evidence.changedFiles.length > 0) {
        const n = evidence.changedFiles.length;
        add({
          kind: "no-changes",
          claim: quote(m[0]),
          reason: `${n} file${n === 1 ? "" : "s"} changed`,
        });
      }
      break;
    }
  }
  return out;
}

/**
 * One finding as every reply about a review prints it: delegate_review and delegate_result,
 * `ollama-delegate review`, `jobs show`, and the reason the review gate hands Claude Code when
 * it blocks a stop, which Claude reads as its next instruction. What the reviewer wrote (the
 * claim, the evidence) is always in quotes, escaped onto its line, and the file it names is
 * quoted whenever it is not a plain path, so neither can pass for our own words or add a line
 * (a forged finding); a finding that carries a URL or a command is flagged (carries.ts),
 * because the reviewer may be repeating what the author of the changes wrote for it.
 */
import { quoteLine, quotePath, quoteString } from "../platform/plain_text.ts";
import { carriedFlag, carriesOf } from "./carries.ts";

export interface FindingWords {
  file: string;
  line: number;
  severity: string;
  claim: string;
  evidence: string;
}

/** A path as git quotes it, and in quotes too when it holds white space (it reads as prose). */
function shownFile(file: string): string {
  return /\s/.test(file) ? quoteString(file) : quotePath(file);
}

/**
 * `3. [high] src/a.ts:42 (2 of 3: a, b) [carries a URL: ...]  "claim"` and, when there is
 * evidence, `   evidence: "..."` on the next line. `who` is a panel's agreement and reviewers.
 */
export function findingText(f: FindingWords, n: number, who?: string): string {
  const flag = carriedFlag(carriesOf(f.file, f.claim, f.evidence));
  const evidence = f.evidence ? `\n   evidence: ${quoteLine(f.evidence)}` : "";
  return `${n}. [${f.severity}] ${shownFile(f.file)}:${f.line}` + (who ? ` (${who})` : "") +
    (flag ? ` ${flag}` : "") + `  ${quoteLine(f.claim)}${evidence}`;
}

/**
 * The reviewer's answer: findings JSON in a fixed shape, validated by the server. A reply that
 * is nearly JSON (in a fenced block, with prose around it, trailing commas) is repaired; one
 * that is not JSON at all is reported as such. Findings that point outside the diff the
 * reviewer was shown are dropped and counted: a line number nobody can check is not evidence.
 */
import { jsonrepair } from "jsonrepair";
import { SEVERITIES, type Severity } from "../settings/types.ts";
import { inRanges } from "./diff.ts";

export { SEVERITIES, type Severity };

export interface Finding {
  file: string;
  line: number;
  severity: Severity;
  claim: string;
  evidence: string;
}

export type ParsedFindings =
  | {
    ok: true;
    findings: Finding[];
    /** Entries that were not findings (a field missing or of the wrong kind). */
    malformed: number;
    /** How the reply was made readable, when it was not plain JSON. */
    repaired?: string;
  }
  | { ok: false; reason: string };

const MAX_CLAIM = 1000;
const MAX_EVIDENCE = 1000;
const MAX_FILE = 512;
const MAX_FINDINGS = 200;
/** Findings JSON is small: a reply is read as findings up to this many characters. */
const MAX_PARSED_CHARS = 256 * 1024;

/**
 * The body of the first fenced code block (```json ... ```), found by plain scanning: a
 * regular expression for it takes time that grows with the square of a reply made of
 * backticks, and the reply is the model's, to be treated as hostile.
 */
function fencedBody(text: string): string | undefined {
  const open = text.indexOf("```");
  if (open < 0) return undefined;
  const lineEnd = text.indexOf("\n", open + 3);
  if (lineEnd < 0) return undefined;
  const close = text.indexOf("```", lineEnd + 1);
  return close < 0 ? undefined : text.slice(lineEnd + 1, close);
}

/** The JSON candidates in a reply, most literal first, each with how it was found. */
function candidates(reply: string): Array<[string, string | undefined]> {
  const text = reply.slice(0, MAX_PARSED_CHARS);
  const out: Array<[string, string | undefined]> = [[text.trim(), undefined]];
  const fenced = fencedBody(text);
  if (fenced !== undefined) out.push([fenced.trim(), "taken from a fenced code block"]);
  const first = text.search(/[[{]/);
  const last = Math.max(text.lastIndexOf("}"), text.lastIndexOf("]"));
  if (first >= 0 && last > first) {
    out.push([text.slice(first, last + 1), "prose around it dropped"]);
  }
  return out;
}

function parseJson(text: string): { value: unknown; repaired?: string } | undefined {
  const all = candidates(text).filter(([c]) => c !== "");
  for (const [candidate, how] of all) {
    try {
      return { value: JSON.parse(candidate), ...(how ? { repaired: how } : {}) };
    } catch {
      // Tried again below, repaired.
    }
  }
  // Repair only what already looks like JSON: jsonrepair turns any prose into a string.
  for (const [candidate, how] of all.filter(([c]) => /^[[{]/.test(c))) {
    try {
      const value = JSON.parse(jsonrepair(candidate));
      if (typeof value === "object" && value !== null) {
        return { value, repaired: how ? `${how}, JSON repaired` : "JSON repaired" };
      }
    } catch {
      // Next candidate.
    }
  }
  return undefined;
}

function asFinding(raw: unknown): Finding | undefined {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return undefined;
  const r = raw as Record<string, unknown>;
  const file = typeof r.file === "string" ? r.file.trim() : "";
  const line = typeof r.line === "number"
    ? r.line
    : typeof r.line === "string" && /^\d+$/.test(r.line.trim())
    ? Number(r.line.trim())
    : NaN;
  const severity = typeof r.severity === "string" ? r.severity.trim().toLowerCase() : "";
  const claim = typeof r.claim === "string" ? r.claim.trim() : "";
  const evidence = typeof r.evidence === "string" ? r.evidence.trim() : "";
  if (file === "" || file.length > MAX_FILE || !Number.isInteger(line) || line < 1) {
    return undefined;
  }
  if (!(SEVERITIES as readonly string[]).includes(severity) || claim === "") return undefined;
  return {
    file,
    line,
    severity: severity as Severity,
    claim: claim.slice(0, MAX_CLAIM),
    evidence: evidence.slice(0, MAX_EVIDENCE),
  };
}

/** Reads the reviewer's reply as findings; never throws. */
export function parseFindings(reply: string): ParsedFindings {
  const parsed = parseJson(reply);
  if (!parsed) return { ok: false, reason: "no JSON found in it" };
  const v = parsed.value;
  const list = Array.isArray(v)
    ? v
    : typeof v === "object" && v !== null && Array.isArray((v as { findings?: unknown }).findings)
    ? (v as { findings: unknown[] }).findings
    : undefined;
  if (!list) return { ok: false, reason: 'it is JSON, but has no "findings" list' };
  const findings: Finding[] = [];
  let malformed = 0;
  for (const raw of list.slice(0, MAX_FINDINGS)) {
    const f = asFinding(raw);
    if (f) findings.push(f);
    else malformed++;
  }
  malformed += Math.max(0, list.length - MAX_FINDINGS);
  return {
    ok: true,
    findings,
    malformed,
    ...(parsed.repaired ? { repaired: parsed.repaired } : {}),
  };
}

/** A finding's file as the diff names it: `./x`, `b/x` and absolute paths under `root` too. */
function diffPath(file: string, root: string, known: ReadonlyMap<string, unknown>): string {
  if (known.has(file)) return file;
  const candidates = [
    file.replace(/^\.\//, ""),
    file.replace(/^b\//, ""),
    file.startsWith(`${root}/`) ? file.slice(root.length + 1) : file,
  ];
  return candidates.find((c) => known.has(c)) ?? file;
}

/**
 * The findings whose file and line lie in the diff the reviewer was shown (`lines`: file ->
 * new-side ranges), sorted by severity, then file and line; the rest are `dropped`.
 */
export function checkFindings(
  findings: readonly Finding[],
  lines: ReadonlyMap<string, ReadonlyArray<readonly [number, number]>>,
  root: string,
): { kept: Finding[]; dropped: Finding[] } {
  const kept: Finding[] = [];
  const dropped: Finding[] = [];
  for (const f of findings) {
    const file = diffPath(f.file, root, lines);
    const ranges = lines.get(file);
    if (ranges && inRanges(ranges, f.line)) kept.push({ ...f, file });
    else dropped.push(f);
  }
  const rank = (s: Severity) => SEVERITIES.indexOf(s);
  kept.sort((a, b) =>
    rank(a.severity) - rank(b.severity) || a.file.localeCompare(b.file) || a.line - b.line
  );
  return { kept, dropped };
}

/**
 * The names a change journal (journal.ts) keeps of each folder: those the identity scan
 * (host_run_scan.ts) and the sandbox look for. Everything else it only watches.
 */
import {
  CREDENTIAL_PATHS,
  HOST_RUN_INNER_NAMES,
  isHostRunName,
  isSecretFileName,
  SECRET_FILE_PATTERNS,
} from "../../guard/protected_paths.ts";

/** Credential names that are a single path part (`.ssh`, not `.config/gcloud`). */
const CREDENTIAL_NAMES: ReadonlySet<string> = new Set(
  CREDENTIAL_PATHS.filter((p) => !p.includes("/")),
);

/**
 * What a name must start with, end with or be to match a secret pattern, lower-cased: a cheap
 * first test of each name (a journal lists every file of a tree; one expression of every
 * pattern took 1.2 µs a name, measured), confirmed by isSecretFileName.
 */
const SECRET_KEYS = (() => {
  const exact = new Set<string>();
  /** Suffixes by the part after their last dot (`.tfvars.json` under `.json`). */
  const suffixes = new Map<string, string[]>();
  const prefixes = new Set<string>();
  for (const pattern of SECRET_FILE_PATTERNS.map((p) => p.toLowerCase())) {
    const star = pattern.indexOf("*");
    if (star < 0) exact.add(pattern);
    else if (star === 0) {
      const suffix = pattern.slice(pattern.lastIndexOf("*") + 1);
      const key = suffix.slice(suffix.lastIndexOf("."));
      suffixes.set(key, [...(suffixes.get(key) ?? []), suffix]);
    } else prefixes.add(pattern.slice(0, star));
  }
  const firsts = new Set([...prefixes].map((p) => p[0]));
  return { exact, suffixes, prefixes: [...prefixes], firsts };
})();

function maybeSecret(name: string): boolean {
  const lower = name.toLowerCase();
  if (SECRET_KEYS.exact.has(lower)) return true;
  const dot = lower.lastIndexOf(".");
  if (dot >= 0 && SECRET_KEYS.suffixes.get(lower.slice(dot))?.some((s) => lower.endsWith(s))) {
    return true;
  }
  return SECRET_KEYS.firsts.has(lower[0]) && SECRET_KEYS.prefixes.some((p) => lower.startsWith(p));
}

/**
 * Credential paths of several parts by their last part, with the parts before it
 * (`gh` -> [".config"], `credentials.toml` -> [".cargo"]): a journal marks the last part in every
 * folder, and a store is one where the folder's path ends with the rest.
 */
const CREDENTIAL_TAILS: ReadonlyMap<string, readonly string[]> = (() => {
  const tails = new Map<string, string[]>();
  for (const path of CREDENTIAL_PATHS.filter((p) => p.includes("/"))) {
    const cut = path.lastIndexOf("/");
    const last = path.slice(cut + 1);
    tails.set(last, [...(tails.get(last) ?? []), path.slice(0, cut)]);
  }
  return tails;
})();

/**
 * Whether `name` in the folder `dir` (an absolute path) is a credential store
 * (protected_paths.ts CREDENTIAL_PATHS): `.ssh` anywhere, `gh` in a `.config` folder.
 */
export function isCredentialEntry(dir: string, name: string): boolean {
  if (CREDENTIAL_NAMES.has(name)) return true;
  const heads = CREDENTIAL_TAILS.get(name);
  return heads !== undefined && heads.some((head) => dir.endsWith(`/${head}`));
}

/**
 * The parts of credential paths that come before their last (`.config` and `helm` of
 * `.config/helm/registry`), each with the paths it starts a rest of: an entry of such a name
 * that is a link leads to a store (`sub/.config -> ../cfg` makes `cfg/gh` one), which no walk
 * or journal finds by name, since neither follows links.
 */
const CREDENTIAL_MIDDLES: ReadonlyMap<string, ReadonlyArray<{ before: string; rest: string }>> =
  (() => {
    const middles = new Map<string, Array<{ before: string; rest: string }>>();
    for (const path of CREDENTIAL_PATHS.filter((p) => p.includes("/"))) {
      const parts = path.split("/");
      for (let i = 0; i < parts.length - 1; i++) {
        const entry = { before: parts.slice(0, i).join("/"), rest: parts.slice(i + 1).join("/") };
        middles.set(parts[i]!, [...(middles.get(parts[i]!) ?? []), entry]);
      }
    }
    return middles;
  })();

/**
 * Where the credential stores would be that an entry `name` in the folder `dir` leads to when
 * it is a link (`/p/sub` and `.config`: `/p/sub/.config/gh`...); empty for other names. Named
 * through the link: the caller resolves them.
 */
export function storesThroughLink(dir: string, name: string): string[] {
  return (CREDENTIAL_MIDDLES.get(name) ?? [])
    .filter((m) => m.before === "" || dir.endsWith(`/${m.before}`))
    .map((m) => `${dir}/${name}/${m.rest}`);
}

/**
 * True for a host-run name, a credential name (a part of one too: storesThroughLink), or a
 * name matching a secret pattern (before any `allowSecretFiles`: the scan applies the user's
 * list itself).
 */
export function isMarkedName(name: string): boolean {
  return isHostRunName(name) || HOST_RUN_INNER_NAMES.has(name) || CREDENTIAL_NAMES.has(name) ||
    CREDENTIAL_TAILS.has(name) || CREDENTIAL_MIDDLES.has(name) ||
    (maybeSecret(name) && isSecretFileName(name));
}

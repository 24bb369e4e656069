/**
 * `doctor`'s toolchains line: what a delegate's commands see of the user's toolchains in this
 * project, on both engines alike (src/guard/toolchains.ts): each PATH entry and what became of
 * it, what else was opened read-only and why, the credential files hidden inside, what stays
 * hidden of the home folder, where builds' caches go and the PATH a delegate gets.
 */
import { readdir } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { judgeWorkdir, type WorkdirPolicy } from "../../guard/workdirs.ts";
import { isInside } from "../../platform/path_inside.ts";
import {
  cacheDest,
  cacheEnv,
  JOB_CACHE_DIR,
  type ToolchainView,
  toolchainView,
} from "../../guard/toolchains.ts";
import type { Settings } from "../../settings/types.ts";
import type { Check } from "./check.ts";

/** Names of the home folder's top listed as staying hidden, before "and N more". */
const HIDDEN_SHOWN = 12;

/** The view for a job in `cwd` (when `cwd` may be one), as a server started there has it. */
export async function doctorView(
  s: Settings,
  env: Record<string, string | undefined>,
  cwd: string,
  home: string | undefined,
  userConfigDir: string,
): Promise<{ view: ToolchainView; roots: string[]; refusedCwd?: string }> {
  const policy: WorkdirPolicy = { home: home ?? env.HOME ?? cwd, workspaceRoots: s.workspaceRoots };
  const verdict = await judgeWorkdir(cwd, policy).catch(() => undefined);
  const roots = verdict && !verdict.refusal ? [verdict.real] : [];
  const view = await toolchainView({
    env,
    extra: s.toolchainPaths,
    serverDirs: [userConfigDir, s.stateDir, s.claudeConfigDir],
    roots,
  });
  return {
    view,
    roots,
    ...(verdict?.refusal ? { refusedCwd: verdict.refusal.reason } : {}),
  };
}

/** `path` with the home folder written `~`. */
function shown(path: string, home: string | undefined): string {
  if (!home || !isInside(home, path)) return path;
  const rel = relative(home, path);
  return rel === "" ? "~" : `~/${rel}`;
}

/**
 * The top of the home folder: what stays hidden whole, and what is opened only in part (a
 * toolchain inside it, or the job's directory).
 */
async function homeLines(view: ToolchainView, roots: readonly string[]): Promise<string[]> {
  const home = view.home;
  if (!home) return [];
  let names: string[] = [];
  try {
    names = (await readdir(home)).sort();
  } catch {
    return [];
  }
  const hidden: string[] = [];
  const partly: string[] = [];
  for (const name of names) {
    const path = join(home, name);
    const inside = view.opened.filter((o) => isInside(path, o.path)).map((o) => o.path);
    const jobs = roots.filter((r) => isInside(path, r));
    if (inside.includes(path) || jobs.includes(path)) continue;
    const but = [
      ...inside.map((p) => relative(path, p)),
      ...jobs.map((r) => `${relative(path, r)}, the job's directory`),
    ];
    if (but.length === 0) hidden.push(name);
    else partly.push(`${name} (but ${but.join("; ")})`);
  }
  const more = hidden.length > HIDDEN_SHOWN ? `, and ${hidden.length - HIDDEN_SHOWN} more` : "";
  return [
    `stays hidden in ~: ${
      [...partly, ...hidden.slice(0, HIDDEN_SHOWN)].join(", ") || "nothing else is there"
    }${more}`,
  ];
}

/** The text lines of a view, for the doctor and `doctor --try`. */
export async function viewLines(
  view: ToolchainView,
  roots: readonly string[] = [],
): Promise<string[]> {
  const home = view.home;
  const at = (p: string) => shown(p, home);
  // The reasons name paths too.
  const why = (text: string) => home ? text.replaceAll(`${home}/`, "~/") : text;
  const lines: string[] = [];
  const byEntry = new Set<string>();
  for (const e of view.entries) {
    if (e.state === "relative") {
      lines.push(
        `PATH ${e.entry || "(empty)"}: left out (a relative entry names a folder ` +
          "of the job's, where a delegate could plant commands)",
      );
      continue;
    }
    if (e.state === "missing") {
      lines.push(`PATH ${at(e.entry)}: left out (not a folder here)`);
      continue;
    }
    if (e.state === "system") {
      lines.push(`PATH ${at(e.entry)}: the system's, readable in every sandbox`);
      continue;
    }
    if (e.state === "job") {
      lines.push(`PATH ${at(e.entry)}: in the job's directory, writable`);
      continue;
    }
    if (e.state === "not opened") {
      lines.push(`PATH ${at(e.entry)}: not opened: ${why(e.why ?? "")}`);
      continue;
    }
    const holder = view.opened.find((o) => isInside(o.path, e.real!));
    const root = !holder || holder.path === e.real
      ? ""
      : holder.why === `install root of ${e.real}`
      ? `, with its install root ${at(holder.path)}`
      : `, with ${at(holder.path)} (${why(holder.why)})`;
    if (holder) byEntry.add(holder.path);
    lines.push(`PATH ${at(e.entry)}: opened read-only${root}`);
  }
  for (const o of view.opened) {
    if (!byEntry.has(o.path)) lines.push(`opened read-only: ${at(o.path)} (${why(o.why)})`);
  }
  for (const h of view.hidden) lines.push(`hidden inside: ${at(h.path)} (${why(h.why)})`);
  for (const r of view.refused) {
    if (!view.entries.some((e) => e.real === r.path)) {
      lines.push(`not opened: ${at(r.path)}: ${why(r.why)}`);
    }
  }
  lines.push(...await homeLines(view, roots));
  const vars = Object.keys(cacheEnv(view)).join(", ");
  lines.push(
    `caches builds write: ${at(cacheDest(home))}, a folder of each job's own ` +
      `(<stateDir>/<job>/${JOB_CACHE_DIR}): ${vars}`,
  );
  lines.push(`delegates' PATH: ${view.path.split(":").map(at).join(":")}`);
  return lines;
}

/** The doctor's line: what delegates see of the user's toolchains in this project. */
export async function toolchainsCheck(
  s: Settings,
  env: Record<string, string | undefined>,
  cwd: string,
  home: string | undefined,
  userConfigFile: string,
): Promise<Check> {
  const base = { id: "toolchains", title: "Toolchains" };
  if (s.sandbox === "off") {
    return {
      ...base,
      status: "warn",
      summary: "the sandbox is off: delegates' commands run as you and read everything you can",
      hint: "Turn it back on with ollama-delegate config --sandbox on",
      details: { sandbox: s.sandbox },
    };
  }
  const { view, roots, refusedCwd } = await doctorView(
    s,
    env,
    cwd,
    home,
    dirname(userConfigFile),
  );
  const left = view.entries.filter((e) => e.state === "not opened");
  const opened = view.entries.filter((e) => e.state === "opened").length;
  const summary = `delegates' commands read ${opened} of your PATH's folders and ` +
    `${view.opened.length} folder(s) in all, read-only (both engines, and verify); ` +
    `${view.hidden.length} credential file(s) hidden inside` +
    (left.length > 0 ? `; ${left.length} PATH folder(s) not opened` : "") +
    (refusedCwd ? ` (shown for no project: this folder cannot be a job's, ${refusedCwd})` : "");
  return {
    ...base,
    status: left.length > 0 ? "warn" : "pass",
    summary,
    ...(left.length > 0
      ? {
        hint: "A PATH folder that is your home folder, holds it or holds or lies in a " +
          "credential store is never opened whole: keep the tool in a folder of its own " +
          "(~/.local/bin) or name that folder with ollama-delegate config --toolchain-path <dir>",
      }
      : {}),
    details: {
      opened: view.opened,
      hidden: view.hidden,
      entries: view.entries,
      refused: view.refused,
      path: view.path,
    },
    lines: await viewLines(view, roots),
  };
}

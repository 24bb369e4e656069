/**
 * Which of the files a job's check runs (check_inputs.ts, check_plan.ts) its delegate changed:
 * in every round of the job, seen through the turn's sink as the engine reports each changed
 * file (all of them, not only those the record keeps), and in the earlier turns of its
 * session, from their records. The check's verdict stands; the reply says what changed next
 * to it, and a pass earns the model no trust in the quality ledger (ledger.ts).
 */
import { realpath } from "node:fs/promises";
import { isAbsolute, sep } from "node:path";
import { errorMessage } from "../../errors.ts";
import type { TurnSink } from "../../engines/types.ts";
import { type FileRole, fileRoles, TOOLS } from "./check_inputs.ts";
import { type CheckPlan, planCheck } from "./check_plan.ts";
import { type FileText, partsOf, readManifest } from "./check_parts.ts";
import type { JobRecord } from "../record.ts";

/** Changed files of the check a record names; past it they are counted. */
export const MAX_CHANGED_CHECK = 20;

/** One file of the check the delegate changed: where, which part, in which earlier turn. */
export interface ChangedInput {
  /** Relative to the job's cwd when below it, else absolute. */
  path: string;
  part?: string;
  turn?: number;
}

/** What the record keeps (record.ts `verification`). */
export interface ChangedCheck {
  changedCheck?: ChangedInput[];
  changedCheckMore?: number;
  changedCheckUnknown?: string;
}

interface Root {
  paths: string[];
  cwd: boolean;
}

export class CheckWatch {
  readonly #found = new Map<string, ChangedInput>();
  /** Manifests at the top of the cwd changed this job, read in part at the report. */
  readonly #parts = new Map<string, readonly string[]>();
  #more = 0;
  #unknown: string | undefined;
  readonly #roleOf: (rel: string) => FileRole | undefined;
  readonly #named: readonly string[];

  private constructor(
    readonly commands: readonly string[],
    readonly plan: CheckPlan | undefined,
    readonly roots: readonly Root[],
    readonly before: ReadonlyMap<string, FileText>,
    readonly cwd: string,
    unknown?: string,
  ) {
    this.#unknown = unknown;
    this.#roleOf = fileRoles(plan?.tools ?? new Set());
    this.#named = [...(plan?.named ?? [])];
  }

  /** Reads the check and the manifests it reads in part, before the delegate's turn. */
  static async start(
    commands: readonly string[],
    cwd: string,
    addDirs: readonly string[],
  ): Promise<CheckWatch> {
    const roots = await Promise.all(
      [cwd, ...addDirs].map(async (path, i): Promise<Root> => ({
        paths: [...new Set([await realpath(path).catch(() => path), path])],
        cwd: i === 0,
      })),
    );
    const real = roots[0]!.paths[0]!;
    let plan: CheckPlan;
    try {
      plan = await planCheck(commands, real);
    } catch (e) {
      return new CheckWatch(
        commands,
        undefined,
        roots,
        new Map(),
        real,
        `the check's commands could not be read: ${errorMessage(e)}`,
      );
    }
    const names = plan.runsProject
      ? [
        ...new Set(
          TOOLS.filter((t) => t.always || plan.tools.has(t)).flatMap((t) =>
            Object.keys(t.parts ?? {})
          ),
        ),
      ]
      : [];
    const before = new Map<string, FileText>();
    for (const name of names) before.set(name, await readManifest(real, name));
    return new CheckWatch(commands, plan, roots, before, real);
  }

  /** `inner` with the changes of this job's turns noted on the way. */
  sink(inner: TurnSink): TurnSink {
    return {
      ...inner,
      fileChanged: (path) => {
        this.#note(path);
        inner.fileChanged?.(path);
      },
      changesPartial: (why) => {
        this.#unknown ??= `the delegate's changes are not all known: ${why}`;
        inner.changesPartial?.(why);
      },
    };
  }

  #note(path: string): void {
    const hit = this.#classify(path);
    if (!hit) return;
    if (hit.role?.kind === "parts" && hit.top && this.before.get(hit.path) !== undefined) {
      this.#parts.set(hit.path, hit.role.parts);
      return;
    }
    this.#add({ path: hit.path });
  }

  #add(input: ChangedInput): void {
    const key = `${input.path}\0${input.part ?? ""}\0${input.turn ?? ""}`;
    if (this.#found.has(key)) return;
    if (this.#found.size >= MAX_CHANGED_CHECK) this.#more++;
    else this.#found.set(key, input);
  }

  /**
   * What `path` (absolute) is to the check; undefined when nothing. By string prefixes, not
   * `path.relative` (which resolves both paths, 15 µs a file): a turn that installs
   * dependencies reports a hundred thousand files.
   */
  #classify(path: string): { path: string; role?: FileRole; top: boolean } | undefined {
    const plan = this.plan;
    if (!plan) return undefined;
    for (const root of this.roots) {
      for (const base of root.paths) {
        if (!path.startsWith(base) || path[base.length] !== sep) continue;
        const posix = sep === "/"
          ? path.slice(base.length + 1)
          : path.slice(base.length + 1).split(sep).join("/");
        const shown = root.cwd ? posix : path;
        const named = this.#named.some((n) =>
          isAbsolute(n)
            ? path === n || path.startsWith(`${n}/`)
            : root.cwd && (posix === n || posix.startsWith(`${n}/`))
        );
        if (named) return { path: shown, top: false };
        if (!plan.runsProject) return undefined;
        const role = this.#roleOf(posix);
        return role ? { path: shown, role, top: root.cwd && !posix.includes("/") } : undefined;
      }
    }
    return undefined;
  }

  /**
   * What the record says: this job's changes (a manifest by the parts that changed), then
   * those of the earlier turns of its session (`earlier`, their records), and why the list
   * may miss some.
   */
  async report(earlier: readonly JobRecord[]): Promise<ChangedCheck> {
    for (const [name, parts] of this.#parts) {
      const was = this.before.get(name);
      const now = await readManifest(this.cwd, name);
      const changed = partsChanged(name, parts, was, now);
      if (changed === undefined) this.#add({ path: name });
      else for (const part of changed) this.#add({ path: name, part });
    }
    let unknown = this.#unknown;
    for (const r of earlier) {
      const own = r.verification;
      if (own && sameCheck(r.checks?.verify, this.commands)) {
        // The turn watched this very check itself, manifests in part: its word stands.
        for (const f of own.changedCheck ?? []) this.#add({ ...f, turn: f.turn ?? r.turn });
        if (own.changedCheckMore) this.#more += own.changedCheckMore;
        unknown ??= own.changedCheckUnknown;
        continue;
      }
      for (const path of r.changedFiles ?? []) {
        const hit = this.#classify(path);
        if (hit) this.#add({ path: hit.path, turn: r.turn });
      }
      if (r.changedFilesMore) {
        unknown ??= `turn ${r.turn} changed ${r.changedFilesMore} files more than its record names`;
      }
      if (r.changedFilesPartial) {
        unknown ??= `the changes of turn ${r.turn} are not all known: ${r.changedFilesPartial}`;
      }
    }
    const found = [...this.#found.values()];
    return {
      ...(found.length > 0 ? { changedCheck: found } : {}),
      ...(this.#more > 0 ? { changedCheckMore: this.#more } : {}),
      ...(unknown !== undefined ? { changedCheckUnknown: unknown } : {}),
    };
  }
}

/** The parts of `name` that differ; undefined when either side cannot be read in parts. */
function partsChanged(
  name: string,
  parts: readonly string[],
  was: FileText,
  now: FileText,
): string[] | undefined {
  if (was === undefined || now === undefined || now === "absent") return undefined;
  const after = partsOf(name, now, parts);
  if (!after) return undefined;
  const before = was === "absent" ? new Map<string, string>() : partsOf(name, was, parts);
  if (!before) return undefined;
  return parts.filter((p) => (before.get(p) ?? "") !== (after.get(p) ?? ""));
}

/** Whether the delegate changed what the job's check runs, or may have unseen. */
export function checkChanged(v: ChangedCheck | undefined): boolean {
  return (v?.changedCheck?.length ?? 0) > 0 || (v?.changedCheckMore ?? 0) > 0 ||
    v?.changedCheckUnknown !== undefined;
}

function sameCheck(a: readonly string[] | undefined, b: readonly string[]): boolean {
  return a !== undefined && a.length === b.length && a.every((c, i) => c === b[i]);
}

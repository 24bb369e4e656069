import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import * as is from "../platform/shape.ts";
import { defaultSettings, fieldOf, FIELDS } from "./fields.ts";
import { unknownDefaultBackend } from "./backends.ts";
import type { FieldSpec, Narrowed, SettingKey, Settings } from "./types.ts";
import { absolutePath, type ConfigLocations, configLocations } from "./paths.ts";
import { projectModelRefusal, userDefaultIsCloud, type UserModels } from "./narrow.ts";

export type LayerName = "default" | "user" | "project" | "env";

/** What happened to one settings file. */
export interface LayerInfo {
  name: LayerName;
  /** The file, for the user and project layers. */
  path?: string;
  status: "loaded" | "missing" | "invalid" | "unused";
  /** Why the file could not be used at all (unreadable, not JSON, not an object). */
  error?: string;
  /** The keys this layer set validly. */
  keys: string[];
}

/**
 * A value that was named and not used; never dropped silently, or a typo in a setting would
 * quietly leave its default in force.
 */
export interface SettingProblem {
  layer: LayerName;
  /** The file or variable the value came from. */
  where: string;
  key: string;
  reason: string;
  /**
   * The rule that refused it ("a project file, which delegates can write, may narrow ..."),
   * said after the reason (problemReason); a reader that shows the rule anyway takes the
   * reason alone.
   */
  rule?: string;
  /** What is in force instead, already rendered for people. */
  using?: string;
}

/** A problem's reason with the rule behind it, as every list of problems says it. */
export function problemReason(p: SettingProblem): string {
  return p.rule ? `${p.reason}; ${p.rule}` : p.reason;
}

export interface ResolvedSettings {
  settings: Settings;
  /** The layer each value came from. */
  sources: Record<SettingKey, LayerName>;
  layers: LayerInfo[];
  problems: SettingProblem[];
  locations: ConfigLocations;
  /**
   * The models the user chose (user file and environment): what a project's settings file and
   * agents may pick among (narrow.ts `projectModelRefusal`).
   */
  userModels: UserModels;
}

export interface LoadOptions {
  env: Record<string, string | undefined>;
  cwd: string;
  home?: string;
  /** Replaces a file's content, for `config` to preview a write before making it. */
  overrides?: Partial<Record<"user" | "project", Record<string, unknown>>>;
}

/** The raw content of a settings file: an object, or why it is not usable. */
export type FileRead =
  | { kind: "missing" }
  | { kind: "invalid"; error: string }
  | { kind: "object"; value: Record<string, unknown> };

/** Reads a settings file without ever throwing: a broken file is reported, not fatal. */
export function readSettingsFile(path: string): FileRead {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { kind: "missing" };
    return { kind: "invalid", error: `cannot read: ${(e as Error).message}` };
  }
  if (text.trim() === "") return { kind: "object", value: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { kind: "invalid", error: `not valid JSON: ${(e as Error).message}` };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { kind: "invalid", error: "must hold a JSON object" };
  }
  return { kind: "object", value: value as Record<string, unknown> };
}

const KNOWN = new Set<string>(FIELDS.map((f) => f.key));

/**
 * Resolves settings from four layers, later winning: defaults, user file, project file,
 * environment. A value that fails validation is reported with its layer and the value
 * from the layer below stays in force.
 */
export function loadSettings(options: LoadOptions): ResolvedSettings {
  const home = options.home ?? homedir();
  const locations = configLocations(options.env, options.cwd, home);
  const settings = defaultSettings();
  const sources = Object.fromEntries(FIELDS.map((f) => [f.key, "default"])) as Record<
    SettingKey,
    LayerName
  >;
  const problems: SettingProblem[] = [];
  const layers: LayerInfo[] = [{ name: "default", status: "loaded", keys: [] }];

  const apply = (
    spec: FieldSpec,
    raw: unknown,
    layer: LayerName,
    where: string,
  ): boolean => {
    const parsed = (spec.schema as is.Shape<unknown>).safeParse(raw);
    if (!parsed.success) {
      problems.push({
        layer,
        where,
        key: spec.key,
        reason: `${JSON.stringify(raw)} ${describeIssue(parsed.error)}`,
      });
      return false;
    }
    let value = parsed.data;
    if (layer === "project" && spec.projectNarrow) {
      const below = settings[spec.key];
      const narrowed: Narrowed<unknown> = spec.projectNarrow(value as never, below as never);
      const rule = `a project file, which delegates can write, may narrow the ${
        sources[spec.key]
      } value ${JSON.stringify(below)}, never widen it`;
      if ("refused" in narrowed) {
        problems.push({
          layer,
          where,
          key: spec.key,
          reason: `${JSON.stringify(raw)} is not honoured: ${narrowed.refused}`,
          rule,
        });
        return false;
      }
      if (narrowed.leftOut) {
        problems.push({
          layer,
          where,
          key: spec.key,
          reason: `${JSON.stringify(raw)} is honoured in part: ${narrowed.leftOut}`,
          rule,
        });
      }
      value = narrowed.value;
    }
    (settings as unknown as Record<string, unknown>)[spec.key] = value;
    sources[spec.key] = layer;
    return true;
  };

  // The user's own values, before the project file: what it may pick among.
  let belowProject: { defaultModel: string; source: LayerName; allowedModels: string[] } = {
    defaultModel: "",
    source: "default",
    allowedModels: [],
  };
  for (const layer of ["user", "project"] as const) {
    if (layer === "project") {
      belowProject = {
        defaultModel: settings.defaultModel,
        source: sources.defaultModel,
        allowedModels: [...settings.allowedModels],
      };
    }
    const path = layer === "user" ? locations.userFile : locations.projectFile;
    const override = options.overrides?.[layer];
    const read: FileRead = override ? { kind: "object", value: override } : readSettingsFile(path);
    if (read.kind !== "object") {
      layers.push({
        name: layer,
        path,
        status: read.kind,
        keys: [],
        ...(read.kind === "invalid" ? { error: read.error } : {}),
      });
      if (read.kind === "invalid") {
        problems.push({ layer, where: path, key: "*", reason: `file ignored: ${read.error}` });
      }
      continue;
    }
    const info: LayerInfo = { name: layer, path, status: "loaded", keys: [] };
    for (const [key, raw] of Object.entries(read.value)) {
      if (!KNOWN.has(key)) {
        problems.push({ layer, where: path, key, reason: "unknown setting, ignored" });
        continue;
      }
      const spec = FIELDS.find((f) => f.key === key)!;
      if (layer === "project" && spec.projectRefuses?.includes(raw)) {
        problems.push({
          layer,
          where: path,
          key,
          reason: `${JSON.stringify(raw)} is not honoured in a project file, which delegates can ` +
            `write; set it in the user file or the environment`,
        });
        continue;
      }
      if (layer === "project" && spec.userOnly) {
        problems.push({
          layer,
          where: path,
          key,
          reason: "not honoured in a project file, which delegates can write; " +
            "set it in the user file or the environment",
        });
        continue;
      }
      if (apply(spec, raw, layer, path)) info.keys.push(key);
    }
    layers.push(info);
  }

  const envInfo: LayerInfo = { name: "env", status: "unused", keys: [] };
  for (const spec of FIELDS) {
    const name = spec.env.find((n) => options.env[n] !== undefined && options.env[n] !== "");
    if (!name) continue;
    if (apply(spec, spec.fromEnv(options.env[name]!), "env", name)) envInfo.keys.push(name);
  }
  if (envInfo.keys.length > 0) envInfo.status = "loaded";
  layers.push(envInfo);

  const userModels: UserModels = {
    defaultModel: sources.defaultModel === "project"
      ? belowProject.defaultModel
      : settings.defaultModel,
    allowedModels: sources.allowedModels === "project"
      ? belowProject.allowedModels
      : [...settings.allowedModels],
  };
  if (sources.defaultModel === "project") {
    const asked = settings.defaultModel;
    const why = projectModelRefusal(asked, userModels, userDefaultIsCloud(userModels));
    if (why) {
      settings.defaultModel = belowProject.defaultModel;
      sources.defaultModel = belowProject.source;
      const project = layers.find((l) => l.name === "project");
      if (project) project.keys = project.keys.filter((k) => k !== "defaultModel");
      problems.push({
        layer: "project",
        where: locations.projectFile,
        key: "defaultModel",
        reason: `${JSON.stringify(asked)} is not honoured: ${why}`,
        rule: "a project file, which delegates can write, may pick among the models you " +
          "chose, never move work to another",
      });
    }
  }

  checkDefaultBackend(settings, sources, layers, problems, {
    user: locations.userFile,
    env: fieldOf("defaultBackend").env.find((n) => options.env[n]) ?? "the environment",
  });

  for (const spec of FIELDS) {
    if (spec.isPath && !(spec.key === "claudeBin" && !/[\\/]|^~/.test(settings.claudeBin))) {
      const value = settings[spec.key] as string;
      (settings as unknown as Record<string, unknown>)[spec.key] = absolutePath(
        value,
        options.cwd,
        home,
      );
    }
  }
  for (const spec of FIELDS) {
    if (!("isPathList" in spec) || !spec.isPathList) continue;
    const list = settings[spec.key] as string[];
    (settings as unknown as Record<string, unknown>)[spec.key] = list.map((value) =>
      absolutePath(value, options.cwd, home)
    );
  }
  for (const p of problems) {
    if (p.key !== "*" && KNOWN.has(p.key)) {
      const key = p.key as SettingKey;
      p.using = `${JSON.stringify(settings[key])} from ${sources[key]}`;
    }
  }
  return { settings, sources, layers, problems, locations, userModels };
}

/**
 * `defaultBackend` must name one of `backends`, which may come from another layer: checked once
 * every layer is in. A name that is not there is a problem, and the Ollama at baseUrl stays the
 * default (never a guess at which backend was meant).
 */
function checkDefaultBackend(
  settings: Settings,
  sources: Record<SettingKey, LayerName>,
  layers: LayerInfo[],
  problems: SettingProblem[],
  where: { user: string; env: string },
): void {
  const why = unknownDefaultBackend(settings);
  if (!why) return;
  const layer = sources.defaultBackend;
  problems.push({
    layer,
    where: layer === "env" ? where.env : where.user,
    key: "defaultBackend",
    reason: why,
  });
  settings.defaultBackend = "";
  sources.defaultBackend = "default";
  const info = layers.find((l) => l.name === layer);
  if (info) info.keys = info.keys.filter((k) => k !== "defaultBackend" && k !== where.env);
}

/**
 * What is wrong with a value, said after it (`"sometimes" is not one of off, ondemand, auto`,
 * `0 is not valid: must be at least 1`), as settings problems and `config` say it.
 */
export function describeIssue(error: is.ShapeError): string {
  const issue = error.issues[0];
  if (!issue) return "is not valid";
  const at = issue.path.length > 0 ? ` (at ${issue.path.join(".")})` : "";
  if (issue.code === "invalid_value" && issue.values && issue.values.length > 1) {
    return `is not one of ${issue.values.map((v) => String(v)).join(", ")}${at}`;
  }
  if (issue.code === "invalid_type" && issue.expected) {
    return `is not ${/^[aeiou]/.test(issue.expected) ? "an" : "a"} ${issue.expected}${at}`;
  }
  return `is not valid: ${issue.message}${at}`;
}

/** One line per problem, as printed on stderr at start and in `config`. */
export function formatProblems(problems: readonly SettingProblem[]): string[] {
  return problems.map((p) => {
    const what = p.key === "*" ? p.where : `${p.key} in ${p.where}`;
    const using = p.using ? `; using ${p.using}` : "";
    return `Invalid setting ${what} (${p.layer} layer): ${problemReason(p)}${using}`;
  });
}

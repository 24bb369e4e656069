/**
 * How a project file may change the user's policy. The project file lives in the directory
 * delegates work in, so a delegate can write it: it may narrow what the user allowed, never
 * widen it. Each rule gets the project's (valid) value and the value in force from the layers
 * below (default, user file) and says what is honoured.
 */
import { canonicalModelName, hasCloudSuffix, sameModel } from "./model_names.ts";
import type { DelegationMode, Narrowed, PermissionMode, Residency } from "./types.ts";

const DELEGATION_ORDER: Record<DelegationMode, number> = { off: 0, ondemand: 1, auto: 2 };

/** A project file may make delegation less eager, not more (off < ondemand < auto). */
export function narrowDelegationMode(
  project: DelegationMode,
  below: DelegationMode,
): Narrowed<DelegationMode> {
  if (DELEGATION_ORDER[project] <= DELEGATION_ORDER[below]) return { value: project };
  return { refused: `it is more eager than "${below}" (off < ondemand < auto)` };
}

/**
 * How much a permission mode lets a delegate do unasked. manual, default and dontAsk all
 * refuse what was not pre-approved in a run nobody watches.
 */
const PERMISSION_ORDER: Record<PermissionMode, number> = {
  plan: 0,
  manual: 1,
  default: 1,
  dontAsk: 1,
  acceptEdits: 2,
  auto: 3,
  bypassPermissions: 4,
};

/** How much `mode` lets a delegate do unasked: a higher rank allows more. */
export function permissionRank(mode: PermissionMode): number {
  return PERMISSION_ORDER[mode];
}

/** A project file may pick a mode that allows no more than the one in force below it. */
export function narrowPermissionMode(
  project: PermissionMode,
  below: PermissionMode,
): Narrowed<PermissionMode> {
  if (PERMISSION_ORDER[project] <= PERMISSION_ORDER[below]) return { value: project };
  return {
    refused: `it allows more than "${below}" (plan < manual, default, dontAsk < acceptEdits ` +
      "< auto < bypassPermissions)",
  };
}

/**
 * The project's models that the user's list allows. An empty list means every model, so it
 * may only stand where the user's list is empty too; the result is never "every model" when
 * the user named some.
 */
export function narrowAllowedModels(project: string[], below: string[]): Narrowed<string[]> {
  if (below.length === 0) return { value: project };
  const shown = below.join(", ");
  if (project.length === 0) {
    return { refused: `an empty list means every model, wider than the allowed list (${shown})` };
  }
  const allowed = new Set(below.map(canonicalModelName));
  const kept = project.filter((m) => allowed.has(canonicalModelName(m)));
  const out = project.filter((m) => !allowed.has(canonicalModelName(m)));
  if (kept.length === 0) {
    return { refused: `none of its models is in the allowed list (${shown})` };
  }
  if (out.length === 0) return { value: kept };
  return {
    value: kept,
    leftOut: `${out.map((m) => `"${m}"`).join(", ")} left out: not in the allowed list (${shown})`,
  };
}

/**
 * A project file may keep work local where the user lets it go anywhere, never the reverse: a
 * cloned repository must not send work the user keeps local to a cloud model or a remote host.
 */
export function narrowResidency(project: Residency, below: Residency): Narrowed<Residency> {
  if (project === "local" || below === "any") return { value: project };
  return { refused: `it lets work leave this machine, which "${below}" does not (local < any)` };
}

/** A project file may lower a limit (a timeout, a count, a size), not raise it. */
export function narrowNumber(project: number, below: number): Narrowed<number> {
  if (project <= below) return { value: project };
  return { refused: `it is above ${below}; a project file may only lower it` };
}

/**
 * The models the user chose, from the user file and the environment (never the project file):
 * their `defaultModel` and every model of their `allowedModels`. An empty allowedModels lets
 * calls use any model, but names none here.
 */
export interface UserModels {
  defaultModel: string;
  allowedModels: readonly string[];
}

/** The user's chosen models, for messages: "a, b" or "none". */
export function chosenModels(user: UserModels): string[] {
  const out: string[] = [];
  for (const m of [...(user.defaultModel ? [user.defaultModel] : []), ...user.allowedModels]) {
    if (!out.some((o) => sameModel(o, m))) out.push(m);
  }
  return out;
}

/**
 * Why a project (its settings file, or one of its agents' `model` and `fallback`) may not move
 * work to `model`, or undefined when it may. A cloned repository's files would otherwise send
 * the user's prompts and code to whatever model they name, a cloud one included (issue 28,
 * item 7). So a project may only pick among the models the user chose (UserModels), and never
 * move work from a local model to one on Ollama's cloud: `replacesCloud` says whether the model
 * the work runs on without the project's word is a cloud model itself. Cloud models are told by
 * their name (`:cloud`, `-cloud`), as Ollama tells them.
 */
export function projectModelRefusal(
  model: string,
  user: UserModels,
  replacesCloud: boolean,
): string | undefined {
  const chosen = chosenModels(user);
  if (!chosen.some((m) => sameModel(m, model))) {
    return chosen.length === 0
      ? "you chose no model a project may pick (neither defaultModel nor allowedModels names one)"
      : `it is not one of the models you chose (${chosen.join(", ")}: your defaultModel and ` +
        "allowedModels)";
  }
  if (hasCloudSuffix(model) && !replacesCloud) {
    return "it runs on Ollama's cloud, and without the project the work runs on a local model";
  }
  return undefined;
}

/** Whether the model a call without one gets, by the user's own settings, is a cloud model. */
export function userDefaultIsCloud(user: UserModels): boolean {
  // Without a defaultModel, the first allowed cloud model is picked (models/catalog.ts).
  return user.defaultModel
    ? hasCloudSuffix(user.defaultModel)
    : user.allowedModels.some(hasCloudSuffix);
}

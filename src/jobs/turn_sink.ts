/**
 * The callbacks through which an engine reports a running turn into its job's record: what the
 * delegate does, its tool calls, warnings, commands and changed files. Every round of a job
 * (the delegate's turn, then each repair round) reports into the same record.
 */
import type { Activity, TurnSink } from "../engines/types.ts";
import { jobAsk, type PermissionAsker } from "./permission_asks.ts";
import { identityOf } from "../platform/process_identity.ts";
import { ACTIVITY_KEEP, keptActivity, type LiveJob } from "./live_job.ts";
import { isTerminal } from "./record.ts";
import type { JobStore } from "./store.ts";

/** Changed files a record names; past it they are counted (`changedFilesMore`). */
export const MAX_CHANGED_KEPT = 1000;

/** Hidden paths a record names; past it they are counted (`hiddenMore`). */
export const MAX_HIDDEN_KEPT = 100;

export function turnSink(live: LiveJob, store: JobStore, asker?: PermissionAsker): TurnSink {
  const record = live.record;
  const changed = new Set(record.changedFiles ?? []);
  const activity = (a: Activity) => {
    live.activities.push(keptActivity(a));
    if (live.activities.length > ACTIVITY_KEEP) live.activities.shift();
  };
  // Whether a person can be asked is decided as the turn starts: the engine offers its tools by it.
  const ask = asker?.canAsk()
    ? jobAsk(record, asker, (text) => activity({ kind: "text", text }))
    : undefined;
  return {
    ...(ask ? { ask } : {}),
    activity,
    toolCall: (info) => {
      record.toolCalls++;
      if (info?.recovered) record.toolCallsRecovered = (record.toolCallsRecovered ?? 0) + 1;
    },
    warning: (text) => {
      const warnings = (record.warnings ??= []);
      if (!warnings.includes(text)) warnings.push(text);
    },
    sandbox: (text) => {
      record.sandbox = text;
    },
    hidden: (paths) => {
      // The last turn's: a follow-up's sandbox looks again.
      delete record.hidden;
      delete record.hiddenMore;
      if (paths.length === 0) return;
      record.hidden = paths.slice(0, MAX_HIDDEN_KEPT);
      if (paths.length > MAX_HIDDEN_KEPT) record.hiddenMore = paths.length - MAX_HIDDEN_KEPT;
    },
    contextElided: (count) => {
      record.contextElisions = (record.contextElisions ?? 0) + count;
    },
    sessionStarted: (info) => {
      record.sessionCreated = true;
      if (info.permissionMode) record.effectivePermissionMode = info.permissionMode;
      store.write(record).catch(() => {});
    },
    commandRun: (run) => {
      (record.commands ??= []).push(run);
    },
    fileChanged: (path) => {
      if (changed.has(path)) return;
      changed.add(path);
      // A command can change a hundred thousand files (an install): the record keeps the
      // first ones and counts the rest.
      const files = (record.changedFiles ??= []);
      if (files.length < MAX_CHANGED_KEPT) files.push(path);
      else record.changedFilesMore = (record.changedFilesMore ?? 0) + 1;
    },
    changesPartial: (why) => {
      record.changedFilesPartial = why;
    },
    changesTracked: () => {
      record.changesTracked = true;
    },
    childStarted: (pid) => {
      identityOf(pid).then((child) => {
        if (child && !isTerminal(record.state)) {
          record.child = child;
          return store.write(record);
        }
      }).catch(() => {});
    },
  };
}

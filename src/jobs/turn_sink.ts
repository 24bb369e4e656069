/**
 * The callbacks through which an engine reports a running turn into its job's record: what the
 * delegate does, its tool calls, warnings, commands and changed files. Every round of a job
 * (the delegate's turn, then each repair round) reports into the same record.
 */
import type { TurnSink } from "../engines/types.ts";
import { identityOf } from "../platform/process_identity.ts";
import { ACTIVITY_KEEP, keptActivity, type LiveJob } from "./live_job.ts";
import { isTerminal } from "./record.ts";
import type { JobStore } from "./store.ts";

export function turnSink(live: LiveJob, store: JobStore): TurnSink {
  const record = live.record;
  return {
    activity: (a) => {
      live.activities.push(keptActivity(a));
      if (live.activities.length > ACTIVITY_KEEP) live.activities.shift();
    },
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
      const files = (record.changedFiles ??= []);
      if (!files.includes(path)) files.push(path);
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

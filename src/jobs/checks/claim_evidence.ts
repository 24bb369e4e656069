/**
 * The evidence a job's final text is checked against (claims.ts): the commands it ran with how
 * they ended, the files it changed, and the server's own verification commands. The native
 * engine records commands and changes itself; for another engine they are read back from its
 * transcript through its folder reader (tool calls and whether their results were errors).
 */
import { join } from "node:path";
import { engineTraits, folderReader } from "../../engines/registry.ts";
import { readFileTail } from "../../platform/file_ends.ts";
import type { ClaimEvidence } from "./claims.ts";
import type { JobRecord } from "../record.ts";

/** The most of a transcript read for evidence: its last 16 MiB. */
const TRANSCRIPT_BYTES = 16 * 1024 * 1024;
const EDIT_TOOLS = new Set(["Write", "Edit", "MultiEdit", "NotebookEdit"]);

export async function claimEvidence(record: JobRecord, dir: string): Promise<ClaimEvidence> {
  const commands: ClaimEvidence["commands"] = (record.commands ?? []).map((c) => ({
    command: c.command,
    failed: c.refused !== undefined || c.exitCode !== 0,
  }));
  const changed = new Set(record.changedFiles ?? []);
  if (record.commands === undefined) {
    const seen = await fromTranscript(record, dir);
    commands.push(...seen.commands);
    for (const f of seen.edited) changed.add(f);
  }
  for (const line of (record.worktree?.diffStat ?? "").split("\n")) {
    const m = /^\s*(.+?)\s+\|\s+/.exec(line);
    if (m) changed.add(join(record.worktree!.path, m[1]!.trim()));
  }
  for (const round of record.verification?.rounds ?? []) {
    for (const run of round.runs) {
      commands.push({ command: run.command, failed: run.exitCode !== 0, byServer: true });
    }
  }
  return {
    commands,
    changedFiles: [...changed],
    // An engine that compares the folders before and after is complete; a worktree's diff too.
    changesComplete: engineTraits(record.engine).completeChanges ||
      record.worktree?.diffStat !== undefined,
  };
}

/** Bash commands (and whether their results were errors) and edited files, from a transcript. */
async function fromTranscript(
  record: JobRecord,
  dir: string,
): Promise<{ commands: ClaimEvidence["commands"]; edited: string[] }> {
  const out = { commands: [] as ClaimEvidence["commands"], edited: [] as string[] };
  try {
    const reader = await folderReader(record.engine);
    const tail = await readFileTail(join(dir, reader.activityFile), TRANSCRIPT_BYTES);
    if (!tail) return out;
    const text = tail.text;
    const read = reader.transcriptReader();
    const calls = new Map<string, { command?: string; file?: string }>();
    for (const line of text.split("\n")) {
      for (const entry of read(line) ?? []) {
        if (entry.kind === "tool_call") {
          const input = (entry.input ?? {}) as Record<string, unknown>;
          const call: { command?: string; file?: string } = {};
          if (entry.name === "Bash" && typeof input.command === "string") {
            call.command = input.command;
          }
          const file = input.file_path ?? input.notebook_path;
          if (EDIT_TOOLS.has(entry.name) && typeof file === "string") call.file = file;
          calls.set(entry.id, call);
        } else if (entry.kind === "tool_result") {
          const call = calls.get(entry.id);
          if (call?.command !== undefined) {
            out.commands.push({ command: call.command, failed: entry.isError });
          }
          if (call?.file !== undefined && !entry.isError) out.edited.push(call.file);
          calls.delete(entry.id);
        }
      }
    }
    // A call without its result (the turn was stopped): the command's end is unknown.
    for (const call of calls.values()) {
      if (call.command !== undefined) out.commands.push({ command: call.command });
    }
  } catch {
    // No transcript: the evidence is what the record holds.
  }
  return out;
}

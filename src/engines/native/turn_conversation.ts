/**
 * A native turn's conversation as the model is sent it: the system prompt (rebuilt every turn),
 * the history of the turns before (what fits), and the task with any files read into it. Written
 * to the job folder's `messages.jsonl` before the loop starts, so that a follow-up resumes it,
 * also after a restart.
 */
import { open, realpath, rename } from "node:fs/promises";
import { join } from "node:path";
import type { ChatMessage } from "../../backends/chat_types.ts";
import type { GuardIdentities } from "../../guard/identities.ts";
import type { TurnSink, TurnSpec } from "../types.ts";
import type { ContextCap } from "./context/budget.ts";
import { type History, historyBudget, readHistory } from "./context/history.ts";
import { MESSAGES_FILE } from "./folder.ts";
import { line } from "./jsonl_writer.ts";
import { inlineFiles } from "./one_shot.ts";
import type { ToolPolicy } from "./permissions.ts";
import { systemPrompt } from "./prompt.ts";

/** What the conversation is built from: the turn's directories, tools, guard and prompt. */
export interface ConversationInput {
  cwd: string;
  roots: string[];
  protect: string[];
  allowSecretFiles: readonly string[];
  guard: GuardIdentities;
  policy: ToolPolicy;
  prompt: string;
  /** The context the turn may fill: how much of the history and of the files fits. */
  cap: ContextCap;
}

/** The messages of the turn's first request, and what of the history was left out or repaired. */
export async function openConversation(
  spec: TurnSpec,
  sink: TurnSink,
  input: ConversationInput,
): Promise<{ messages: ChatMessage[]; history: History }> {
  const { prompt, cap, policy } = input;
  let userText = prompt;
  if (spec.options.files && spec.options.files.length > 0) {
    const contextTokens = cap.source === "assumed" ? undefined : cap.tokens;
    const inlined = await inlineFiles({
      prompt,
      files: spec.options.files,
      cwd: input.cwd,
      roots: input.roots,
      protect: input.protect,
      allowSecretFiles: input.allowSecretFiles,
      guard: input.guard,
      pathRefusal: policy.pathRefusal,
      model: spec.model,
      ...(contextTokens !== undefined ? { contextTokens } : {}),
    });
    userText = inlined.message;
    sink.activity({
      kind: "tool",
      name: "files",
      detail: `${inlined.included.length} inlined (~${inlined.fileTokens} tokens)` +
        (inlined.skipped.length > 0
          ? `, ${inlined.skipped.length} skipped: ${
            inlined.skipped.map((s) => `${s.path} (${s.reason})`).join("; ")
          }`
          : ""),
    });
  }

  // Rebuilt every turn: a follow-up may change the tools, the mode or the appended prompt.
  const system: ChatMessage = {
    role: "system",
    content: systemPrompt({
      cwd: input.cwd,
      tools: policy.tools,
      ...(spec.options.appendSystemPrompt ? { append: spec.options.appendSystemPrompt } : {}),
    }),
  };
  const user: ChatMessage = { role: "user", content: userText };
  // The new file holds the whole conversation again, copied as the history is read; memory
  // holds only what fits the history budget.
  let history: History = { messages: [], leftOut: { messages: 0, bytes: 0 } };
  // A repair round after a failed verification continues the conversation in its own job
  // folder: the new file is written beside the one it copies, then takes its place.
  const messagesPath = join(spec.dir, MESSAGES_FILE);
  const sameFolder = spec.previousDir !== undefined && await sameDir(spec.previousDir, spec.dir);
  const writing = sameFolder ? `${messagesPath}.next` : messagesPath;
  const file = await open(writing, "w", 0o600);
  try {
    await file.write(line(system));
    if (spec.previousDir) history = await readHistory(spec.previousDir, historyBudget(cap), file);
    await file.write(line(user));
  } finally {
    await file.close();
  }
  if (sameFolder) await rename(writing, messagesPath);
  return { messages: [system, ...history.messages, user], history };
}

/** Whether two paths name one directory. */
async function sameDir(a: string, b: string): Promise<boolean> {
  const real = (p: string) => realpath(p).catch(() => p);
  return (await real(a)) === (await real(b));
}

/**
 * A repository a delegate makes inside its worktree, end to end: the real server over stdio,
 * a native delegate in real bubblewrap running real git in its Bash, the Ollama emulator
 * scripting the tool calls. The delegate's repository names a filter in its own config; the
 * server commits the turn, checks the worktree at the follow-up, and sums it up, all with git
 * on the host. None of that may run the filter, and the reply says the repository was left out.
 */
import { git } from "../support/git_repo.ts";
import assert from "node:assert/strict";
import { existsSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { field, tempDir } from "../support/harness.ts";
import type { ChatReply, ChatRequestView } from "../support/emulator/chat_script.ts";
import { startInProcessScene } from "../support/in_process_scene.ts";

const linux = process.platform === "linux";
const native = { engine: "native", model: "qwen3:8b", isolation: "worktree", wait_seconds: 120 };
const LONG = { timeoutMs: 240_000 };

/** The follow-up's model: one Bash call writing ok.txt again, then a reply. */
function followupScript(view: ChatRequestView): ChatReply | undefined {
  const messages = view.messages as Array<{ role: string; content?: unknown }>;
  const lastUser = messages.map((m) => m.role).lastIndexOf("user");
  if (!JSON.stringify(messages[lastUser]?.content ?? "").includes("SECOND-TURN")) return undefined;
  return messages.slice(lastUser).some((m) => m.role === "tool")
    ? { kind: "text", text: "second turn done" }
    : {
      kind: "tool_calls",
      calls: [{ name: "Bash", arguments: { command: "echo more > ok.txt" } }],
    };
}

Deno.test({
  name: "worktree: a repository the delegate makes inside it is not committed, and its filter " +
    "never runs on the host",
  ignore: !linux,
  async fn() {
    await using scene = await startInProcessScene({ emulator: { chatScript: followupScript } });
    const repo = realpathSync(tempDir("od-wt-repo-"));
    git(repo, "init", "-q", "-b", "main");
    writeFileSync(join(repo, "a.txt"), "a\n");
    git(repo, "add", "-A");
    git(repo, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qm", "first");
    // In the user's checkout: a delegate in a worktree cannot write there itself.
    const marker = join(repo, "PWNED");
    const plant = `git init -q sub && cd sub && echo hi > f.txt && ` +
      `printf '* filter=x\\n' > .gitattributes && git add -A && ` +
      `git -c user.name=u -c user.email=e commit -qm x && ` +
      `git config filter.x.clean 'sh -c "id > ${marker}; cat"' && ` +
      // A new size, so that any git reading f.txt must run the filter to compare it.
      `echo changed by the delegate > f.txt && cd .. && echo ordinary > ok.txt`;
    const first = await scene.call("delegate_start", {
      ...native,
      cwd: repo,
      prompt: `@bash ${plant}\n@reply done\ngo`,
    }, LONG);
    assert.equal(first.isError, false, first.text);
    assert.equal(field(first.text, "state"), "completed", first.text);
    assert.equal(existsSync(marker), false, "written during turn 1");
    const branch = field(first.text, "branch")!.split(" ")[0]!;
    // The follow-up: the server checks the worktree (git status) before the turn.
    const second = await scene.call("delegate_followup", {
      job_id: field(first.text, "job_id"),
      prompt: "SECOND-TURN: write ok.txt again",
      wait_seconds: 120,
    }, LONG);
    const ran = existsSync(marker) ? readFileSync(marker, "utf8") : "";
    assert.equal(ran, "", "the server ran the delegate's filter on the host");
    assert.equal(second.isError, false, second.text);
    assert.equal(field(second.text, "state"), "completed", second.text);
    // The turn's reply names what it left out; the branch holds the rest.
    assert.match(first.text, /not committed: sub\/ is a git repository of its own/, first.text);
    assert.match(field(first.text, "take it")!, /^# not on the branch.*: sub\/ /);
    assert.equal(git(repo, "show", `${branch}:ok.txt`), "more\n");
    assert.equal(git(repo, "ls-tree", "-r", "--name-only", branch), "a.txt\nok.txt\n");
  },
});

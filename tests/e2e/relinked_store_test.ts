/**
 * Credential stores reached through linked folders, on both engines. At the top:
 * the project has `.config -> cfg`, so `cfg/gh` is the GitHub CLI's store, hidden by its real
 * path. A delegate removes the link (by name `cfg/gh` is then no store) and reads the store in
 * its next command; a second job renames the store's folder and reads it again; a third reads
 * it under its new name. The server remembers the store by what it is (guard/known_stores.ts):
 * no token reaches the backend. Without that, the native engine's next command read it, and
 * the next job on either engine. Below the top (`sub/.config -> ../shared`): neither the journal
 * nor the walk follows links, and `shared/gh` was hidden from no command or file tool at all.
 * And a store a command makes: the `hidden:` line names what the turn's commands were kept from.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { field, tempDir } from "../support/harness.ts";
import { startScene } from "../support/scene.ts";

const TOKEN = "oauth_token: gho_RELINKED-STORE-TOKEN";

/**
 * A scene whose project holds the token in `<store>/gh/hosts.yml` and the link `link` -> `to`;
 * `job` runs a delegate's commands on `engine` to completion, `sent` is all that reached the
 * backend.
 */
function relinked(engine: "native" | "claude", store: string, link: string, to: string) {
  return scenario(engine, (work) => {
    mkdirSync(join(work, store, "gh"), { recursive: true });
    mkdirSync(join(work, link, ".."), { recursive: true });
    writeFileSync(join(work, store, "gh", "hosts.yml"), `${TOKEN}\n`);
    symlinkSync(to, join(work, link));
  });
}

/** A scene whose project `prepare` fills; `job` and `sent` as for relinked. */
async function scenario(engine: "native" | "claude", prepare: (work: string) => void = () => {}) {
  const scene = await startScene();
  const work = realpathSync(tempDir("od-relinked-"));
  prepare(work);
  const job = async (commands: string[]) => {
    const reply = await scene.call("delegate_start", {
      engine,
      model: "qwen3:8b",
      cwd: work,
      wait_seconds: 90,
      ...(engine === "claude" ? { permission_mode: "bypassPermissions" } : {}),
      prompt: `${commands.map((c) => `@bash ${c}`).join("\n")}\n@reply done\nprobe`,
    });
    assert.equal(field(reply.text, "state"), "completed", reply.text);
    // The reply names what the sandbox kept from the delegate.
    return field(reply.text, "hidden") ?? "";
  };
  const sent = () => scene.emulator.requests.map((r) => r.bodyText).join("\n");
  return { scene, work, job, sent };
}

for (const engine of ["native", "claude"] as const) {
  Deno.test(`${engine}: a store behind a linked folder stays hidden after the link is removed and its folder renamed`, async () => {
    const { scene, work, job, sent } = await relinked(engine, "cfg", ".config", "cfg");
    await using _ = scene;
    const first = await job([
      "cat .config/gh/hosts.yml; echo by-name=$?",
      "rm .config; echo unlinked=$?",
      "cat cfg/gh/hosts.yml; echo same-turn=$?",
    ]);
    assert.match(first, /^\.config\/gh \(credential stores and secret files/);
    await job(["cat cfg/gh/hosts.yml; echo next-job=$?", "mv cfg cfg2; echo renamed=$?"]);
    const last = await job(["cat cfg2/gh/hosts.yml cfg/gh/hosts.yml; echo after-rename=$?"]);
    assert.match(last, /^cfg2\/gh \(/, "named where it is now");
    // The attack happened: the link is gone, the folder renamed.
    assert.equal(existsSync(join(work, ".config")), false);
    assert.ok(existsSync(join(work, "cfg2", "gh", "hosts.yml")));
    assert.match(sent(), /unlinked=0/);
    assert.match(sent(), /renamed=0/);
    for (const step of ["by-name", "same-turn", "next-job", "after-rename"]) {
      assert.match(sent(), new RegExp(`${step}=[1-9]`), `${step}: the read failed`);
    }
    assert.doesNotMatch(sent(), /RELINKED-STORE-TOKEN/);
  });
}

for (const engine of ["native", "claude"] as const) {
  Deno.test(`${engine}: a store behind a linked folder below the top is hidden, also after the link is gone`, async () => {
    const { scene, work, job, sent } = await relinked(engine, "shared", "sub/.config", "../shared");
    await using _ = scene;
    const first = await job([
      "cat sub/.config/gh/hosts.yml; echo through-link=$?",
      "cat shared/gh/hosts.yml; echo real-path=$?",
      "rm sub/.config; echo unlinked=$?",
    ]);
    assert.match(first, /^shared\/gh \(/);
    assert.match(await job(["cat shared/gh/hosts.yml; echo next-job=$?"]), /^shared\/gh \(/);
    assert.equal(existsSync(join(work, "sub", ".config")), false);
    assert.match(sent(), /unlinked=0/);
    for (const step of ["through-link", "real-path", "next-job"]) {
      assert.match(sent(), new RegExp(`${step}=[1-9]`), `${step}: the read failed`);
    }
    assert.doesNotMatch(sent(), /RELINKED-STORE-TOKEN/);
  });
}

for (const engine of ["native", "claude"] as const) {
  Deno.test(`${engine}: a store a command makes is named in the hidden: line of the turn that hid it`, async () => {
    const { scene: running, job, sent } = await scenario(engine);
    await using _ = running;
    // The secret's text is put together by printf, so the command's own text does not hold it.
    // The last command makes a second store: no command came after it, so none was kept from it.
    const made = await job([
      "mkdir .aws && printf 'aws_secret=%s-%s\\n' MADE IN-TURN > .aws/credentials; echo made=$?",
      "cat .aws/credentials; echo same-turn=$?",
      "mkdir .kube && echo 'token: kube' > .kube/config; echo last=$?",
    ]);
    assert.match(sent(), /last=0/);
    assert.doesNotMatch(made, /\.kube/);
    assert.match(sent(), /made=0/);
    const readInTurn = /aws_secret=MADE-IN-TURN/.test(sent());
    if (engine === "native") {
      // Its sandbox looks for the stores at the top before each command.
      assert.equal(readInTurn, false, "the next command read the store");
      assert.match(sent(), /same-turn=[1-9]/);
    }
    // Claude Code runs the turn in one jail, set up as the turn started: the line names the
    // store exactly when a command was kept from it.
    assert.equal(/(^|, )\.aws( |,|$)/.test(made), !readInTurn, `hidden: ${made}`);
    const next = await job(["cat .aws/credentials .kube/config; echo next-job=$?"]);
    assert.match(next, /^\.aws, \.kube \(/);
    assert.match(sent(), /next-job=[1-9]/);
  });
}

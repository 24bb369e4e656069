/** The job layer's errors as the orchestrator reads them, with what it can do next. */
import assert from "node:assert/strict";
import { JobError } from "../../src/jobs/errors.ts";
import { toolErrorText } from "../../src/server/tool_deps.ts";

const ID = "11111111-2222-4333-8444-555555555555";

Deno.test("toolErrorText: each job problem says what happened and which tool helps", () => {
  const text = (p: ConstructorParameters<typeof JobError>[0]) => toolErrorText(new JobError(p));
  assert.equal(
    text({ kind: "unknown-job", id: "nope" }),
    'Unknown job id "nope". Job ids are UUIDs; delegate_list shows the jobs there are',
  );
  assert.equal(
    text({ kind: "bad-job-ref", ref: "abc", why: "too-short" }),
    'Unknown job id "abc". A prefix of a job id needs at least 4 characters (8 are usually ' +
      "unique); delegate_list shows the jobs there are",
  );
  assert.equal(
    text({ kind: "bad-job-ref", ref: "../x\nstate: completed", why: "not-an-id" }),
    'Unknown job id "../x\\nstate: completed". Job ids are UUIDs (hex digits and dashes); a ' +
      "unique prefix of one, at least 4 characters, works too. delegate_list shows the jobs " +
      "there are",
  );
  assert.equal(
    text({ kind: "unmatched-job-prefix", prefix: "abcd", stateDir: "/s", jobs: 0, newest: [] }),
    'Unknown job id "abcd": no job id starts with it, and there are no jobs yet',
  );
  assert.equal(
    text({
      kind: "ambiguous-job-prefix",
      prefix: "abcd",
      count: 9,
      matches: [{ id: ID, state: "running", model: "m\u001b[2J", createdAt: 0 }, { id: ID }],
    }),
    'Ambiguous job id "abcd": 9 job ids start with it (the newest 2 of 9: ' +
      `${ID} (running, m\\033[2J, created 1970-01-01 00:00 UTC); ${ID}). Pass more of the ` +
      "id, or the whole id",
  );
  assert.equal(
    text({ kind: "unknown-session", id: "x".repeat(100) }),
    `Unknown session id "${"x".repeat(80)}". delegate_list shows sessions and their jobs`,
  );
  assert.equal(
    text({ kind: "cancel-pending", id: ID, ownerPid: 42, state: "running", waitedMs: 10_000 }),
    `Asked the server process that runs job ${ID} (pid 42) to cancel it, but it is still ` +
      "running after 10s. The request stays in place and that process acts on it when it " +
      `can; check with delegate_status({ job_id: "${ID}" })`,
  );
  assert.equal(
    text({ kind: "needs-native", what: "files", baseUrl: "http://o:11434" }),
    'Cannot start job: files needs engine "native": only the native engine reads files into ' +
      "the prompt",
  );
  assert.equal(
    text({
      kind: "backend-api",
      engine: "claude",
      backend: "lms",
      backendKind: "openai",
      needs: "messages",
      kinds: ["ollama", "anthropic"],
    }),
    "Cannot start job: the claude engine needs a backend that serves Anthropic's Messages API " +
      '(kind ollama or anthropic), and backend "lms" is of kind openai. Give it engine ' +
      '"native", or name a backend of kind ollama or anthropic',
  );
  assert.equal(
    text({ kind: "unknown-backend", name: "lab", configured: ["ollama"] }),
    'Cannot start job: there is no backend "lab". Configured: ollama. Backends are the ' +
      "user's settings (ollama-delegate config --backend name=url)",
  );
  assert.equal(
    text({ kind: "no-model-for-backend", backend: "lab" }),
    'Cannot start job: name a model for backend "lab" (there is no default model)',
  );
  assert.equal(
    text({ kind: "model-not-allowed", model: "m", allowed: ["a", "b"] }),
    'Cannot start job: model "m" is not in the allowed list (a, b). Only the user can ' +
      "change the list, from a terminal",
  );
  assert.equal(toolErrorText(new Error("boom")), "Internal error: boom");
});

import assert from "node:assert/strict";
import type { JobRecord } from "../../src/jobs/record.ts";
import { renderList } from "../../src/server/list.ts";

const A = "aaaaaaaa-0000-4000-8000-000000000001";
const B = "bbbbbbbb-0000-4000-8000-000000000002";
const C = "cccccccc-0000-4000-8000-000000000003";

Deno.test("renderList: a queued job's line ends with where it stands", () => {
  const record = (id: string, state: JobRecord["state"]): JobRecord => ({
    format: 1,
    id,
    sessionId: A,
    turn: 1,
    engine: "claude",
    model: "qwen3-coder",
    cwd: "/work",
    state,
    createdAt: 1_700_000_000_000,
    promptPreview: "p",
    options: { permissionMode: "auto", addDirs: [] },
    sessionCreated: false,
    toolCalls: 0,
    permissionDenials: [],
  });
  const text = renderList(
    "/s",
    { records: [record(B, "queued"), record(C, "running")], total: 2, corrupt: [] },
    undefined,
    {},
    new Map([[B, '1st in line for backend "ollama"']]),
  );
  const lines = text.split("\n");
  assert.ok(lines.find((l) => l.includes(B))!.endsWith('"p"  (1st in line for backend "ollama")'));
  assert.match(lines.find((l) => l.includes(C))!, /"p"$/);
});

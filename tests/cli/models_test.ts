/**
 * `ollama-delegate models derive` and `models list` as a user runs them: the command in this
 * process with its environment injected (tests/cli/jobs_support.ts; cli_wiring_test.ts checks
 * the program prints the same), against the Ollama emulator's /api/create, /api/show and
 * /api/ps, one emulator per endpoint for a pool.
 */
import assert from "node:assert/strict";
import { type EmulatedModel, startOllamaEmulator } from "../support/emulator/emulator.ts";
import { cliEnv, runCli } from "./jobs_support.ts";
import { assertEscaped, EVIL_MODEL, EVIL_SHOWN } from "./backend_text_support.ts";

const MODELS: EmulatedModel[] = [
  { name: "qwen3-coder:30b", contextLength: 262_144 },
  { name: "qwen3:8b", contextLength: 32_768 },
  { name: "llama3.2:3b", contextLength: 131_072 },
  { name: "glm-5:cloud", contextLength: 202_752 },
];

async function show(url: string, model: string): Promise<Record<string, unknown> | undefined> {
  const response = await fetch(`${url}/api/show`, {
    method: "POST",
    body: JSON.stringify({ model }),
  });
  if (response.status === 404) {
    await response.body?.cancel();
    return undefined;
  }
  assert.equal(response.status, 200);
  return await response.json() as Record<string, unknown>;
}

const creates = (emu: { requests: { path: string; bodyText: string }[] }) =>
  emu.requests.filter((r) => r.path === "/api/create");

Deno.test("models derive: creates the model with num_ctx through /api/create and says how to use it", async () => {
  const emu = await startOllamaEmulator({ models: MODELS });
  try {
    const ctx = cliEnv({ env: { OLLAMA_MCP_BASE_URL: emu.url } });
    const run = await runCli(ctx, ["models", "derive", "qwen3-coder:30b", "--ctx", "64k"]);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(
      run.stdout,
      /^Created "qwen3-coder:30b-ctx64k" from "qwen3-coder:30b": Ollama runs it with a context of 65536 tokens \(num_ctx 65536\)\.$/m,
    );
    assert.match(
      run.stdout,
      /^ {2}ollama-delegate config --default-model qwen3-coder:30b-ctx64k$/m,
    );

    // What Ollama was asked, and what it now holds.
    const [create] = creates(emu);
    assert.deepEqual(create && JSON.parse(create.bodyText), {
      model: "qwen3-coder:30b-ctx64k",
      from: "qwen3-coder:30b",
      parameters: { num_ctx: 65536 },
      stream: false,
    });
    const made = await show(emu.url, "qwen3-coder:30b-ctx64k");
    assert.ok(made, "the derived model exists");
    assert.match(String(made.parameters), /^num_ctx\s+65536$/m);
    assert.equal((made.details as Record<string, unknown>).parent_model, "qwen3-coder:30b");
    const base = await show(emu.url, "qwen3-coder:30b");
    assert.doesNotMatch(String(base?.parameters), /num_ctx/, "the base model is unchanged");

    // models list shows the new model's num_ctx next to its maximum.
    const list = await runCli(ctx, ["models", "list", "--json"]);
    assert.equal(list.code, 0, list.stderr);
    const listed = (JSON.parse(list.stdout) as {
      models: { name: string; cloud: boolean; context: Record<string, unknown> }[];
    }).models;
    const derived = listed.find((m) => m.name === "qwen3-coder:30b-ctx64k");
    assert.deepEqual(derived?.context, {
      max: 262_144,
      numCtx: 65_536,
      effective: 65_536,
      source: "modelfile",
    });
    assert.equal(listed.find((m) => m.name === "glm-5:cloud")?.cloud, true);
    const table = await runCli(ctx, ["models", "list"]);
    assert.match(table.stdout, /^ {2}qwen3-coder:30b-ctx64k +local +yes +262144 +65536 +no$/m);
    assert.match(table.stdout, /^ {2}glm-5:cloud +cloud +yes +202752 +n\/a +no$/m);

    // Deriving again replaces the model it made before.
    const again = await runCli(ctx, ["models", "derive", "qwen3-coder:30b", "--ctx", "65536"]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /^Replaced "qwen3-coder:30b-ctx64k"/m);
  } finally {
    await emu.close();
  }
});

Deno.test("models derive --name: the new name, added to the allowlist in force", async () => {
  const emu = await startOllamaEmulator({ models: MODELS });
  try {
    const ctx = cliEnv({
      env: { OLLAMA_MCP_BASE_URL: emu.url },
      userConfig: { allowedModels: ["qwen3:8b", "glm-5:cloud"], defaultModel: "qwen3:8b" },
    });
    const run = await runCli(ctx, [
      "models",
      "derive",
      "qwen3:8b",
      "--ctx",
      "24576",
      "--name",
      "team/qwen3:24k",
    ]);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /^Created "team\/qwen3:24k" from "qwen3:8b"/m);
    assert.match(
      run.stdout,
      /^ {2}ollama-delegate config --allow qwen3:8b,glm-5:cloud,team\/qwen3:24k$/m,
    );
    assert.match(run.stdout, /^ {2}ollama-delegate config --default-model team\/qwen3:24k$/m);
    assert.match(String((await show(emu.url, "team/qwen3:24k"))?.parameters), /^num_ctx\s+24576$/m);
  } finally {
    await emu.close();
  }
});

Deno.test("models derive refuses cloud models, a context above the maximum, unknown models and a name in use", async () => {
  const emu = await startOllamaEmulator({ models: MODELS });
  try {
    const ctx = cliEnv({ env: { OLLAMA_MCP_BASE_URL: emu.url } });
    const cases: Array<[string[], RegExp]> = [
      [
        ["glm-5:cloud", "--ctx", "64k"],
        /Cannot derive from "glm-5:cloud": it is a cloud model, which runs on ollama\.com with its full context \(202752 tokens\) whatever num_ctx says, so it needs no derived copy\. Use it as it is: ollama-delegate config --default-model glm-5:cloud/,
      ],
      [
        ["qwen3:8b", "--ctx", "64k"],
        /Cannot derive "qwen3:8b" with a context of 65536 tokens: the model supports at most 32768 \(32k\), and Ollama would cap num_ctx there anyway\. Use --ctx 32k or less/,
      ],
      [
        ["mistral:7b", "--ctx", "16k"],
        /Cannot derive from "mistral:7b": Ollama at \S+ has no such model \(local models: qwen3-coder:30b, qwen3:8b, llama3\.2:3b\)\. Pull it first: ollama pull mistral:7b/,
      ],
      [
        ["qwen3:8b", "--ctx", "16k", "--name", "llama3.2:3b"],
        /Cannot create "llama3\.2:3b": a model of that name exists and was not derived from "qwen3:8b", so creating it would replace that model\. Choose another --name, or remove it first: ollama rm llama3\.2:3b/,
      ],
      [
        ["qwen3:8b", "--ctx", "16k", "--name", "qwen3:8b"],
        /Cannot derive "qwen3:8b" under its own name/,
      ],
    ];
    for (const [args, message] of cases) {
      const run = await runCli(ctx, ["models", "derive", ...args]);
      assert.equal(run.code, 1, `${args.join(" ")}: ${run.stdout}${run.stderr}`);
      assert.match(run.stderr, /^ollama-delegate models derive: /, args.join(" "));
      assert.match(run.stderr, message, args.join(" "));
      assert.equal(run.stdout, "", args.join(" "));
    }
    assert.equal(creates(emu).length, 0, "nothing was created");
    assert.doesNotMatch(
      String((await show(emu.url, "llama3.2:3b"))?.parameters),
      /num_ctx/,
      "the model in the way is untouched",
    );

    // Usage errors: exit 2, nothing sent to Ollama.
    const before = emu.requests.length;
    const usage: Array<[string[], RegExp]> = [
      [["derive"], /derive needs the model to derive from/],
      [
        ["derive", "qwen3:8b"],
        /derive needs --ctx <tokens>, e\.g\. models derive qwen3:8b --ctx 64k/,
      ],
      [
        ["derive", "qwen3:8b", "--ctx", "lots"],
        /Cannot use --ctx "lots": write a number of tokens of at least 2048, like 65536 or 64k/,
      ],
      [["derive", "qwen3:8b", "--ctx", "512"], /Cannot use --ctx "512"/],
      [["derive", "a", "b", "--ctx", "8k"], /derive takes one model, not 2 \(a, b\)/],
      [
        ["derive", "qwen3:8b", "--ctx", "8k", "--name", "bad name!"],
        /Cannot use --name "bad name!"/,
      ],
      [["derive", "qwen3:8b", "--ctx", "8k", "--bogus"], /Unknown option '--bogus'/],
      [["frobnicate"], /unknown command "frobnicate"/],
    ];
    for (const [args, message] of usage) {
      const run = await runCli(ctx, ["models", ...args]);
      assert.equal(run.code, 2, `${args.join(" ")}: ${run.stdout}${run.stderr}`);
      assert.match(run.stderr, message, args.join(" "));
      assert.match(run.stderr, /See ollama-delegate models --help/);
    }
    assert.equal(emu.requests.length, before, "usage errors send nothing");
  } finally {
    await emu.close();
  }
});

Deno.test("models: --help, and a stopped Ollama is a failure with the fix", async () => {
  const emu = await startOllamaEmulator();
  const url = emu.url;
  await emu.close();
  const ctx = cliEnv({ env: { OLLAMA_MCP_BASE_URL: url } });
  const help = await runCli(ctx, ["models", "--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^Usage: ollama-delegate models <command>/);
  assert.match(help.stdout, /derive <model> --ctx <tokens> \[--name <new>\]/);
  const main = await runCli(ctx, ["--help"]);
  assert.match(main.stdout, /ollama-delegate models \[\.\.\.\]/);
  assert.match(main.stdout, /ollama-delegate doctor --probe/);
  for (const args of [["derive", "qwen3:8b", "--ctx", "64k"], ["list"]]) {
    const run = await runCli(ctx, ["models", ...args]);
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.ok(run.stderr.includes(`Cannot reach Ollama at ${url}`), run.stderr);
    assert.match(run.stderr, /ollama serve/);
  }
});

Deno.test("models list and models derive: model names from the backend are shown escaped", async () => {
  const emu = await startOllamaEmulator({
    models: [{ name: EVIL_MODEL, contextLength: 65_536 }, { name: "qwen3:8b" }],
  });
  try {
    const ctx = cliEnv({ env: { OLLAMA_MCP_BASE_URL: emu.url } });
    const list = await runCli(ctx, ["models", "list"]);
    assert.equal(list.code, 0, list.stderr);
    assertEscaped(list.stdout);
    const row = list.stdout.split("\n").find((l) => l.startsWith(`  ${EVIL_SHOWN} `));
    assert.ok(row, list.stdout);
    // The columns are sized to what is shown: the next row's KIND lines up with this one's.
    const qwen = list.stdout.split("\n").find((l) => l.startsWith("  qwen3:8b "))!;
    assert.equal(qwen.indexOf("local"), row.indexOf("local"), list.stdout);

    // A refusal that lists Ollama's models.
    const derive = await runCli(ctx, ["models", "derive", "nope:1b", "--ctx", "64k"]);
    assert.equal(derive.code, 1, derive.stdout + derive.stderr);
    assertEscaped(derive.stderr);
    assert.ok(derive.stderr.includes(`(local models: ${EVIL_SHOWN}, qwen3:8b)`), derive.stderr);
  } finally {
    await emu.close();
  }
});

Deno.test("models derive on a pool: the model is made on every endpoint, each reported", async () => {
  const a = await startOllamaEmulator({ models: MODELS });
  const b = await startOllamaEmulator({ models: MODELS });
  try {
    // baseUrl names the first endpoint too: a pool replaces it, whatever it says.
    const ctx = cliEnv({
      env: { OLLAMA_MCP_BASE_URL: a.url, OLLAMA_MCP_BASE_URLS: `${a.url},${b.url}` },
    });
    const run = await runCli(ctx, ["models", "derive", "qwen3-coder:30b", "--ctx", "64k"]);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.equal(run.stderr, "");
    assert.match(
      run.stdout,
      /^Created "qwen3-coder:30b-ctx64k" from "qwen3-coder:30b" on each of the 2 endpoints of the default Ollama \(baseUrls\); Ollama runs it with a context of 65536 tokens there\.$/m,
    );
    for (const emu of [a, b]) {
      assert.match(run.stdout, new RegExp(`^ {2}${emu.url} +created \\(num_ctx 65536\\)$`, "m"));
      assert.equal(creates(emu).length, 1, `one /api/create at ${emu.url}`);
      const made = await show(emu.url, "qwen3-coder:30b-ctx64k");
      assert.match(String(made?.parameters), /^num_ctx\s+65536$/m, emu.url);
    }
    assert.match(
      run.stdout,
      /^ {2}ollama-delegate config --default-model qwen3-coder:30b-ctx64k$/m,
    );

    // Deriving again replaces it on each.
    const again = await runCli(ctx, ["models", "derive", "qwen3-coder:30b", "--ctx", "64k"]);
    assert.equal(again.code, 0, again.stdout + again.stderr);
    for (const emu of [a, b]) {
      assert.match(again.stdout, new RegExp(`^ {2}${emu.url} +replaced \\(num_ctx 65536\\)$`, "m"));
    }
  } finally {
    await a.close();
    await b.close();
  }
});

Deno.test("models derive and list on a pool go on past an endpoint that fails, say which, and exit 1", async () => {
  const dead = await startOllamaEmulator();
  await dead.close();
  const a = await startOllamaEmulator({ models: MODELS });
  // An endpoint without the base model: derive refuses there, the others go on.
  const c = await startOllamaEmulator({ models: [{ name: "qwen3:8b", contextLength: 32_768 }] });
  try {
    const ctx = cliEnv({ env: { OLLAMA_MCP_BASE_URLS: `${dead.url},${a.url},${c.url}` } });
    const run = await runCli(ctx, ["models", "derive", "qwen3-coder:30b", "--ctx", "32k"]);
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.match(
      run.stdout,
      /^Created "qwen3-coder:30b-ctx32k" from "qwen3-coder:30b" on 1 of the 3 endpoints of the default Ollama \(baseUrls\)/m,
    );
    const row = (url: string) =>
      run.stdout.split("\n").find((l) => l.startsWith(`  ${url} `)) ?? "";
    assert.match(
      row(dead.url),
      new RegExp(`failed: Cannot derive a model: Cannot reach Ollama at ${dead.url}`),
    );
    assert.match(row(a.url), /created \(num_ctx 32768\)$/);
    assert.match(
      row(c.url),
      new RegExp(
        `failed: Cannot derive from "qwen3-coder:30b": Ollama at ${c.url} has no such model`,
      ),
    );
    assert.match(
      run.stdout,
      /A turn placed on an endpoint without "qwen3-coder:30b-ctx32k" fails there/,
    );
    assert.doesNotMatch(
      run.stdout,
      /config --default-model/,
      "no advice to use what is not everywhere",
    );
    assert.equal(
      run.stderr,
      `ollama-delegate models derive: Cannot derive "qwen3-coder:30b" on 2 of 3 endpoints: ${dead.url}, ${c.url}\n`,
    );
    assert.equal(creates(a).length, 1, "made at the endpoint after the dead one");
    assert.equal(creates(c).length, 0);

    // models list shows each endpoint, the one it cannot reach, and what some lack.
    const list = await runCli(ctx, ["models", "list"]);
    assert.equal(list.code, 1, list.stdout + list.stderr);
    assert.match(
      list.stdout,
      new RegExp(`^Cannot list the models at ${dead.url}: .*Cannot reach Ollama`, "m"),
    );
    for (const emu of [a, c]) assert.match(list.stdout, new RegExp(`^Models at ${emu.url}:$`, "m"));
    assert.match(list.stdout, /^ {2}qwen3-coder:30b-ctx32k +local +yes +262144 +32768 +no$/m);
    assert.match(
      list.stdout,
      new RegExp(`^ {2}qwen3-coder:30b-ctx32k +missing at ${c.url}$`, "m"),
    );
    assert.match(list.stdout, new RegExp(`^ {2}glm-5:cloud +missing at ${c.url}$`, "m"));
    assert.doesNotMatch(list.stdout, /^ {2}qwen3:8b +missing/m, "on every endpoint that answered");
    assert.equal(
      list.stderr,
      `ollama-delegate models list: 1 of 3 endpoints could not be listed: ${dead.url}\n`,
    );
    const json = await runCli(ctx, ["models", "list", "--json"]);
    const endpoints = (JSON.parse(json.stdout) as {
      endpoints: { url: string; models?: { name: string }[]; error?: string }[];
    }).endpoints;
    assert.deepEqual(endpoints.map((e) => e.url), [dead.url, a.url, c.url]);
    assert.match(endpoints[0]!.error ?? "", /Cannot reach Ollama/);
    assert.deepEqual(endpoints[2]!.models?.map((m) => m.name), ["qwen3:8b"]);
  } finally {
    await a.close();
    await c.close();
  }
});

/** `ollama-delegate models`: see and derive Ollama models for delegation. */
import { parseArgs } from "node:util";
import { escapeLine } from "../../platform/plain_text.ts";
import { defaultOllamaUrls } from "../../settings/backends.ts";
import { loadSettings } from "../../settings/load.ts";
import { parseTokenCount } from "../../settings/token_count.ts";
import { deriveModel, MIN_DERIVED_CONTEXT, ModelsFailure, validModelName } from "./derive.ts";
import { type CliIo, processIo } from "../jobs/common.ts";
import { listEndpoints, listModels, renderModelList, renderPoolList } from "./list.ts";

export const MODELS_HELP = `Usage: ollama-delegate models <command> [options]

Commands:
  list [--json]                  installed models with their maximum context, the num_ctx
                                 their Modelfile sets, and the context they are loaded with
  derive <model> --ctx <tokens> [--name <new>]
                                 create a copy of a local model that Ollama runs with that
                                 context (its Modelfile num_ctx), through Ollama's /api/create

With a pool of Ollamas (baseUrls), list shows each endpoint and the models some of them
lack, and derive creates the model on every endpoint, says how each went, goes on past one
that fails, and exits 1 if any did.

Why derive: Ollama runs a local model with its Modelfile num_ctx, else the server's
OLLAMA_CONTEXT_LENGTH, else a default by VRAM (4k under 24 GiB, more above), and silently
drops the start of a prompt that does not fit. A claude delegate's conversation grows with
every file it reads and command it runs, and the endpoint the claude engine uses cannot ask
for more context. A derived model carries its own num_ctx.

derive options:
  --ctx <tokens>   the context, e.g. 65536 or 64k (k = 1024); at most the model's maximum
  --name <new>     the new model's name (default: the base with -ctx64k on its tag,
                   e.g. qwen3-coder:30b-ctx64k)
Cloud models need no derived copy: they always run with their full context.

Exit code 0 when done, 1 when Ollama (or an endpoint of the pool) refused or cannot be
reached, 2 for a usage error.`;

/** Entry for main.ts. */
export async function modelsMain(argv: string[], io: CliIo = processIo()): Promise<number> {
  const [command, ...rest] = argv;
  const usage = (message: string) => {
    io.err(`ollama-delegate models: ${message}. See ollama-delegate models --help`);
    return 2;
  };
  if (command === undefined || command === "--help" || command === "-h" || command === "help") {
    if (command === undefined) {
      io.err(MODELS_HELP);
      return 2;
    }
    io.out(MODELS_HELP);
    return 0;
  }
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
        ctx: { type: "string" },
        name: { type: "string" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (e) {
    return usage((e as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.out(MODELS_HELP);
    return 0;
  }
  const settings = loadSettings({ env: io.env, cwd: io.cwd, home: io.home }).settings;
  const urls = defaultOllamaUrls(settings);
  try {
    switch (command) {
      case "list": {
        if (positionals.length > 0 || values.ctx !== undefined || values.name !== undefined) {
          return usage("list takes no arguments but --json");
        }
        if (urls.length === 1) {
          const models = await listModels(urls[0]!);
          io.out(
            values.json
              ? JSON.stringify({ baseUrl: urls[0], models }, null, 2)
              : renderModelList(urls[0]!, models).join("\n"),
          );
          return 0;
        }
        const endpoints = await listEndpoints(urls);
        io.out(
          values.json
            ? JSON.stringify({ endpoints }, null, 2)
            : renderPoolList(endpoints).join("\n"),
        );
        const failed = endpoints.filter((e) => e.error !== undefined).map((e) => e.url);
        if (failed.length === 0) return 0;
        io.err(
          `ollama-delegate models list: ${failed.length} of ${urls.length} endpoints could ` +
            `not be listed: ${failed.join(", ")}`,
        );
        return 1;
      }
      case "derive": {
        if (positionals.length !== 1) {
          return usage(
            positionals.length === 0
              ? "derive needs the model to derive from: models derive <model> --ctx <tokens>"
              : `derive takes one model, not ${positionals.length} (${positionals.join(", ")})`,
          );
        }
        if (values.json) return usage("derive has no --json");
        const model = positionals[0]!.trim();
        if (values.ctx === undefined) {
          return usage(`derive needs --ctx <tokens>, e.g. models derive ${model} --ctx 64k`);
        }
        const ctx = parseTokenCount(values.ctx);
        if (ctx === undefined || ctx < MIN_DERIVED_CONTEXT) {
          return usage(
            `Cannot use --ctx "${values.ctx}": write a number of tokens of at least ` +
              `${MIN_DERIVED_CONTEXT}, like 65536 or 64k`,
          );
        }
        const name = values.name?.trim();
        if (name !== undefined && !validModelName(name)) {
          return usage(
            `Cannot use --name "${values.name}": a model name is letters, digits, ".", "_" and ` +
              `"-", with an optional namespace/ and :tag (e.g. qwen3-coder:30b-ctx64k)`,
          );
        }
        const report = await deriveModel(settings, { model, ctx, ...(name ? { name } : {}) });
        // They name Ollama's models and quote its errors: escaped, as every console path.
        io.out(report.lines.map(escapeLine).join("\n"));
        if (report.failed.length === 0) return 0;
        io.err(
          `ollama-delegate models derive: ${
            escapeLine(`Cannot derive "${model}"`)
          } on ${report.failed.length} of ${urls.length} endpoints: ${
            report.failed.map((f) => f.url).join(", ")
          }`,
        );
        return 1;
      }
      default:
        return usage(`unknown command "${command}"`);
    }
  } catch (e) {
    if (e instanceof ModelsFailure) {
      io.err(`ollama-delegate models ${command}: ${escapeLine(e.message)}`);
      return 1;
    }
    throw e;
  }
}

/**
 * A `verify` check read against the table of check_inputs.ts: the files its commands name as
 * something they run, the tools they run, and whether they run anything of the project's at
 * all. Made before the delegate's turn, from the commands and the scripts they run then
 * (`npm test` runs `package.json`'s "test", read from the job's cwd): a script the delegate
 * rewrites is a change to that manifest, which counts by itself.
 *
 * What it does not follow: a `cd` (the tools' files are matched at any depth, the scripts
 * read are the cwd's), variables and other expansions, a script a Makefile runs (its files
 * count by name instead: tests, runner configuration).
 */
import { statSync } from "node:fs";
import { basename, isAbsolute, join, normalize } from "node:path";
import { PLAIN, type ToolRow, toolsOf } from "./check_inputs.ts";
import { readManifest, withoutComments } from "./check_parts.ts";
import { MAX_DEPTH, simpleCommands } from "./check_words.ts";

export interface CheckPlan {
  /** Paths the commands run: relative to the cwd (`/`-separated, no `./`) or absolute. */
  named: Set<string>;
  /** The tools the commands run. */
  tools: Set<ToolRow>;
  /** Whether a command runs anything but PLAIN programs. */
  runsProject: boolean;
}

/** Shells and interpreters: `-c`/`-e` give them code inline, nothing of a file. */
const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh", "fish"]);
/** Wrappers that run the rest of their words as a command, and their options with a value. */
const WRAPPERS: ReadonlyMap<string, ReadonlySet<string>> = new Map(Object.entries({
  env: new Set(["-u", "-C", "-S", "--unset", "--chdir"]),
  exec: new Set(["-a"]),
  command: new Set(),
  builtin: new Set(),
  nohup: new Set(),
  nice: new Set(["-n", "--adjustment"]),
  stdbuf: new Set(["-i", "-o", "-e"]),
  "xvfb-run": new Set(["-n", "-s", "-e", "-f", "-p", "-w"]),
  c8: new Set(["-r", "--reporter", "-o", "--reports-dir", "--config"]),
  nyc: new Set(["-r", "--reporter", "--config"]),
}));
/** Runners of a command given after them: `uv run pytest`, `npx jest`, `poetry run tox`. */
const RUNS_AFTER: ReadonlyMap<string, string | undefined> = new Map(Object.entries({
  uv: "run",
  poetry: "run",
  pipenv: "run",
  pdm: "run",
  rye: "run",
  uvx: undefined,
  npx: undefined,
  pnpx: undefined,
  bunx: undefined,
}));

/** Reads a check's commands (see the module comment). `cwd` is a real path. */
export async function planCheck(commands: readonly string[], cwd: string): Promise<CheckPlan> {
  const plan: CheckPlan = { named: new Set(), tools: new Set(), runsProject: false };
  const reader = new Visitor(plan, cwd);
  for (const command of commands) await reader.line(command, 0);
  return plan;
}

/**
 * The most simple commands read of one check. Scripts come from the project, which a delegate
 * may have written: a "test" script of a thousand `npm run t` would otherwise fan out at every
 * level. Past it the check counts as running the project's code, with no more files named.
 */
export const MAX_COMMANDS = 2_000;

class Visitor {
  #manifests = new Map<string, Promise<Record<string, string>>>();
  /** Scripts and tasks already read: each is read once. */
  #expanded = new Set<string>();
  #commands = 0;

  constructor(readonly plan: CheckPlan, readonly cwd: string) {}

  async line(text: string, depth: number): Promise<void> {
    for (const words of simpleCommands(text, depth)) {
      if (++this.#commands > MAX_COMMANDS) {
        this.plan.runsProject = true;
        return;
      }
      await this.command(words, depth);
    }
  }

  /** Reads a script or task (`kind` and name) once. */
  async expand(key: string, text: string, depth: number): Promise<void> {
    if (this.#expanded.has(key) || depth >= MAX_DEPTH) return;
    this.#expanded.add(key);
    await this.line(text, depth + 1);
  }

  async command(all: readonly string[], depth: number): Promise<void> {
    const words = unwrapped(all, this.plan);
    const first = words[0];
    if (first === undefined) return;
    if (first.includes("$")) {
      this.plan.runsProject = true;
      return;
    }
    if (first.includes("/")) this.name(first);
    const program = basename(first);
    if (PLAIN.has(program)) return;
    this.plan.runsProject = true;
    const tools = toolsOf(program);
    for (const t of tools) this.plan.tools.add(t);
    const rest = words.slice(1);
    if (RUNS_AFTER.has(program)) {
      const after = RUNS_AFTER.get(program);
      const at = after === undefined ? 0 : rest.indexOf(after) + 1;
      if (after !== undefined && at === 0) return;
      const command = rest.slice(at);
      while (command[0]?.startsWith("-")) command.shift();
      return await this.command(command, depth);
    }
    if (SHELLS.has(program)) return await this.shell(rest, depth);
    if (program.startsWith("python") || program.startsWith("pypy")) {
      const m = rest.indexOf("-m");
      if (m >= 0 && rest[m + 1]) return await this.command(rest.slice(m + 1), depth);
      if (rest.some((w) => w === "-c")) return;
    }
    if (program === "node" || program === "nodejs") return this.node(rest);
    if (program === "deno") return await this.deno(rest, depth);
    if (["npm", "pnpm", "yarn", "bun"].includes(program)) {
      return await this.packageManager(program, rest, depth);
    }
    const operands = tools.find((t) => t.operands)?.operands;
    if (operands === "script") this.script(rest);
    if (operands === "tests") this.tests(rest);
  }

  /** `sh -c '...'` reads the code given; `sh x.sh` runs x.sh. */
  async shell(rest: readonly string[], depth: number): Promise<void> {
    const c = rest.findIndex((w) => /^-[a-zA-Z]*c[a-zA-Z]*$/.test(w));
    if (c >= 0) {
      if (depth < MAX_DEPTH && rest[c + 1] !== undefined) await this.line(rest[c + 1]!, depth + 1);
      return;
    }
    this.script(rest);
  }

  node(rest: readonly string[]): void {
    if (rest.some((w) => w === "-e" || w === "--eval" || w === "-p" || w === "--print")) return;
    rest.forEach((w, i) => {
      const value = /^--(require|import|loader|experimental-loader)=(.+)$/.exec(w)?.[2] ??
        (/^(-r|--require|--import|--loader|--experimental-loader)$/.test(w)
          ? rest[i + 1]
          : undefined);
      if (value !== undefined && /[/.]/.test(value)) this.name(value);
    });
    const operands = rest.filter((_w, i) =>
      !/^(-r|--require|--import|--loader|--experimental-loader)$/.test(rest[i - 1] ?? "")
    );
    if (rest.includes("--test")) this.tests(operands);
    else this.script(operands);
  }

  async deno(rest: readonly string[], depth: number): Promise<void> {
    const [sub, ...args] = rest;
    if (sub === "run") this.script(args);
    else if (sub === "test" || sub === "bench") this.tests(args);
    else if (sub === "task") {
      const name = args.find((w) => !w.startsWith("-"));
      for (const file of ["deno.json", "deno.jsonc"]) {
        const task = (await this.manifest(file, "tasks"))[name ?? ""];
        if (task !== undefined) await this.expand(`${file}\0${name}`, task, depth);
      }
    } else if (sub !== undefined && !sub.startsWith("-") && /\.[cm]?[jt]sx?$/.test(sub)) {
      this.name(sub);
    }
  }

  /** `npm test`, `yarn run build`, `pnpm lint`, `bun run x.ts`: the scripts they run. */
  async packageManager(program: string, rest: readonly string[], depth: number): Promise<void> {
    const args = rest.filter((w) => !w.startsWith("-"));
    const [sub, next] = args;
    if (sub === undefined) return;
    if (program === "bun" && sub === "test") return this.tests(rest.slice(1));
    if (["exec", "x", "dlx"].includes(sub)) {
      if (next !== undefined) await this.command(args.slice(1), depth);
      return;
    }
    const name = ["test", "t", "tst"].includes(sub)
      ? "test"
      : sub === "start"
      ? "start"
      : ["run", "run-script", "rum", "urn"].includes(sub)
      ? next
      : program === "npm"
      ? undefined
      : sub;
    if (name === undefined) return;
    const scripts = await this.manifest("package.json", "scripts");
    if (scripts[name] === undefined && program === "bun" && /\.[cm]?[jt]sx?$/.test(name)) {
      return this.name(name);
    }
    for (const key of [`pre${name}`, name, `post${name}`]) {
      if (scripts[key] !== undefined) {
        await this.expand(`package.json\0${key}`, scripts[key]!, depth);
      }
    }
  }

  /** The first operand runs: `node test.js`, `sh sum.sh`. */
  script(rest: readonly string[]): void {
    const operand = rest.find((w) => !w.startsWith("-"));
    if (operand === undefined) return;
    this.name(operand);
    // `node node_modules/.bin/jest`: the tool it is.
    for (const t of toolsOf(basename(operand))) this.plan.tools.add(t);
  }

  /**
   * Every operand that is a file is a test run: `pytest tests/a.py`, `jest --config=ci.js`. A
   * folder is not: a runner runs the tests it finds there by their names (`jest src` runs
   * `src/*.test.js`, not the code beside them), which count by TEST_NAMES.
   */
  tests(rest: readonly string[]): void {
    for (const w of rest) {
      const value = w.startsWith("--") && w.includes("=") ? w.slice(w.indexOf("=") + 1) : w;
      if (value.startsWith("-") || /[*?[]/.test(value)) continue;
      if (isFile(join(this.cwd, value)) ?? /\.\w+$/.test(value)) this.name(value);
    }
  }

  /** A path the command runs, as `named` holds it; a glob is cut at its first wild part. */
  name(word: string): void {
    if (word.includes("$") || word === "") return;
    const wild = word.search(/[*?[]/);
    const path = wild < 0 ? word : word.slice(0, word.lastIndexOf("/", wild) + 1);
    if (path === "") return;
    const clean = normalize(path).replace(/\\/g, "/").replace(/\/+$/, "");
    if (clean === "." || clean === "" || (!isAbsolute(clean) && clean.startsWith(".."))) return;
    this.plan.named.add(clean);
  }

  /** A string map of a manifest of the cwd (`package.json`'s "scripts"); {} when none. */
  manifest(file: string, key: string): Promise<Record<string, string>> {
    const id = `${file}\0${key}`;
    let found = this.#manifests.get(id);
    if (!found) {
      found = readManifest(this.cwd, file).then((text) => stringMap(text, key));
      this.#manifests.set(id, found);
    }
    return found;
  }
}

/** The words after assignments (`CI=1`) and wrappers (`env`, `timeout 60`, `c8`). */
function unwrapped(all: readonly string[], plan: CheckPlan): string[] {
  const words = [...all];
  for (;;) {
    while (words.length > 0 && /^[A-Za-z_]\w*=/.test(words[0]!)) words.shift();
    const head = words[0];
    if (head === undefined) return words;
    const program = basename(head);
    if (program === "timeout") {
      words.shift();
      while (words.length > 0 && words[0]!.startsWith("-")) {
        const option = words.shift()!;
        if (option === "-s" || option === "-k" || option === "--signal") words.shift();
      }
      words.shift();
      continue;
    }
    const withValue = WRAPPERS.get(program);
    if (!withValue) return words;
    for (const t of toolsOf(program)) plan.tools.add(t);
    words.shift();
    while (words.length > 0 && (words[0]!.startsWith("-") || /^[A-Za-z_]\w*=/.test(words[0]!))) {
      const option = words.shift()!;
      if (withValue.has(option)) words.shift();
    }
  }
}

/** `text`'s key `key` as a map of strings (scripts, tasks); {} when none. */
function stringMap(text: string | undefined, key: string): Record<string, string> {
  if (text === undefined || text === "absent") return {};
  try {
    const value = (JSON.parse(withoutComments(text)) as Record<string, unknown>)[key];
    if (typeof value !== "object" || value === null) return {};
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(value)) {
      if (typeof v === "string") out[k] = v;
      else if (
        typeof v === "object" && v !== null &&
        typeof (v as { command?: unknown }).command === "string"
      ) {
        // A deno task may be { command, description }.
        out[k] = (v as { command: string }).command;
      }
    }
    return out;
  } catch {
    return {};
  }
}

/** Whether `path` is a file (true) or something else (false); undefined when nothing is there. */
function isFile(path: string): boolean | undefined {
  try {
    return statSync(path).isFile();
  } catch {
    return undefined;
  }
}

/**
 * Checks that a value read from a file or the environment has the shape the code needs, and
 * says what is wrong when it has not: settings (settings/fields.ts), job records
 * (jobs/record.ts) and the usage ledger. The MCP tools' inputs stay zod schemas, which the SDK
 * takes; these are what every terminal command and hook reads, and zod's import and schema
 * building cost them about 60 ms of a 250 ms start (issue 34, bench/listing_bench.ts).
 *
 * The builder reads like the subset of zod it replaces (`string().trim().min(1)`, `object({...})
 * .strict()`, `optional()`, `default()`, `refine()`, `transform()`), and a shape's output type is
 * `Infer<typeof s>`. Semantics kept from zod: checks run in the order written, on the value the
 * steps before them produced; an object drops keys it does not name unless it is strict; a
 * default stands in for a missing (undefined) value; a refinement runs only on a value of the
 * right type; a union takes its first option that accepts the value.
 */

/** Where in the value a problem is: keys and indexes from the top. */
export type IssuePath = (string | number)[];

export interface Issue {
  /**
   * invalid_type: not a string, number... (`expected` says which); invalid_value: not one of
   * the allowed values (`values`); invalid_key: a record's key is refused (`issues` says why);
   * unrecognized_keys: a strict object has keys it does not name; custom: any other check.
   */
  code: "invalid_type" | "invalid_value" | "invalid_key" | "unrecognized_keys" | "custom";
  message: string;
  path: IssuePath;
  expected?: string;
  values?: readonly unknown[];
  issues?: Issue[];
}

export class ShapeError extends Error {
  constructor(readonly issues: Issue[]) {
    const first = issues[0];
    const at = first && first.path.length > 0 ? ` (at ${first.path.join(".")})` : "";
    super(first ? `${first.message}${at}` : "is not valid");
    this.name = "ShapeError";
  }
}

export type Parsed<T> = { success: true; data: T } | { success: false; error: ShapeError };

/** What a transform or superRefine may report. */
export interface RefineContext {
  addIssue(issue: { message: string; path?: IssuePath; code?: "custom" }): void;
}

/** The value a transform returns after reporting an issue: it is never used. */
export const NEVER = undefined as never;

/** A failed check's marker: distinct from every value, undefined included. */
const BAD: unique symbol = Symbol("bad");
type Result<T> = T | typeof BAD;

interface Run {
  issues: Issue[];
  path: IssuePath;
}

function fail(run: Run, issue: Omit<Issue, "path">, at: IssuePath = []): typeof BAD {
  run.issues.push({ ...issue, path: [...run.path, ...at] });
  return BAD;
}

/** What a value is, for a message: "a string", "an array", "null". */
function kindOf(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return "an array";
  if (typeof value === "number" && !Number.isFinite(value)) return "a non-finite number";
  return withArticle(typeof value);
}

function withArticle(noun: string): string {
  return `${/^[aeiou]/.test(noun) ? "an" : "a"} ${noun}`;
}

function wrongType(run: Run, expected: string, value: unknown): typeof BAD {
  return fail(run, {
    code: "invalid_type",
    expected,
    message: `must be ${withArticle(expected)}, not ${kindOf(value)}`,
  });
}

/** Each step gets the value so far and returns the next, or BAD after adding an issue. */
type Step<I, O> = (value: I, run: Run) => Result<O>;

export class Shape<O> {
  /** Only for `Infer`: a shape's output type. */
  declare readonly _output: O;
  readonly #step: Step<unknown, O>;

  constructor(step: Step<unknown, O>) {
    this.#step = step;
  }

  /** Runs the shape inside another's walk (objects, arrays, unions): for this module. */
  _run(value: unknown, run: Run): Result<O> {
    return this.#step(value, run);
  }

  safeParse(value: unknown): Parsed<O> {
    const run: Run = { issues: [], path: [] };
    const out = this.#step(value, run);
    if (out === BAD || run.issues.length > 0) {
      if (run.issues.length === 0) {
        run.issues.push({ code: "custom", message: "is not valid", path: [] });
      }
      return { success: false, error: new ShapeError(run.issues) };
    }
    return { success: true, data: out };
  }

  /** The checked value; throws a ShapeError when it is not valid. */
  parse(value: unknown): O {
    const parsed = this.safeParse(value);
    if (!parsed.success) throw parsed.error;
    return parsed.data;
  }

  /** Also accepts undefined (a missing key). */
  optional(): Shape<O | undefined> {
    return new Shape<O | undefined>((v, run) => v === undefined ? undefined : this.#step(v, run));
  }

  nullable(): Shape<O | null> {
    return new Shape<O | null>((v, run) => v === null ? null : this.#step(v, run));
  }

  /**
   * A missing (undefined) value becomes `value`, checked like any other. zod copies an array or
   * object default each time; here the array, object and record shapes build a new value from
   * what they check, which does the same.
   */
  default(value: Exclude<O, undefined>): Shape<Exclude<O, undefined>> {
    return new Shape((v, run) =>
      this.#step(v === undefined ? value : v, run) as Result<Exclude<O, undefined>>
    );
  }

  /** A check of a value of the right shape; `message` may be worded from the value. */
  refine(ok: (value: O) => boolean, message: string | ((value: O) => string)): Shape<O> {
    return this.superRefine((value, ctx) => {
      if (!ok(value)) {
        ctx.addIssue({ message: typeof message === "string" ? message : message(value) });
      }
    });
  }

  /** A check that reports its own issues (with paths inside the value). */
  superRefine(check: (value: O, ctx: RefineContext) => void): Shape<O> {
    return this.transform((value, ctx) => {
      check(value, ctx);
      return value;
    });
  }

  /** A new value made from a valid one; reporting an issue makes the value invalid. */
  transform<N>(make: (value: O, ctx: RefineContext) => N): Shape<N> {
    return new Shape<N>((v, run) => {
      const value = this.#step(v, run);
      if (value === BAD) return BAD;
      const before = run.issues.length;
      const ctx: RefineContext = {
        addIssue: (issue) => {
          run.issues.push({
            code: "custom",
            message: issue.message,
            path: [...run.path, ...(issue.path ?? [])],
          });
        },
      };
      const out = make(value, ctx);
      return run.issues.length > before ? BAD : out;
    });
  }
}

/** The output type of a shape. */
export type Infer<S> = S extends Shape<infer O> ? O : never;

/** A shape with checks of its own that chain (`string().trim().min(1)`). */
abstract class Chained<O, Self extends Shape<O>> extends Shape<O> {
  protected constructor(protected readonly steps: readonly Step<O, O>[], first: Step<unknown, O>) {
    super((v, run) => {
      let value = first(v, run);
      if (value === BAD) return BAD;
      let failed = false;
      for (const step of steps) {
        const next = step(value, run);
        if (next === BAD) failed = true;
        else value = next;
      }
      return failed ? BAD : value;
    });
  }

  protected abstract with(step: Step<O, O>): Self;

  protected check(ok: (value: O) => boolean, message: string): Self {
    return this.with((v, run) => ok(v) ? v : fail(run, { code: "custom", message }));
  }
}

export class StringShape extends Chained<string, StringShape> {
  constructor(steps: readonly Step<string, string>[] = []) {
    super(steps, (v, run) => typeof v === "string" ? v : wrongType(run, "string", v));
  }

  protected with(step: Step<string, string>): StringShape {
    return new StringShape([...this.steps, step]);
  }

  /** Leading and trailing white space is dropped before the checks after it. */
  trim(): StringShape {
    return this.with((v) => v.trim());
  }

  min(length: number, message?: string): StringShape {
    return this.check(
      (v) => v.length >= length,
      message ?? (length === 1 ? "cannot be empty" : `must be at least ${length} characters`),
    );
  }

  max(length: number, message?: string): StringShape {
    return this.check((v) => v.length <= length, message ?? `must be at most ${length} characters`);
  }

  regex(pattern: RegExp, message?: string): StringShape {
    return this.check((v) => pattern.test(v), message ?? `must match ${pattern}`);
  }
}

export class NumberShape extends Chained<number, NumberShape> {
  constructor(steps: readonly Step<number, number>[] = []) {
    super(
      steps,
      (v, run) => typeof v === "number" && Number.isFinite(v) ? v : wrongType(run, "number", v),
    );
  }

  protected with(step: Step<number, number>): NumberShape {
    return new NumberShape([...this.steps, step]);
  }

  int(message?: string): NumberShape {
    // Safe integers only, as zod's int(): a larger one cannot be told from its neighbours.
    return this.check(Number.isSafeInteger, message ?? "must be a whole number");
  }

  min(least: number, message?: string): NumberShape {
    return this.check((v) => v >= least, message ?? `must be at least ${least}`);
  }

  max(most: number, message?: string): NumberShape {
    return this.check((v) => v <= most, message ?? `must be at most ${most}`);
  }

  positive(message?: string): NumberShape {
    return this.check((v) => v > 0, message ?? "must be more than 0");
  }
}

export class ArrayShape<T> extends Chained<T[], ArrayShape<T>> {
  constructor(readonly item: Shape<T>, steps: readonly Step<T[], T[]>[] = []) {
    super(steps, (v, run) => {
      if (!Array.isArray(v)) return wrongType(run, "array", v);
      const out: T[] = [];
      let failed = false;
      for (let i = 0; i < v.length; i++) {
        run.path.push(i);
        const value = item._run(v[i], run);
        run.path.pop();
        if (value === BAD) failed = true;
        else out.push(value);
      }
      return failed ? BAD : out;
    });
  }

  protected with(step: Step<T[], T[]>): ArrayShape<T> {
    return new ArrayShape(this.item, [...this.steps, step]);
  }

  min(count: number, message?: string): ArrayShape<T> {
    return this.check(
      (v) => v.length >= count,
      message ?? (count === 1 ? "cannot be empty" : `must list at least ${count} entries`),
    );
  }

  max(count: number, message?: string): ArrayShape<T> {
    return this.check((v) => v.length <= count, message ?? `must list at most ${count} entries`);
  }
}

type Fields = Record<string, Shape<unknown>>;
type Flat<T> = { [K in keyof T]: T[K] };
/** Keys whose shape accepts undefined are optional keys of the output. */
type ObjectOut<F extends Fields> = Flat<
  & { [K in keyof F as undefined extends Infer<F[K]> ? never : K]: Infer<F[K]> }
  & { [K in keyof F as undefined extends Infer<F[K]> ? K : never]?: Infer<F[K]> }
>;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export class ObjectShape<F extends Fields> extends Shape<ObjectOut<F>> {
  constructor(readonly fields: F, readonly strictKeys = false) {
    super((v, run) => {
      if (!isPlainObject(v)) return wrongType(run, "object", v);
      const out: Record<string, unknown> = {};
      let failed = false;
      for (const [key, shape] of Object.entries(fields)) {
        run.path.push(key);
        const value = shape._run(Object.hasOwn(v, key) ? v[key] : undefined, run);
        run.path.pop();
        if (value === BAD) failed = true;
        else if (value !== undefined || Object.hasOwn(v, key)) out[key] = value;
      }
      if (strictKeys) {
        const extra = Object.keys(v).filter((k) => !Object.hasOwn(fields, k));
        if (extra.length > 0) {
          failed = true;
          fail(run, {
            code: "unrecognized_keys",
            message: `has ${extra.length === 1 ? "a key" : "keys"} it does not know: ${
              extra.map((k) => JSON.stringify(k)).join(", ")
            }`,
          });
        }
      }
      return failed ? BAD : out as ObjectOut<F>;
    });
  }

  /** Keys it does not name are an issue instead of being dropped. */
  strict(): ObjectShape<F> {
    return new ObjectShape(this.fields, true);
  }

  pick<K extends keyof F & string>(keys: Record<K, true>): ObjectShape<Pick<F, K>> {
    const picked = Object.fromEntries(
      Object.keys(keys).map((k) => [k, this.fields[k]!]),
    ) as unknown as Pick<F, K>;
    return new ObjectShape(picked, this.strictKeys);
  }

  extend<G extends Fields>(more: G): ObjectShape<Flat<Omit<F, keyof G> & G>> {
    return new ObjectShape(
      { ...this.fields, ...more } as Flat<Omit<F, keyof G> & G>,
      this.strictKeys,
    );
  }
}

export function string(): StringShape {
  return new StringShape();
}

export function number(): NumberShape {
  return new NumberShape();
}

export function boolean(): Shape<boolean> {
  return new Shape((v, run) => typeof v === "boolean" ? v : wrongType(run, "boolean", v));
}

function oneOf<T>(values: readonly T[]): Shape<T> {
  const message = values.length === 1
    ? `must be ${JSON.stringify(values[0])}`
    : `must be one of ${values.map((x) => String(x)).join(", ")}`;
  return new Shape((v, run) =>
    values.includes(v as T) ? v as T : fail(run, { code: "invalid_value", values, message })
  );
}

export function literal<const T extends string | number | boolean>(value: T): Shape<T> {
  return oneOf([value]);
}

/** One of a list of strings (zod's `z.enum`). */
export function enumOf<const T extends readonly string[]>(values: T): Shape<T[number]> {
  return oneOf(values);
}

export function array<T>(item: Shape<T>): ArrayShape<T> {
  return new ArrayShape(item);
}

export function object<F extends Fields>(fields: F): ObjectShape<F> {
  return new ObjectShape(fields);
}

/** An object used as a map: every key checked by `key`, every value by `value`. */
export function record<V>(key: Shape<string>, values: Shape<V>): Shape<Record<string, V>> {
  return new Shape((v, run) => {
    if (!isPlainObject(v)) return wrongType(run, "object", v);
    const out: Record<string, V> = {};
    let failed = false;
    for (const [k, raw] of Object.entries(v)) {
      // JSON.parse makes "__proto__" an own key; assigned, it would set the map's prototype
      // under Node. Left out unchecked, as zod's record does.
      if (k === "__proto__") continue;
      const keyRun: Run = { issues: [], path: [] };
      if (key._run(k, keyRun) === BAD) {
        failed = true;
        fail(run, {
          code: "invalid_key",
          message: `key ${JSON.stringify(k)}: ${keyRun.issues[0]?.message ?? "is not valid"}`,
          issues: keyRun.issues,
        }, [k]);
        continue;
      }
      run.path.push(k);
      const value = values._run(raw, run);
      run.path.pop();
      if (value === BAD) {
        failed = true;
        continue;
      }
      out[k] = value;
    }
    return failed ? BAD : out;
  });
}

/**
 * The first option that accepts the value. When none does, the issue reported is the one of
 * the first option that got past the type and the fixed values, so that `""` or a model name
 * refusing `"a b"` says what is wrong with the name; else a wrong type, when no fixed value has
 * the value's type (`["x"]` must be a string), else the first option's.
 */
export function union<const S extends readonly Shape<unknown>[]>(
  options: S,
): Shape<Infer<S[number]>> {
  return new Shape((v, run) => {
    const failures: Issue[][] = [];
    for (const option of options) {
      const tryRun: Run = { issues: [], path: run.path };
      const value = option._run(v, tryRun);
      if (value !== BAD && tryRun.issues.length === 0) return value as Infer<S[number]>;
      failures.push(tryRun.issues);
    }
    const shallow = (issues: Issue[]) =>
      issues.every((i) =>
        (i.code === "invalid_type" || i.code === "invalid_value") &&
        i.path.length === run.path.length
      );
    // A value none of the fixed values' type: say its type is wrong.
    const typed = failures.some((issues) =>
      issues.some((i) => i.values?.some((x) => typeof x === typeof v))
    );
    const best = failures.find((issues) => !shallow(issues)) ??
      (typed ? undefined : failures.find((issues) => issues[0]?.code === "invalid_type")) ??
      failures[0] ?? [];
    run.issues.push(...best);
    return BAD;
  });
}

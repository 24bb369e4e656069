/**
 * The value types settings are made of (model names, bounded whole numbers, paths, URLs,
 * backends, prices) and how each is read from an environment variable's text.
 */
import * as is from "../platform/shape.ts";
import { isWindows } from "../platform/runtime.ts";
import { normalizeBaseUrl } from "./base_url.ts";
import { BACKEND_KINDS, type BackendSpec, type EndpointSpec } from "./types.ts";

export const modelName = is.string().trim().min(1, "a model name cannot be empty").max(256)
  .refine((s) => !/[\s,]/.test(s), "a model name cannot contain spaces or commas");

export const intIn = (min: number, max: number) =>
  is.number().int(`must be a whole number from ${min} to ${max}`).min(
    min,
    `must be at least ${min}`,
  ).max(max, `must be at most ${max}`);

export const asNumber = (text: string): unknown => {
  const t = text.trim();
  return /^-?\d+(\.\d+)?$/.test(t) ? Number(t) : t;
};

export const asList = (text: string): unknown =>
  text.split(",").map((s) => s.trim()).filter((s) => s !== "");

/** A list of paths: a JSON array, or entries separated like PATH (`:`; `;` on Windows). */
export const asPathList = (text: string): unknown => {
  if (text.trimStart().startsWith("[")) return asJson(text);
  return text.split(isWindows ? ";" : ":").map((s) => s.trim())
    .filter((s) => s !== "");
};

export const identity = (text: string): unknown => text;

export const pathString = is.string().trim().min(1, "a path cannot be empty");

export const url = is.string().transform((s, ctx) => {
  try {
    return normalizeBaseUrl(s);
  } catch (e) {
    ctx.addIssue({ code: "custom", message: (e as Error).message });
    return is.NEVER;
  }
});

export const asJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

export const backendName = is.string().regex(
  /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/,
  "a backend name is letters, digits, '.', '_' or '-' (at most 64)",
);

/** The most endpoints one pool may list. */
export const MAX_POOL_ENDPOINTS = 32;

/** One endpoint of a pool: a URL, or `{ "url": ..., "maxConcurrent": n }`. */
const endpoint = is.union([
  url.transform((u): EndpointSpec => ({ url: u })),
  is.object({ url, maxConcurrent: intIn(1, 64).optional() }).strict(),
]);

/** A pool: distinct URLs (after normalising: "gpu1" and "http://gpu1:11434" are one). */
export const endpointList = is.array(endpoint).max(MAX_POOL_ENDPOINTS)
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    for (const e of list) {
      if (seen.has(e.url)) {
        ctx.addIssue({ code: "custom", message: `lists ${e.url} twice` });
        return;
      }
      seen.add(e.url);
    }
  });

/** A list of endpoints from the environment: a JSON array, or URLs separated by commas. */
export const asUrlList = (text: string): unknown =>
  text.trimStart().startsWith("[") ? asJson(text) : asList(text);

export const backend = is.object({
  url: url.optional(),
  urls: endpointList.optional(),
  kind: is.enumOf(BACKEND_KINDS).default("openai"),
  apiKeyEnv: is.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be an environment variable name")
    .optional(),
  maxConcurrent: intIn(1, 64).optional(),
}).strict().superRefine((b, ctx) => {
  if ((b.url === undefined) === (b.urls === undefined)) {
    ctx.addIssue({
      code: "custom",
      message: b.url === undefined
        ? "needs url (one endpoint) or urls (a pool of endpoints)"
        : "takes url (one endpoint) or urls (a pool), not both",
    });
  } else if (b.urls !== undefined && b.urls.length === 0) {
    ctx.addIssue({ code: "custom", message: "urls lists no endpoint", path: ["urls"] });
  }
}).transform(({ url, urls, ...rest }): BackendSpec => ({
  ...rest,
  url: url ?? urls![0]!.url,
  ...(urls ? { urls } : {}),
}));

export const price = is.object({
  inputPerMillion: is.number().min(0, "a price cannot be negative"),
  outputPerMillion: is.number().min(0, "a price cannot be negative"),
}).strict();

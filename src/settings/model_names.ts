/**
 * Ollama's canonical form of a model reference: a name without a tag means `:latest`, so
 * `llama3` and `llama3:latest` are the same model. A colon before the last `/` belongs to a
 * registry host (`host:5000/ns/model`), not to a tag.
 */
export function canonicalModelName(name: string): string {
  const trimmed = name.trim();
  const slash = trimmed.lastIndexOf("/");
  const colon = trimmed.lastIndexOf(":");
  return colon > slash ? trimmed : `${trimmed}:latest`;
}

/** Cloud models carry a `:cloud` tag or a tag ending `-cloud` (Ollama's internal/modelref). */
export function hasCloudSuffix(name: string): boolean {
  const canonical = canonicalModelName(name);
  const tag = canonical.slice(canonical.lastIndexOf(":") + 1);
  return tag === "cloud" || tag.endsWith("-cloud");
}

/** Whether two references name the same model. */
export function sameModel(a: string, b: string): boolean {
  return canonicalModelName(a) === canonicalModelName(b);
}

/**
 * The parts of a manifest a check reads (check_inputs.ts `parts`): `package.json`'s "scripts"
 * and not its "dependencies", `pyproject.toml`'s `[tool.pytest.ini_options]` and not its
 * `[project]`. Installing a dependency rewrites the file, and is no change to the check; a
 * part is compared with its text before the job's turn.
 *
 * The files are the delegate's: each is opened beneath the job's cwd without following a
 * link, only when it is a regular file (a FIFO would hang the read), and at most MAX_BYTES.
 */
import { join } from "node:path";
import { openBeneath } from "../../platform/open_beneath/open_beneath.ts";

/** The most of a manifest read; a bigger one counts whole. */
export const MAX_BYTES = 1024 * 1024;

/** A file's text; "absent" when there is no such file, undefined when it could not be read. */
export type FileText = string | "absent" | undefined;

/** The text of `name` in `dir` (a real path), read as the module comment says. */
export async function readManifest(dir: string, name: string): Promise<FileText> {
  let file;
  try {
    file = await openBeneath(join(dir, name), "read", { roots: [dir] });
  } catch (e) {
    return (e as { code?: string }).code === "ENOENT" ? "absent" : undefined;
  }
  try {
    if (file.stats.size > MAX_BYTES) return undefined;
    const buffer = new Uint8Array(MAX_BYTES + 1);
    let got = 0;
    while (got < buffer.length) {
      const { bytesRead } = await file.handle.read(buffer, got, buffer.length - got, null);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    if (got > MAX_BYTES) return undefined;
    return new TextDecoder().decode(buffer.subarray(0, got));
  } catch {
    return undefined;
  } finally {
    await file.handle.close().catch(() => {});
  }
}

/**
 * Each named part of a manifest's text as a string to compare: a JSON key's value, or the
 * lines of a TOML or INI section and of those below it. A part that is not there is "".
 * Undefined when the text is not readable as its kind (then the file counts whole).
 */
export function partsOf(
  name: string,
  text: string,
  parts: readonly string[],
): Map<string, string> | undefined {
  return name.endsWith(".toml") || name.endsWith(".cfg")
    ? sectionParts(text, parts)
    : jsonParts(text, parts);
}

function jsonParts(text: string, parts: readonly string[]): Map<string, string> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(withoutComments(text));
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const object = value as Record<string, unknown>;
  return new Map(
    parts.map((key) => [key, key in object ? JSON.stringify(object[key]) ?? "" : ""]),
  );
}

/**
 * `deno.jsonc` allows comments: they are taken out (outside strings) before parsing. A
 * trailing comma stays an error, and the file then counts whole. One pass over the text: a
 * regular expression for this rescans the rest of the file from every unclosed `/*` or `"`.
 */
export function withoutComments(text: string): string {
  let out = "";
  let from = 0;
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === "\\") i++;
      i++;
    } else if (c === "/" && (text[i + 1] === "/" || text[i + 1] === "*")) {
      out += text.slice(from, i) + " ";
      const end = text[i + 1] === "/" ? text.indexOf("\n", i) : text.indexOf("*/", i + 2);
      i = end < 0 ? text.length : text[i + 1] === "/" ? end : end + 2;
      from = i;
    } else i++;
  }
  return out + text.slice(from);
}

/**
 * TOML and INI sections: `[tool.pytest.ini_options]` belongs to part `tool.pytest`, and so do
 * the lines before any header and those of `[tool]`, where dotted keys can reach it
 * (`tool.pytest.ini_options.addopts = ...` is valid TOML). Comments and blank lines aside.
 */
function sectionParts(text: string, parts: readonly string[]): Map<string, string> {
  const sections: Array<{ name: string; lines: string[] }> = [{ name: "", lines: [] }];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    // `[tool.pytest.ini_options]`, `[[tool.x]]`, `[ "tool" . pytest ]`: by its ends, not a
    // pattern (a long line of spaces made one take quadratic time).
    if (line.startsWith("[") && line.endsWith("]")) {
      sections.push({ name: line.replace(/[\[\]"'\s]/g, ""), lines: [] });
    } else sections.at(-1)!.lines.push(line);
  }
  const out = new Map<string, string>();
  for (const part of parts) {
    const held = sections.filter((s) =>
      s.name === part || s.name.startsWith(`${part}.`) ||
      (s.name !== part && isAbove(s.name, part) && s.lines.some((l) => l.includes(lastOf(part))))
    );
    out.set(part, held.map((s) => `[${s.name}]\n${s.lines.join("\n")}`).join("\n"));
  }
  return out;
}

/** Whether section `name` is above `part` (`""` and `tool` are above `tool.pytest`). */
function isAbove(name: string, part: string): boolean {
  return name === "" || part.startsWith(`${name}.`);
}

/** `pytest` of `tool.pytest`: a dotted key in a section above names it. */
const lastOf = (part: string) => part.slice(part.lastIndexOf(".") + 1);

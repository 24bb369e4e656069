/**
 * The imports of a TypeScript file and the cycles among files, for import_rules.ts. It reads
 * the text rather than asking the compiler so that the check stays a fraction of a second in
 * every `deno task check`; it counts type-only and dynamic imports too, since a layer that
 * names another's types depends on it as much as one that calls it.
 */

export interface Import {
  specifier: string;
  /** 1-based line of the import in its file. */
  line: number;
}

// `import x, { a, type b } from "..."`, `import type * as x from "..."`, `export { a } from
// "..."`, `export * from "..."` and `import "..."`, at the start of a line as deno fmt
// leaves them; the braces may span lines.
const STATIC =
  /^[ \t]*(?:import|export)(?:[ \t]+type)?[ \t]*(?:(?:[\w$]+[ \t]*,?[ \t]*)?(?:\{[^}]*\}|\*(?:[ \t]+as[ \t]+[\w$]+)?)?[ \t]*from[ \t]*)?["']([^"'\n]+)["']/gm;
// `import("...")` and `typeof import("...")` anywhere in code; a computed specifier cannot
// be checked and is left to review.
const DYNAMIC = /\bimport\(\s*["']([^"'\n]+)["']\s*\)/g;

/** Text with comments blanked out (line breaks kept, so lines still count right). */
function withoutComments(text: string): string {
  // Comments in this code start a line (JSDoc, `//` lines) or follow code after a space;
  // "//" right after a quote or colon (a URL in a string) is kept.
  return text
    .replace(/^[ \t]*\/\*[\s\S]*?\*\//gm, (c) => c.replace(/[^\n]/g, " "))
    .replace(/(^|[ \t])\/\/.*$/gm, "$1");
}

/** Every import in `text` whose specifier is written out as a string. */
export function importsOf(text: string): Import[] {
  const code = withoutComments(text);
  const out: Import[] = [];
  const lineAt = (index: number) => code.slice(0, index).split("\n").length;
  for (const re of [STATIC, DYNAMIC]) {
    for (const m of code.matchAll(re)) {
      // The line of the specifier itself: a multi-line import is reported where it names it.
      out.push({ specifier: m[1]!, line: lineAt(m.index + m[0].lastIndexOf(m[1]!)) });
    }
  }
  return out.sort((a, b) => a.line - b.line);
}

/**
 * The cycles in `graph` (file -> files it imports): one per strongly connected set of more
 * than one file (or a file importing itself), as a path through it starting at its first file.
 */
export function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  // Tarjan's algorithm, iterative so that a long import chain cannot overflow the stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const sets: string[][] = [];
  let next = 0;
  for (const start of [...graph.keys()].sort()) {
    if (index.has(start)) continue;
    const work: { node: string; edge: number }[] = [{ node: start, edge: 0 }];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const top = work[work.length - 1]!;
      const edges = graph.get(top.node) ?? [];
      if (top.edge < edges.length) {
        const to = edges[top.edge++]!;
        if (!graph.has(to)) continue; // a missing file: deno check reports it
        if (!index.has(to)) {
          index.set(to, next);
          low.set(to, next++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, edge: 0 });
        } else if (onStack.has(to)) {
          low.set(top.node, Math.min(low.get(top.node)!, index.get(to)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(top.node)!));
      if (low.get(top.node) !== index.get(top.node)) continue;
      const set: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        set.push(member);
      } while (member !== top.node);
      if (set.length > 1 || (graph.get(top.node) ?? []).includes(top.node)) sets.push(set);
    }
  }
  return sets.map((set) => pathThrough(graph, new Set(set)));
}

/** A cycle through the set's first file (by name) that stays inside the set. */
function pathThrough(graph: ReadonlyMap<string, readonly string[]>, set: Set<string>): string[] {
  const first = [...set].sort()[0]!;
  // Breadth-first from `first` back to itself: the shortest cycle, so the message stays short.
  const cameFrom = new Map<string, string>();
  const queue = [first];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const to of graph.get(node) ?? []) {
      if (!set.has(to)) continue;
      if (to === first) {
        const path = [node];
        while (path[0] !== first) path.unshift(cameFrom.get(path[0]!)!);
        return path;
      }
      if (!cameFrom.has(to)) {
        cameFrom.set(to, node);
        queue.push(to);
      }
    }
  }
  return [first];
}

/**
 * A loopback npm registry serving packed tarballs, so that the real `npm` and `npx` can install
 * a package of ours exactly as they would from registry.npmjs.org, with no network. It speaks
 * the two requests an install makes (npm's registry API, "package metadata" and the tarball):
 *
 *   GET /<name>                      the packument: dist-tags and every version's manifest,
 *                                    each with dist.tarball, dist.shasum and dist.integrity
 *   GET /<name>/-/<name>-<ver>.tgz   the tarball
 *
 * Anything else is a 404 with npm's error body, as the public registry answers.
 */
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

export interface NpmRegistry {
  url: string;
  /** Every path requested, in order. */
  requests: string[];
  close(): Promise<void>;
}

/** The package.json inside a packed tarball. */
function manifestOf(tarball: string): Record<string, unknown> {
  const text = execFileSync("tar", ["-xzOf", tarball, "package/package.json"], {
    encoding: "utf8",
  });
  return JSON.parse(text) as Record<string, unknown>;
}

/** Serves the given tarballs (each `npm pack` output) until closed. */
export function startNpmRegistry(tarballs: readonly string[]): Promise<NpmRegistry> {
  const requests: string[] = [];
  const files = new Map<string, Uint8Array<ArrayBuffer>>();
  const packages = new Map<string, { manifest: Record<string, unknown>; file: string }[]>();
  for (const tarball of tarballs) {
    const manifest = manifestOf(tarball);
    const name = String(manifest.name);
    const file = `${name}-${String(manifest.version)}.tgz`;
    files.set(`/${name}/-/${file}`, new Uint8Array(readFileSync(tarball)));
    packages.set(name, [...(packages.get(name) ?? []), { manifest, file }]);
  }
  return new Promise((resolve) => {
    const server = Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      onListen: ({ port }) => {
        const url = `http://127.0.0.1:${port}`;
        resolve({ url, requests, close: () => server.shutdown() });
      },
    }, (req) => {
      const path = decodeURIComponent(new URL(req.url).pathname);
      requests.push(path);
      const bytes = files.get(path);
      if (bytes) {
        return new Response(bytes, { headers: { "content-type": "application/octet-stream" } });
      }
      const versions = packages.get(path.slice(1));
      if (!versions) {
        return Response.json({ error: "Not found" }, { status: 404 });
      }
      const base = new URL(req.url).origin;
      const name = path.slice(1);
      const entries = versions.map(({ manifest, file }) => {
        const data = files.get(`/${name}/-/${file}`)!;
        return [String(manifest.version), {
          ...manifest,
          _id: `${name}@${manifest.version}`,
          dist: {
            tarball: `${base}/${name}/-/${file}`,
            shasum: createHash("sha1").update(data).digest("hex"),
            integrity: `sha512-${createHash("sha512").update(data).digest("base64")}`,
          },
        }];
      });
      const latest = entries.at(-1)![0];
      return Response.json({
        name,
        "dist-tags": { latest },
        versions: Object.fromEntries(entries),
      });
    });
  });
}

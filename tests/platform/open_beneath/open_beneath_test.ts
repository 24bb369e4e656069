import assert from "node:assert/strict";
import { mkdir, readFile, realpath, rename, rm, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  BeneathError,
  type BeneathOptions,
  openBeneath,
  openEntryBeneath,
  resolveBeneath,
} from "../../../src/platform/open_beneath/open_beneath.ts";
import {
  type Anchor,
  pathAnchor,
  procFdAnchor,
} from "../../../src/platform/open_beneath/anchor.ts";

const isLinux = Deno.build.os === "linux";
/** The path anchor runs anywhere; the /proc/self/fd one on Linux only. */
const ANCHORS: Array<[string, Anchor]> = [
  ["path", pathAnchor],
  ...(isLinux ? [["proc-fd", procFdAnchor] as [string, Anchor]] : []),
];

interface Tree {
  top: string;
  root: string;
  outside: string;
  opts: BeneathOptions;
}

async function tree(anchor: Anchor): Promise<Tree> {
  const top = await realpath(await Deno.makeTempDir({ prefix: "beneath_" }));
  const root = join(top, "root");
  const outside = join(top, "outside");
  await mkdir(join(root, "sub/deep"), { recursive: true });
  await mkdir(outside);
  await writeFile(join(root, "sub/deep/a.txt"), "inside\n");
  await writeFile(join(outside, "secret.txt"), "outside\n");
  return { top, root, outside, opts: { roots: [root], anchor } };
}

async function kind(p: Promise<unknown>): Promise<string> {
  try {
    const value = await p;
    if (value && typeof value === "object" && "handle" in value) {
      await (value as { handle: { close(): Promise<void> } }).handle.close();
    }
    return "opened";
  } catch (e) {
    return e instanceof BeneathError ? e.kind : String((e as { code?: string }).code);
  }
}

for (const [name, anchor] of ANCHORS) {
  Deno.test(`beneath (${name}): symlinks inside the root are followed by hand`, async () => {
    const t = await tree(anchor);
    try {
      await symlink("sub/deep", join(t.root, "rel"));
      await symlink(join(t.root, "sub"), join(t.root, "abs"));
      await symlink("../deep/a.txt", join(t.root, "sub/deep/up"));
      for (const path of ["rel/a.txt", "abs/deep/a.txt", "sub/deep/up"]) {
        const file = await openBeneath(join(t.root, path), "read", t.opts);
        try {
          assert.equal(file.real, join(t.root, "sub/deep/a.txt"), path);
          assert.equal(file.created, false);
          assert.equal(file.stats.size, 7);
        } finally {
          await file.handle.close();
        }
      }
    } finally {
      await rm(t.top, { recursive: true });
    }
  });

  Deno.test(`beneath (${name}): links out of the roots, loops, FIFOs and dirs are refused`, async () => {
    const t = await tree(anchor);
    try {
      await symlink(t.outside, join(t.root, "out"));
      await symlink("../outside/secret.txt", join(t.root, "file-out"));
      await symlink("loop2", join(t.root, "loop1"));
      await symlink("loop1", join(t.root, "loop2"));
      const outside = await openBeneath(join(t.root, "out/secret.txt"), "read", t.opts)
        .catch((e) => e);
      assert.ok(outside instanceof BeneathError && outside.kind === "outside", String(outside));
      assert.equal(outside.path, join(t.outside, "secret.txt"));
      assert.equal(await kind(openBeneath(join(t.root, "file-out"), "read", t.opts)), "outside");
      assert.equal(await kind(openBeneath(join(t.root, "loop1"), "read", t.opts)), "loop");
      assert.equal(await kind(openBeneath(join(t.root, "sub"), "read", t.opts)), "directory");
      assert.equal(await kind(openBeneath(t.root, "write", t.opts)), "directory");
      assert.equal(await kind(openBeneath(join(t.root, "nope"), "read", t.opts)), "ENOENT");
      assert.equal(await kind(openBeneath(join(t.top, "x"), "read", t.opts)), "outside");
      if (isLinux) {
        await new Deno.Command("mkfifo", { args: [join(t.root, "fifo")] }).output();
        // Refused without blocking: nobody ever writes to this FIFO.
        assert.equal(await kind(openBeneath(join(t.root, "fifo"), "read", t.opts)), "special");
        assert.equal(await kind(openBeneath(join(t.root, "fifo"), "write", t.opts)), "special");
      }
    } finally {
      await rm(t.top, { recursive: true });
    }
  });

  Deno.test(`beneath (${name}): writes create parents beneath the root, never through a link out`, async () => {
    const t = await tree(anchor);
    try {
      const made = await openBeneath(join(t.root, "new/dir/f.txt"), "write", t.opts);
      assert.equal(made.created, true);
      await made.handle.write(new TextEncoder().encode("hi"));
      await made.handle.close();
      assert.equal(await readFile(join(t.root, "new/dir/f.txt"), "utf8"), "hi");
      // Opened without truncation: the caller cuts the file through the descriptor.
      const again = await openBeneath(join(t.root, "new/dir/f.txt"), "write", t.opts);
      assert.equal(again.created, false);
      assert.equal(again.stats.size, 2);
      await again.handle.close();
      assert.equal(
        await kind(openBeneath(join(t.root, "new/dir/f.txt"), "create", t.opts)),
        "exists",
      );
      // Dangling links: followed inside the root, refused out of it, nothing created outside.
      await symlink("sub/made.txt", join(t.root, "dangling-in"));
      const viaLink = await openBeneath(join(t.root, "dangling-in"), "create", t.opts);
      assert.equal(viaLink.real, join(t.root, "sub/made.txt"));
      await viaLink.handle.close();
      await symlink(join(t.outside, "planted.txt"), join(t.root, "dangling-out"));
      await symlink(t.outside, join(t.root, "out"));
      assert.equal(
        await kind(openBeneath(join(t.root, "dangling-out"), "write", t.opts)),
        "outside",
      );
      assert.equal(
        await kind(openBeneath(join(t.root, "out/x/y.txt"), "write", t.opts)),
        "outside",
      );
      await assert.rejects(stat(join(t.outside, "planted.txt")));
      await assert.rejects(stat(join(t.outside, "x")));
    } finally {
      await rm(t.top, { recursive: true });
    }
  });

  Deno.test(`beneath (${name}): the check sees every name a path goes by, before any change`, async () => {
    const t = await tree(anchor);
    try {
      await symlink("sub", join(t.root, "alias"));
      const seen: Array<[string, boolean]> = [];
      const check = (real: string, final: boolean) => {
        seen.push([real.slice(t.root.length) || "/", final]);
        return real.endsWith("/blocked") ? "blocked by policy" : undefined;
      };
      const file = await openBeneath(join(t.root, "alias/deep/a.txt"), "read", {
        ...t.opts,
        check,
      });
      await file.handle.close();
      assert.deepEqual(seen, [
        ["/", false],
        ["/alias", false], // the link's own name
        ["/", false], // the walk starts again at the root, with the target
        ["/sub", false],
        ["/sub/deep", false],
        ["/sub/deep/a.txt", true],
      ]);
      const refused = await openBeneath(join(t.root, "blocked/x/f.txt"), "write", {
        ...t.opts,
        check,
      }).catch((e) => e);
      assert.ok(refused instanceof BeneathError && refused.kind === "refused");
      assert.equal(refused.message, "blocked by policy");
      await assert.rejects(stat(join(t.root, "blocked")), "no directory made before the check");
    } finally {
      await rm(t.top, { recursive: true });
    }
  });

  Deno.test(`beneath (${name}): resolve without opening, nested roots, directories to walk`, async () => {
    const t = await tree(anchor);
    try {
      assert.equal(
        await resolveBeneath(join(t.root, "missing/deeper/f.txt"), t.opts),
        join(t.root, "missing/deeper/f.txt"),
      );
      await assert.rejects(stat(join(t.root, "missing")));
      // An add_dirs root inside cwd is walked from the outer root.
      const nested = { ...t.opts, roots: [join(t.root, "sub"), t.root] };
      await symlink("../deep", join(t.root, "sub/up"));
      assert.equal(
        await resolveBeneath(join(t.root, "sub/up/a.txt"), nested),
        join(t.root, "deep/a.txt"),
      );
      const entry = await openEntryBeneath(join(t.root, "sub"), t.opts);
      assert.ok("dir" in entry);
      try {
        assert.deepEqual(
          (await entry.dir.list()).map((e) => `${e.name}:${e.kind}`).sort(),
          ["deep:dir", "up:link"],
        );
        assert.equal(
          await kind(entry.dir.openDir("up")),
          isLinux && name === "proc-fd" ? "ENOTDIR" : "ELOOP",
        );
        const deep = await entry.dir.openDir("deep");
        const file = await deep.openFile("a.txt");
        assert.equal(file.real, join(t.root, "sub/deep/a.txt"));
        await file.handle.close();
        await deep.close();
      } finally {
        await entry.dir.close();
      }
      const single = await openEntryBeneath(join(t.root, "sub/deep/a.txt"), t.opts);
      assert.ok("file" in single);
      await single.file.handle.close();
    } finally {
      await rm(t.top, { recursive: true });
    }
  });
}

Deno.test({
  name: "beneath (proc-fd): a held directory stays itself when its path becomes a link out",
  ignore: !isLinux,
  async fn() {
    const t = await tree(procFdAnchor);
    try {
      const entry = await openEntryBeneath(join(t.root, "sub/deep"), t.opts);
      assert.ok("dir" in entry);
      try {
        // The directory moves and a symlink to the outside takes its name.
        await rename(join(t.root, "sub/deep"), join(t.root, "moved"));
        await symlink(t.outside, join(t.root, "sub/deep"));
        await writeFile(join(t.outside, "a.txt"), "outside\n");
        const file = await entry.dir.openFile("a.txt");
        try {
          const bytes = new Uint8Array(16);
          const { bytesRead } = await file.handle.read(bytes, 0, 16, 0);
          assert.equal(new TextDecoder().decode(bytes.subarray(0, bytesRead)), "inside\n");
        } finally {
          await file.handle.close();
        }
      } finally {
        await entry.dir.close();
      }
    } finally {
      await rm(t.top, { recursive: true });
    }
  },
});

/**
 * Where the file tools may go, and the one way they open what they touch. A path the model
 * gives is opened beneath the roots by src/platform/open_beneath/open_beneath.ts (no symlink or rename race can
 * lead outside them), and every name it goes by on the way is held to the policy: the server's
 * own directories, credential stores, host-run paths (for writes), secret files (for reads) and
 * the user's path rules, on the path as resolved as well as on the path as written.
 *
 * The policy is in path_policy.ts, where a path lies in real_paths.ts; this module turns the
 * path a model gives into an open file or a clear refusal.
 */
import { resolve } from "node:path";
import {
  type BeneathDir,
  BeneathError,
  openBeneath,
  type OpenedFile,
  openEntryBeneath,
  type OpenMode,
  resolveBeneath,
} from "../../../platform/open_beneath/open_beneath.ts";
import { fsErrorText, PathRefused, ToolFailure } from "./fields.ts";
import {
  type ConfineScope,
  openedSecretRefusal,
  openedWriteRefusal,
  pathPolicy,
  type PathPurpose,
} from "./path_policy.ts";
import { realpathLoose } from "../../../guard/real_paths.ts";
import { isInsideRoots } from "../../../platform/path_inside.ts";

export { PathRefused };

function verbPurpose(purpose: PathPurpose): string {
  return purpose === "list" ? "read" : purpose;
}

/**
 * The absolute path `input` names, lexically inside a root. Relative paths resolve against
 * cwd; any ".." segment is refused before anything is looked up. An absolute path outside the
 * roots that resolves into one (a symlinked home, macOS's /tmp) is taken as it resolves.
 */
async function lexicalTarget(
  input: string,
  scope: ConfineScope,
  purpose: PathPurpose,
): Promise<string> {
  const allowed = `the allowed directories (${scope.roots.join(", ")})`;
  const refuse = (why: string) =>
    new PathRefused(`Refused to ${verbPurpose(purpose)} "${input}": ${why}`);
  const stayInside = `; use a path inside ${allowed}`;
  if (input.trim() === "") throw refuse(`the path is empty${stayInside}`);
  if (input.includes("\0")) throw refuse(`the path contains a NUL byte${stayInside}`);
  if (input.split(/[\\/]/).includes("..")) {
    throw refuse(`".." segments are not allowed${stayInside}`);
  }
  if (scope.roots.length === 0) throw refuse("no directories are allowed");
  const abs = resolve(scope.cwd, input);
  if (isInsideRoots(scope.roots, abs)) return abs;
  const real = await realpathLoose(abs).catch(() => abs);
  if (isInsideRoots(scope.roots, real)) return real;
  throw refuse(`it is outside ${allowed}`);
}

/** A walk's failure as the model should read it: a refusal, or why the file could not be used. */
function explain(
  e: unknown,
  input: string,
  scope: ConfineScope,
  purpose: PathPurpose,
  verb: string,
) {
  const refused = (why: string) =>
    new PathRefused(`Refused to ${verbPurpose(purpose)} "${input}": ${why}`);
  if (e instanceof BeneathError) {
    switch (e.kind) {
      case "outside":
        return refused(
          `it resolves through a symlink to "${e.path}", outside the allowed directories ` +
            `(${scope.roots.join(", ")})`,
        );
      case "loop":
      case "refused":
        return refused(e.message);
      case "directory":
        return new ToolFailure(
          `Cannot ${verb} "${input}": it is a directory${
            verb === "read" ? "; use Glob to list files" : ""
          }`,
        );
      case "special":
        return new ToolFailure(`Cannot ${verb} "${input}": not a regular file`);
      case "exists":
        return new ToolFailure(`Cannot ${verb} "${input}": it already exists`);
      case "raced":
        return new ToolFailure(
          `Cannot ${verb} "${input}": it kept changing while it was opened (a symlink or ` +
            "rename race); try again",
        );
    }
  }
  if (e instanceof PathRefused || e instanceof ToolFailure) return e;
  return new ToolFailure(`Cannot ${verb}: ${fsErrorText(e, input)}`);
}

export interface OpenHow {
  mode: OpenMode;
  /** The tool whose path rules apply (Read for the one-shot files). */
  tool: string;
  /** For messages: read, write, edit. */
  verb: string;
}

/**
 * Opens the file `input` names for a file tool, or throws PathRefused or ToolFailure with a
 * message for the model. The caller closes the handle.
 */
export async function openConfined(
  input: string,
  scope: ConfineScope,
  how: OpenHow,
): Promise<OpenedFile> {
  const purpose: PathPurpose = how.mode === "read" ? "read" : "write";
  let file: OpenedFile;
  try {
    const target = await lexicalTarget(input, scope, purpose);
    file = await openBeneath(target, how.mode, {
      roots: scope.roots,
      check: pathPolicy(scope, purpose, how.tool),
      // A host-run folder reached under another name (`tools/claude` when `.claude` links
      // there) is refused as the walk enters it, before anything is created inside.
      ...(purpose === "write" && scope.guard
        ? { checkDir: (info, real) => openedWriteRefusal(scope, info, real) }
        : {}),
    });
  } catch (e) {
    throw explain(e, input, scope, purpose, how.verb);
  }
  // What was opened, whatever name reached it: a hard link or link target of a host-run
  // file (never written: it is not truncated at open), or of a secret file (nothing read).
  const why = purpose === "read"
    ? openedSecretRefusal(scope, file.stats)
    : file.created
    ? undefined
    : openedWriteRefusal(scope, file.stats, file.real);
  if (why !== undefined) {
    await file.handle.close().catch(() => {});
    throw new PathRefused(`Refused to ${how.verb} "${input}": ${why}`);
  }
  return file;
}

/**
 * Opens where a search starts: a directory to walk, or a single file. Only credential stores,
 * the server's directories and the user's rules are refused here; a file found is then held to
 * the secret-file rule by the caller (secretRefusal), before anything is read.
 */
export async function openSearchBase(
  input: string,
  scope: ConfineScope,
  tool: string,
): Promise<{ dir: BeneathDir } | { file: OpenedFile }> {
  try {
    const target = await lexicalTarget(input, scope, "list");
    return await openEntryBeneath(target, {
      roots: scope.roots,
      check: pathPolicy(scope, "list", tool),
    });
  } catch (e) {
    throw explain(e, input, scope, "list", "search");
  }
}

/**
 * The path `input` resolves to beneath the roots, symlinks followed by hand and the policy
 * applied, without opening it (for tests and messages; the tools open with openConfined).
 */
export async function confinePath(
  input: string,
  scope: ConfineScope,
  purpose: PathPurpose,
  tool = purpose === "write" ? "Write" : "Read",
): Promise<string> {
  try {
    const target = await lexicalTarget(input, scope, purpose);
    return await resolveBeneath(target, {
      roots: scope.roots,
      check: pathPolicy(scope, purpose, tool),
    });
  } catch (e) {
    throw explain(e, input, scope, purpose, verbPurpose(purpose));
  }
}

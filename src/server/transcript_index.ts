/**
 * Where entry indices start in transcript files, so that paging through a long transcript
 * costs each page about its own bytes instead of a rescan from the start. A checkpoint
 * `(index, offset)` says: the line at byte `offset` gives the entries from `index` on.
 * Transcripts are append-only, so a checkpoint stays true while the file is the same file
 * (same device and inode) and at least as long as the checkpoint's offset.
 */

/** The identity of a file as far as checkpoints care. */
export interface FileIdentity {
  dev: number;
  ino: number;
  size: number;
}

interface FileCheckpoints {
  dev: number;
  ino: number;
  indices: number[];
  offsets: number[];
}

export class TranscriptIndex {
  #files = new Map<string, FileCheckpoints>();

  constructor(readonly maxFiles = 32, readonly maxPoints = 4096) {}

  /** The checkpoint nearest below `index`, or the file's start. */
  nearest(path: string, file: FileIdentity, index: number): { index: number; offset: number } {
    const known = this.#valid(path, file);
    if (!known) return { index: 0, offset: 0 };
    // Most recently used files stay; Map order is insertion order.
    this.#files.delete(path);
    this.#files.set(path, known);
    const at = floor(known.indices, index);
    return at < 0 ? { index: 0, offset: 0 } : {
      index: known.indices[at]!,
      offset: known.offsets[at]!,
    };
  }

  record(path: string, file: FileIdentity, index: number, offset: number): void {
    if (index <= 0) return;
    let known = this.#valid(path, file);
    if (!known) {
      known = { dev: file.dev, ino: file.ino, indices: [], offsets: [] };
      this.#files.set(path, known);
      while (this.#files.size > this.maxFiles) {
        this.#files.delete(this.#files.keys().next().value!);
      }
    }
    const at = floor(known.indices, index);
    if (at >= 0 && known.indices[at] === index) return;
    known.indices.splice(at + 1, 0, index);
    known.offsets.splice(at + 1, 0, offset);
    if (known.indices.length > this.maxPoints) {
      // Thinning keeps the spread: every other checkpoint goes.
      known.indices = known.indices.filter((_, i) => i % 2 === 1);
      known.offsets = known.offsets.filter((_, i) => i % 2 === 1);
    }
  }

  /** How many checkpoints a file has (for tests and diagnostics). */
  size(path: string): number {
    return this.#files.get(path)?.indices.length ?? 0;
  }

  clear(): void {
    this.#files.clear();
  }

  #valid(path: string, file: FileIdentity): FileCheckpoints | undefined {
    const known = this.#files.get(path);
    if (!known) return undefined;
    const last = known.offsets.at(-1) ?? 0;
    if (known.dev !== file.dev || known.ino !== file.ino || file.size < last) {
      this.#files.delete(path);
      return undefined;
    }
    return known;
  }
}

/** The position of the largest value <= `target` in a sorted array, or -1. */
function floor(sorted: readonly number[], target: number): number {
  let lo = 0;
  let hi = sorted.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! <= target) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../platform/atomic_write.ts";
import { canonicalModelName } from "../settings/model_names.ts";

export interface RetiredMark {
  text: string;
  at: number;
}

/**
 * Cloud models that answered HTTP 410 ("was retired"), remembered in the state folder so
 * every server process refuses them and never picks one as the default. A later success
 * with the same name clears the mark.
 */
export class RetiredModels {
  #path: string;
  #marks: Record<string, RetiredMark> = {};

  constructor(stateDir: string) {
    this.#path = join(stateDir, ".retired.json");
  }

  // Read on every use: the file is tiny and another server process may have written it.
  #load(): Record<string, RetiredMark> {
    try {
      const raw = JSON.parse(readFileSync(this.#path, "utf8")) as unknown;
      this.#marks = typeof raw === "object" && raw !== null
        ? raw as Record<string, RetiredMark>
        : {};
    } catch {
      this.#marks = {};
    }
    return this.#marks;
  }

  get(model: string): RetiredMark | undefined {
    return this.#load()[canonicalModelName(model)];
  }

  async mark(model: string, text: string): Promise<void> {
    const marks = this.#load();
    marks[canonicalModelName(model)] = { text, at: Date.now() };
    await writeFileAtomic(this.#path, JSON.stringify(marks, null, 2));
  }

  /**
   * Remembers what a job's end says about its model: HTTP 410 or "was retired" in its error
   * marks the model retired, a success clears a mark.
   */
  async noteEnd(
    model: string,
    end: { ok: boolean; apiErrorStatus?: number; errorText?: string },
  ): Promise<void> {
    if (end.apiErrorStatus === 410 || /was retired/i.test(end.errorText ?? "")) {
      await this.mark(model, end.errorText ?? "HTTP 410");
    } else if (end.ok) await this.clear(model);
  }

  async clear(model: string): Promise<void> {
    const marks = this.#load();
    const key = canonicalModelName(model);
    if (!(key in marks)) return;
    delete marks[key];
    await writeFileAtomic(this.#path, JSON.stringify(marks, null, 2));
  }
}

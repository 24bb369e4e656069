/** For delegate_list: where each queued job stands. */
import type { JobManager } from "../jobs/manager.ts";
import { ordinal } from "../jobs/queue_words.ts";
import type { JobRecord } from "../jobs/record.ts";

/** For delegate_list: where each queued job stands, `2nd in line for backend "ollama"`. */
export async function queuePlaces(
  manager: JobManager,
  records: readonly JobRecord[],
): Promise<Map<string, string>> {
  const places = new Map<string, string>();
  for (const r of records) {
    if (r.state !== "queued") continue;
    const view = await manager.get(r.id).catch(() => undefined);
    if (!view || view.queuePosition === 0) continue;
    const at = view.queue?.endpoint !== undefined ? ` at ${view.queue.endpoint}` : "";
    const backend = view.queue ? ` for backend "${view.queue.backend}"${at}` : "";
    places.set(r.id, `${ordinal(view.queuePosition)} in line${backend}`);
  }
  return places;
}

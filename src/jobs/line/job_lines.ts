/**
 * The lines a job waits in before it runs: its endpoint's (EndpointLines), then the global one
 * (maxConcurrent, this process). The endpoint's slot comes first, so a job waiting for its
 * endpoint holds no global place. The price: a job that got its endpoint's slot while this
 * process's global places are all taken (by jobs on other endpoints) holds that slot idle
 * until one of them ends.
 */
import { type EndpointLine, type EndpointLines, LocalEndpointLines } from "./endpoint_lines.ts";
import { LocalLine } from "./local_line.ts";

export class JobLines {
  readonly #global: LocalLine;

  constructor(
    maxConcurrent: number,
    readonly endpoints: EndpointLines = new LocalEndpointLines(),
  ) {
    this.#global = new LocalLine(maxConcurrent);
  }

  /**
   * Takes the job's places; `placed` runs once it has to wait for one, `lost` if its
   * endpoint's shared slot goes to another job later (EndpointLines). False when the job
   * left the line (`leave`), and then it holds no place.
   */
  async take(
    id: string,
    endpoint: EndpointLine | undefined,
    placed: () => void,
    lost?: (reason: string) => void,
  ): Promise<boolean> {
    if (!(await this.endpoints.take(id, endpoint, placed, lost))) return false;
    if (!(await this.#global.take(id, placed))) {
      this.endpoints.giveBack(id);
      return false;
    }
    return true;
  }

  /**
   * Moves a running job to another endpoint's line: its slot where it was goes back first
   * (that endpoint failed), then it waits for one on `endpoint`, keeping its global place.
   * False when it left the line meanwhile (cancelled).
   */
  async move(
    id: string,
    endpoint: EndpointLine | undefined,
    lost?: (reason: string) => void,
  ): Promise<boolean> {
    this.endpoints.giveBack(id);
    return await this.endpoints.take(id, endpoint, () => {}, lost);
  }

  /** Gives back the places of job `id`, which took them. */
  giveBack(id: string): void {
    this.#global.giveBack();
    this.endpoints.giveBack(id);
  }

  /** Takes a waiting job out of its line; true when it was waiting. */
  leave(id: string): boolean {
    return this.endpoints.leave(id) || this.#global.leave(id);
  }

  /** 1-based place in whichever line the job waits in, 0 when it waits in none. */
  position(id: string): number {
    return this.endpoints.position(id) || this.#global.position(id);
  }
}

/**
 * Driving an endpoint's shared queue from tests: a second server process (shared_queue_child.ts)
 * line by line, and the folder's files as a test checks them.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import process from "node:process";
import type { EndpointQueue } from "../../../../src/jobs/queue/endpoint_queues.ts";
import { SharedEndpointQueues } from "../../../../src/jobs/queue/shared_endpoint_queues.ts";
import { endpointFolder } from "../../../../src/jobs/queue/slot_queue.ts";

const CHILD = join(dirname(fileURLToPath(import.meta.url)), "shared_queue_child.ts");
export const WAIT_MS = 30_000;

/** A second process using the queue, driven line by line. */
export class Child {
  readonly proc: ChildProcess;
  readonly lines: string[] = [];
  readonly exited: Promise<void>;

  constructor(dir: string, limit: number, leaseMs?: number) {
    const args = ["run", "-A", CHILD, dir, String(limit)];
    if (leaseMs !== undefined) args.push(String(leaseMs));
    this.proc = spawn("deno", args, { stdio: ["pipe", "pipe", "inherit"] });
    let rest = "";
    this.proc.stdout!.on("data", (chunk: Uint8Array) => {
      rest += new TextDecoder().decode(chunk);
      const parts = rest.split("\n");
      rest = parts.pop()!;
      this.lines.push(...parts);
    });
    this.exited = new Promise((r) => this.proc.on("exit", () => r()));
  }

  send(line: string): void {
    this.proc.stdin!.write(`${line}\n`);
  }

  /** The first line starting with `prefix`, once it came. */
  async line(prefix: string, timeoutMs = WAIT_MS): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const found = this.lines.find((l) => l.startsWith(prefix));
      if (found !== undefined) return found;
      await sleep(20);
    }
    throw new Error(`no "${prefix}" from child ${this.proc.pid} in ${timeoutMs} ms: ${this.lines}`);
  }

  has(prefix: string): boolean {
    return this.lines.some((l) => l.startsWith(prefix));
  }

  /**
   * Sends a job-control signal (SIGSTOP, SIGCONT), as Ctrl-Z and `fg` do. By pid: a
   * ChildProcess that was sent one signal counts as killed and sends no more.
   */
  signal(signal: "SIGSTOP" | "SIGCONT"): void {
    process.kill(this.proc.pid!, signal);
  }

  async kill(): Promise<void> {
    this.proc.kill("SIGKILL");
    await this.exited;
  }

  async stop(): Promise<void> {
    // A stopped process would not act on SIGTERM until continued.
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.signal("SIGCONT");
    this.proc.stdin!.end();
    this.proc.kill("SIGTERM");
    await this.exited;
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const uuid = () => crypto.randomUUID();
/** The endpoint every test process shares a queue on, as the default Ollama is. */
export const TEST_URL = "http://127.0.0.1:11434";
export const queueDir = (root: string) => join(root, endpointFolder(TEST_URL));
export const slotFiles = (root: string) =>
  readdirSync(queueDir(root)).filter((f) => f.startsWith("slot-"));
export const ticketFiles = (root: string) =>
  readdirSync(queueDir(root)).filter((f) => f.startsWith("wait-"));

/**
 * The real SharedEndpointQueues on `root`, with every job on one endpoint's queue (TEST_URL,
 * backend "ollama", at most `limit` at once): the tests name only the job, as a server with
 * one Ollama does.
 */
export function sharedQueue(root: string, limit: number, leaseMs?: number): OneEndpoint {
  return new OneEndpoint(
    new SharedEndpointQueues(root, { pollMs: 40, ...(leaseMs !== undefined ? { leaseMs } : {}) }),
    { url: TEST_URL, backend: "ollama", limit },
  );
}

/** SharedEndpointQueues whose jobs all wait in one endpoint's queue. */
export class OneEndpoint {
  constructor(readonly queues: SharedEndpointQueues, readonly queue: EndpointQueue) {}

  take(id: string, placed: () => void, lost?: (reason: string) => void) {
    return this.queues.take(id, this.queue, placed, lost);
  }
  giveBack(id: string): void {
    this.queues.giveBack(id);
  }
  leave(id: string): boolean {
    return this.queues.leave(id);
  }
  position(id: string): number {
    return this.queues.position(id);
  }
  detail(id: string) {
    return this.queues.detail(id);
  }
  stillHolds(id: string): Promise<boolean> {
    return this.queues.stillHolds(id);
  }
}

export async function withChildren(
  root: string,
  limit: number,
  count: number,
  fn: (children: Child[]) => Promise<void>,
  leaseMs?: number,
): Promise<void> {
  const children = Array.from({ length: count }, () => new Child(root, limit, leaseMs));
  try {
    await Promise.all(children.map((c) => c.line("ready")));
    await fn(children);
  } finally {
    await Promise.all(children.map((c) => c.stop()));
  }
}

/**
 * How a claude delegate's permission questions reach the person (issue 31, item 3). Claude Code
 * in print mode asks nobody: with `--permission-prompt-tool` it calls an MCP tool instead
 * whenever it would prompt, with `{ tool_name, input, tool_use_id }`, and reads the tool's
 * text as `{"behavior":"allow","updatedInput":...}` or `{"behavior":"deny","message":...}`
 * (measured with Claude Code 2.1.332; docs/claude_code.md). That tool is served here, over
 * MCP's streamable HTTP on 127.0.0.1, one secret path per turn: the delegate's Claude Code
 * connects to it from its jail (which shares the host's loopback) and its model never sees it
 * (argv.ts denies it to the model; Claude Code still calls it for prompts).
 *
 * A question is put to the person only for what a yes may allow: a path that stays refused
 * whatever the mode (a host-run path to write, a secret file or credential store to read,
 * anything outside the job's directories or inside the server's own) is denied here without
 * asking, and so is any tool a delegate is not given. Everything else goes to the turn's sink
 * (jobs/permission_asks.ts), which records the answer.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";
import { fixedRefusal, type FixedScope, type PathPurpose } from "../../guard/path_refusal.ts";
import type { PermissionQuestion } from "../types.ts";
import type { PermissionDecision } from "../types.ts";

/** The MCP server's name in the delegate's config, and its one tool. */
export const RELAY_SERVER = "ollama_delegate";
export const RELAY_TOOL = `mcp__${RELAY_SERVER}__ask`;

/** A question's request is a small JSON-RPC message; more is refused unread. */
const MAX_BODY_BYTES = 1024 * 1024;

/** The tools a claude delegate can be given, and what each does with the path it names. */
const PATH_TOOLS: Readonly<Record<string, PathPurpose>> = {
  Read: "read",
  Glob: "list",
  Grep: "list",
  Edit: "write",
  MultiEdit: "write",
  Write: "write",
  NotebookEdit: "write",
};

/** One turn's questions: where its paths are judged, why it asks, and where answers come from. */
export interface RelayTurn {
  scope: FixedScope;
  /** Why Claude Code asks at all: its permission mode. */
  reason: string;
  ask(question: PermissionQuestion, signal?: AbortSignal): Promise<PermissionDecision>;
}

/** What Claude Code reads back from the permission-prompt tool. */
type Verdict =
  | { behavior: "allow"; updatedInput: Record<string, unknown> }
  | { behavior: "deny"; message: string };

/** The answer to one of Claude Code's questions, by the rules above. */
export async function answerFor(
  turn: RelayTurn,
  tool: string,
  input: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<Verdict> {
  let detail: string;
  if (tool === "Bash") {
    detail = typeof input.command === "string" ? input.command : "";
  } else if (PATH_TOOLS[tool]) {
    const named = [input.file_path, input.notebook_path, input.path]
      .find((v): v is string => typeof v === "string" && v !== "");
    detail = named ?? turn.scope.cwd;
    const fixed = fixedRefusal(turn.scope, detail, PATH_TOOLS[tool]!);
    if (fixed) {
      return {
        behavior: "deny",
        message: `Refused without asking: ${fixed}. No permission mode or answer allows it`,
      };
    }
  } else {
    return {
      behavior: "deny",
      message: `Refused without asking: ${tool} is not among a delegate's tools`,
    };
  }
  const decision = await turn.ask({ tool, detail, reason: turn.reason }, signal);
  return decision.allow
    ? { behavior: "allow", updatedInput: input }
    : { behavior: "deny", message: decision.message };
}

/** The loopback MCP endpoint of every turn of one engine; started at the first turn that asks. */
export class AskRelay {
  #server: Server | undefined;
  #port: Promise<number> | undefined;
  readonly #turns = new Map<string, { turn: RelayTurn; ended: AbortController }>();

  /**
   * Serves `turn` until `release`; the MCP config its Claude Code connects with, and the tool
   * it names as the permission-prompt tool.
   */
  async register(turn: RelayTurn): Promise<{ config: string; tool: string; release(): void }> {
    const port = await (this.#port ??= this.#listen());
    const token = randomBytes(24).toString("hex");
    // The turn's end withdraws a question still open: nobody is left to act on its answer.
    const ended = new AbortController();
    this.#turns.set(token, { turn, ended });
    const config = JSON.stringify({
      mcpServers: {
        [RELAY_SERVER]: { type: "http", url: `http://127.0.0.1:${port}/ask/${token}` },
      },
    });
    return {
      config,
      tool: RELAY_TOOL,
      release: () => {
        ended.abort();
        this.#turns.delete(token);
      },
    };
  }

  #listen(): Promise<number> {
    const server = createServer((req, res) => {
      this.#serve(req, res).catch(() => {
        if (!res.headersSent) res.writeHead(500).end();
      });
    });
    this.#server = server;
    return new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => {
        // Questions never keep the server's process alive.
        server.unref();
        resolve((server.address() as { port: number }).port);
      });
    });
  }

  async #serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const token = /^\/ask\/([0-9a-f]{48})$/.exec(req.url ?? "")?.[1];
    const served = token ? this.#turns.get(token) : undefined;
    if (!served) {
      res.writeHead(404).end();
      return;
    }
    let body: unknown;
    if (req.method === "POST") {
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of req) {
        size += (chunk as Buffer).length;
        if (size > MAX_BODY_BYTES) {
          res.writeHead(413).end();
          return;
        }
        chunks.push(chunk as Buffer);
      }
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        res.writeHead(400).end();
        return;
      }
    }
    // Stateless: a server and transport per request, as the SDK's stateless example does.
    const mcp = new McpServer({ name: RELAY_SERVER, version: "1" });
    mcp.registerTool("ask", {
      description: "Decides a permission prompt of the delegate's Claude Code",
      inputSchema: {
        tool_name: z.string(),
        input: z.record(z.string(), z.unknown()),
        tool_use_id: z.string().optional(),
      },
    }, async (args: { tool_name: string; input: Record<string, unknown> }) => ({
      content: [{
        type: "text" as const,
        text: JSON.stringify(
          await answerFor(served.turn, args.tool_name, args.input, served.ended.signal),
        ),
      }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => {
      transport.close().catch(() => {});
      mcp.close().catch(() => {});
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  /** Stops listening (tests; a server's process ends with it anyway). */
  close(): void {
    this.#server?.close();
  }
}

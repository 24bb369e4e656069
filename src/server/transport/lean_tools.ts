/**
 * A tools/list result without each input schema's `$schema` line. The SDK stamps draft-07 on
 * every schema; without it a schema is read as JSON Schema 2020-12 (MCP 2025-11-25, "Tool"),
 * which means the same for the keywords ours use (type, enum, items, minimum, maximum). The
 * list is sent to the orchestrating model on every turn: 52 characters a tool add up.
 */
export function leanToolList(result: Record<string, unknown>): Record<string, unknown> {
  const tools = result.tools as Array<Record<string, unknown>>;
  return {
    ...result,
    tools: tools.map((tool) => {
      const schema = tool.inputSchema;
      if (typeof schema !== "object" || schema === null || !("$schema" in schema)) return tool;
      const { $schema: _dialect, ...rest } = schema as Record<string, unknown>;
      return { ...tool, inputSchema: rest };
    }),
  };
}

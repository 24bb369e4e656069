const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A fresh job or session id (random UUID, as Claude Code's --session-id takes). */
export function newId(): string {
  return crypto.randomUUID();
}

/**
 * Whether a string from a tool call can be a job or session id. Anything else (`../x`, a
 * path, an empty string) is refused before it can be joined to a path.
 */
export function isValidId(value: string): boolean {
  return UUID.test(value);
}

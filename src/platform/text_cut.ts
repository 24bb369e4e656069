/**
 * Text cut to a number of characters for a line of a reply or a terminal, the cut shown by
 * "…". One home so that every listing cuts the same way: at most `max` characters in all,
 * the ellipsis included, so that columns sized by `max` stay aligned.
 */

/** `text` when it has at most `max` characters, else its first `max - 1` and "…". */
export const cutTo = (text: string, max: number): string =>
  text.length > max ? `${text.slice(0, Math.max(0, max - 1))}…` : text;

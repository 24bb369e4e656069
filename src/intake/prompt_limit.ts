/**
 * The longest prompt we accept, inline or from a file. In a file of its own so that the stdio
 * transport, which loads before `initialize` is answered, bounds its messages by it without
 * loading the input checks (issue 34, item 3).
 */
export const MAX_PROMPT_BYTES = 10 * 1024 * 1024;

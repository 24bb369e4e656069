/**
 * The SHA-256 of a text in hex, through Web Crypto: the terminal commands and hooks that name a
 * project by a digest (jobs/unread.ts, jobs/repo_id.ts) would otherwise load node:crypto,
 * which alone costs them about 35 ms of their start under Deno. Code that hashes as it goes
 * (sync, in parts) keeps node:crypto's createHash.
 */
export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** What a Claude Code hook of the plugin reads: its input, a small JSON object on stdin. */
import process from "node:process";

/** The hook's input is a small JSON object; more than this is not read. */
const MAX_INPUT_BYTES = 1024 * 1024;
const INPUT_TIMEOUT_MS = 10_000;

/** Reads stdin to its end, at most MAX_INPUT_BYTES, within INPUT_TIMEOUT_MS. */
export function readStdin(): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const timer = setTimeout(
      () => reject(new Error(`no end of input within ${INPUT_TIMEOUT_MS / 1000} s`)),
      INPUT_TIMEOUT_MS,
    );
    process.stdin.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_INPUT_BYTES) {
        clearTimeout(timer);
        reject(new Error(`input over ${MAX_INPUT_BYTES} bytes`));
        process.stdin.destroy();
      } else chunks.push(chunk);
    });
    process.stdin.on("end", () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString("utf8"));
    });
    process.stdin.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

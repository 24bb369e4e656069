/** Ollama's own default port (envconfig.Host in ollama/ollama). */
export const OLLAMA_DEFAULT_PORT = 11434;

/**
 * Turns any form users put in `OLLAMA_HOST` or `baseUrl` into a URL we can connect to.
 *
 * Ollama accepts `0.0.0.0`, `host`, `host:port`, `:port` and full URLs; a form without a
 * scheme gets Ollama's port 11434. A bind-all address is not connectable, so it becomes
 * loopback; a trailing `/v1` (a habit from OpenAI clients) is dropped because every path we
 * call is absolute from the server root.
 *
 * @throws {TypeError} when the value cannot be a URL, with the reason.
 */
export function normalizeBaseUrl(input: string): string {
  let raw = input.trim();
  if (raw === "") throw new TypeError("Cannot use an empty URL");
  let scheme = "http";
  const schemeMatch = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\//.exec(raw);
  if (schemeMatch) {
    scheme = schemeMatch[1]!.toLowerCase();
    raw = raw.slice(schemeMatch[0].length);
  }
  if (scheme !== "http" && scheme !== "https") {
    throw new TypeError(`Cannot use scheme "${scheme}": only http and https are supported`);
  }
  const slash = raw.indexOf("/");
  const authority = slash === -1 ? raw : raw.slice(0, slash);
  let path = slash === -1 ? "" : raw.slice(slash);
  const { host, port } = splitHostPort(authority);
  const connectHost = host === "" || host === "0.0.0.0" || host === "[::]" ? "127.0.0.1" : host;
  // A bare host means Ollama's port; an explicit scheme means that scheme's port, as in
  // Ollama's envconfig.Host and in any URL.
  const effectivePort = port ?? (schemeMatch ? null : OLLAMA_DEFAULT_PORT);
  path = path.replace(/\/+$/, "").replace(/\/v1$/, "").replace(/\/+$/, "");
  let url: URL;
  try {
    url = new URL(`${scheme}://${connectHost}${effectivePort === null ? "" : `:${effectivePort}`}`);
  } catch (cause) {
    throw new TypeError(`Cannot parse "${input}" as a URL`, { cause });
  }
  return `${url.protocol}//${url.host}${path}`;
}

function splitHostPort(authority: string): { host: string; port: number | null } {
  if (authority.includes("@")) {
    throw new TypeError("Cannot use a URL with credentials in it; Ollama takes none");
  }
  let host = authority;
  let portText = "";
  if (authority.startsWith("[")) {
    const end = authority.indexOf("]");
    if (end === -1) throw new TypeError(`Cannot parse host "${authority}": unclosed "["`);
    host = authority.slice(0, end + 1);
    const rest = authority.slice(end + 1);
    if (rest.startsWith(":")) portText = rest.slice(1);
    else if (rest !== "") throw new TypeError(`Cannot parse host "${authority}"`);
  } else {
    const colon = authority.lastIndexOf(":");
    if (colon !== -1) {
      host = authority.slice(0, colon);
      portText = authority.slice(colon + 1);
    }
  }
  if (portText === "") return { host, port: null };
  if (!/^\d{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) {
    throw new TypeError(`Cannot use port "${portText}": it must be a number from 1 to 65535`);
  }
  return { host, port: Number(portText) };
}

/**
 * Where delegated work runs, and what `residency: local` lets through (issue 29, item 4). A
 * turn stays local when both hold:
 * - its model does not run on Ollama's cloud: the name carries no cloud suffix (`:cloud`,
 *   `-cloud`: settings/model_names.ts `hasCloudSuffix`, the rule a project's model choice follows too,
 *   settings/narrow.ts) and the Ollama that serves it does not list it as a cloud model
 *   (`remote_host`: models/catalog.ts `isCloud`, which callers pass in as `cloud`);
 * - every endpoint it may be sent to (a backend's URL, each URL of a pool) is this machine or a
 *   private network, told from the URL's host alone: `localhost` and `*.localhost` (RFC 6761
 *   section 6.3), and IP addresses in the loopback (127.0.0.0/8, ::1), private (RFC 1918:
 *   10/8, 172.16/12, 192.168/16; RFC 4193: fc00::/7) and link-local (169.254/16, fe80::/10)
 *   ranges, an IPv4-mapped IPv6 address by its IPv4 address. Any other host name counts as
 *   remote: a name may resolve anywhere, and to something else after the check, so a machine
 *   of the user's own network is named by its address.
 */
import { hasCloudSuffix } from "./model_names.ts";

/** How far an endpoint is: this machine, a private network, or anywhere else. */
export type Reach = "this machine" | "a private network" | "remote";

/** Where a turn runs: `local` (this machine or a private network), on Ollama's cloud, elsewhere. */
export type Place = "local" | "cloud" | "remote";

/** A model as residency judges it: its name, and whether its Ollama lists it as cloud. */
export interface ModelPlace {
  name: string;
  /** Ollama lists it as a cloud model (`remote_host`), whatever its name says. */
  cloud?: boolean;
}

/** Where a turn of some models on some endpoints runs, and why. */
export interface WorkPlace {
  place: Place;
  /** The models that run on Ollama's cloud. */
  cloudModels: string[];
  /** The endpoints that are neither this machine nor a private network. */
  remoteUrls: string[];
  /** The endpoints, in the order given. */
  urls: string[];
}

/** Whether `model` runs on Ollama's cloud: by its name, or as its Ollama lists it. */
export function runsOnCloud(model: ModelPlace): boolean {
  return model.cloud === true || hasCloudSuffix(model.name);
}

/** How far the host of `url` is; a URL that cannot be parsed is remote. */
export function reachOf(url: string): Reach {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return "remote";
  }
  // The URL parser has written an IP address in its one canonical form: IPv6 in brackets, and
  // IPv4 as four decimal numbers (a host that ends in a number is IPv4 or no URL at all).
  if (host.startsWith("[") && host.endsWith("]")) return ipv6Reach(host.slice(1, -1));
  if (host === "localhost" || host.endsWith(".localhost")) return "this machine";
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(host)) return ipv4Reach(ipv4Octets(host));
  return "remote";
}

function ipv4Octets(address: string): number[] {
  return address.split(".").map(Number);
}

function ipv4Reach([a, b]: number[]): Reach {
  if (a === 127) return "this machine";
  if (a === 10 || (a === 172 && b! >= 16 && b! <= 31) || (a === 192 && b === 168)) {
    return "a private network";
  }
  if (a === 169 && b === 254) return "a private network";
  return "remote";
}

function ipv6Reach(address: string): Reach {
  const groups = ipv6Groups(address);
  if (!groups) return "remote";
  if (groups.slice(0, 7).every((g) => g === 0) && groups[7] === 1) return "this machine";
  // ::ffff:a.b.c.d, which URL parsing writes as ::ffff:xxxx:yyyy.
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return ipv4Reach([groups[6]! >> 8, groups[6]! & 0xff]);
  }
  if ((groups[0]! & 0xfe00) === 0xfc00) return "a private network";
  if ((groups[0]! & 0xffc0) === 0xfe80) return "a private network";
  return "remote";
}

/** The eight 16-bit groups of an IPv6 address (`::` expanded, a dotted IPv4 tail converted). */
function ipv6Groups(address: string): number[] | undefined {
  let text = address.split("%")[0]!;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = ipv4Octets(dotted[1]!);
    text = text.slice(0, -dotted[1]!.length) +
      `${((a! << 8) | b!).toString(16)}:${((c! << 8) | d!).toString(16)}`;
  }
  const [head, tail] = text.split("::");
  const part = (s: string | undefined) => (s ? s.split(":").map((g) => parseInt(g, 16)) : []);
  const front = part(head);
  const back = part(tail);
  const fill = tail === undefined ? 0 : 8 - front.length - back.length;
  const groups = [...front, ...Array<number>(Math.max(0, fill)).fill(0), ...back];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g)) ? groups : undefined;
}

/** Where a turn of `models` on `urls` runs: on the cloud when one model does, else by its hosts. */
export function workPlace(models: readonly ModelPlace[], urls: readonly string[]): WorkPlace {
  const cloudModels = models.filter(runsOnCloud).map((m) => m.name);
  const remoteUrls = urls.filter((u) => reachOf(u) === "remote");
  return {
    place: cloudModels.length > 0 ? "cloud" : remoteUrls.length > 0 ? "remote" : "local",
    cloudModels,
    remoteUrls,
    urls: [...urls],
  };
}

/** How to keep work local, for the person who owns the settings. */
export const KEEP_LOCAL_HINT = "ollama-delegate config --residency local keeps work local";

/**
 * Why the work goes where it does, in a few words: `qwen3.5:397b-cloud runs on ollama.com,
 * through http://127.0.0.1:11434`; `https://openrouter.ai/api is not this machine nor a
 * private network`; `http://127.0.0.1:11434, this machine`.
 */
export function placeReason(where: WorkPlace): string {
  const urls = where.urls.join(", ");
  if (where.place === "cloud") {
    const them = where.cloudModels.join(", ");
    return `${them} ${where.cloudModels.length === 1 ? "runs" : "run"} on ollama.com` +
      (urls ? `, through ${urls}` : "");
  }
  if (where.place === "remote") {
    return `${where.remoteUrls.join(", ")} ${
      where.remoteUrls.length === 1 ? "is" : "are"
    } not this machine nor a private network`;
  }
  const reaches = new Set(where.urls.map(reachOf));
  const reach = reaches.has("a private network") ? "a private network" : "this machine";
  return urls ? `${urls}, ${reach}` : reach;
}

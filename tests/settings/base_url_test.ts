import assert from "node:assert/strict";
import { normalizeBaseUrl, OLLAMA_DEFAULT_PORT } from "../../src/settings/base_url.ts";

function ok(input: string, expected: string) {
  assert.equal(normalizeBaseUrl(input), expected, `normalizeBaseUrl(${JSON.stringify(input)})`);
}

function bad(input: string, message: string) {
  assert.throws(() => normalizeBaseUrl(input), (e: unknown) => {
    assert.ok(e instanceof TypeError, `expected a TypeError for ${JSON.stringify(input)}`);
    assert.equal(e.message, message);
    return true;
  });
}

Deno.test("Ollama's default port is 11434", () => {
  assert.equal(OLLAMA_DEFAULT_PORT, 11434);
});

Deno.test("normalizeBaseUrl: the bind-all address becomes loopback on Ollama's port", () => {
  ok("0.0.0.0", "http://127.0.0.1:11434");
  ok("0.0.0.0:8080", "http://127.0.0.1:8080");
  ok("http://0.0.0.0:11434", "http://127.0.0.1:11434");
  ok("[::]", "http://127.0.0.1:11434");
  ok("[::]:5", "http://127.0.0.1:5");
});

Deno.test("normalizeBaseUrl: a bare host gets port 11434", () => {
  ok("localhost", "http://localhost:11434");
  ok("example.com", "http://example.com:11434");
  ok("10.0.0.7", "http://10.0.0.7:11434");
  ok("  gpu-box  ", "http://gpu-box:11434");
});

Deno.test("normalizeBaseUrl: host:port keeps the port", () => {
  ok("example.com:8080", "http://example.com:8080");
  ok("localhost:11434", "http://localhost:11434");
  ok("127.0.0.1:1", "http://127.0.0.1:1");
  ok("h:65535", "http://h:65535");
});

Deno.test("normalizeBaseUrl: :port alone means loopback", () => {
  ok(":1234", "http://127.0.0.1:1234");
  ok(":11434", "http://127.0.0.1:11434");
});

Deno.test("normalizeBaseUrl: bracketed IPv6 hosts", () => {
  ok("[::1]", "http://[::1]:11434");
  ok("[::1]:8080", "http://[::1]:8080");
  ok("https://[::1]/", "https://[::1]");
});

Deno.test("normalizeBaseUrl: a trailing /v1 and trailing slashes are dropped", () => {
  ok("http://h:1/v1/", "http://h:1");
  ok("http://h:1/v1", "http://h:1");
  ok("http://h:1/", "http://h:1");
  ok("http://h:1///", "http://h:1");
  ok("h:1/v1", "http://h:1");
  ok("https://proxy.example/ollama/v1/", "https://proxy.example/ollama");
  ok("https://proxy.example/ollama", "https://proxy.example/ollama");
});

Deno.test("normalizeBaseUrl: an explicit scheme uses that scheme's port, not 11434", () => {
  ok("http://h", "http://h");
  ok("https://h", "https://h");
  ok("http://h:80", "http://h");
  ok("https://h:443/", "https://h");
  ok("https://h:11434", "https://h:11434");
});

Deno.test("normalizeBaseUrl: scheme and host are lower-cased", () => {
  ok("HTTP://Example.COM:8080/", "http://example.com:8080");
  ok("Https://H", "https://h");
});

Deno.test("normalizeBaseUrl: only http and https are accepted", () => {
  bad("ftp://h", 'Cannot use scheme "ftp": only http and https are supported');
  bad("ws://h:1", 'Cannot use scheme "ws": only http and https are supported');
  bad("file:///tmp/x", 'Cannot use scheme "file": only http and https are supported');
});

Deno.test("normalizeBaseUrl: ports outside 1..65535 or not numbers are errors", () => {
  const msg = (p: string) => `Cannot use port "${p}": it must be a number from 1 to 65535`;
  bad("h:99999", msg("99999"));
  bad("h:65536", msg("65536"));
  bad("h:0", msg("0"));
  bad("http://h:123456/", msg("123456"));
  bad("h:abc", msg("abc"));
  bad("h:-1", msg("-1"));
  bad("[::1]:99999", msg("99999"));
});

Deno.test("normalizeBaseUrl: credentials are refused", () => {
  const msg = "Cannot use a URL with credentials in it; Ollama takes none";
  bad("http://user:pw@h:1", msg);
  bad("user@h", msg);
  bad("https://token@h/v1", msg);
});

Deno.test("normalizeBaseUrl: empty and unparseable values are errors", () => {
  bad("", "Cannot use an empty URL");
  bad("   ", "Cannot use an empty URL");
  bad("[::1", 'Cannot parse host "[::1": unclosed "["');
  bad("[::1]x", 'Cannot parse host "[::1]x"');
  bad("::1", 'Cannot parse "::1" as a URL');
  bad("my host", 'Cannot parse "my host" as a URL');
});

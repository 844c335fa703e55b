/**
 * Which URLs a Lua sandbox's http_get/http_post may reach. Adapters may reach any host (their
 * vendor's URL comes from config); a Lua plugin gets exactly what its manifest's
 * `permissions.network` grants: nothing, anything, or a list of hosts. The check runs on the main
 * thread, on the parsed URL, for the first request and for every redirect hop, so a listed host
 * cannot bounce a request to one that is not listed.
 */

/**
 * `true`: any http(s) URL. `false`: no network at all. A list: only these hosts, each `name` (any
 * port) or `name:port`; names compare case-insensitively and exactly (no subdomains).
 */
export type LuaHttpPolicy = boolean | readonly string[];

/** Redirects followed by hand when the policy is not `true` (each hop is checked again). */
export const MAX_CHECKED_REDIRECTS = 5;

const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'https:': '443' };

/** Why `url` may not be fetched under `policy`, or undefined when it may. */
export function httpRefusal(policy: LuaHttpPolicy, url: URL): string | undefined {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'only http and https URLs are allowed';
  if (policy === true) return undefined;
  if (policy === false) return 'network access is not allowed (the plugin manifest grants no permissions.network)';
  const host = stripDot(url.hostname.toLowerCase());
  const port = url.port || DEFAULT_PORTS[url.protocol] || '';
  for (const entry of policy) {
    const { name, port: allowedPort } = splitEntry(entry);
    if (name === host && (allowedPort === undefined || allowedPort === port)) return undefined;
  }
  return `host ${url.host} is not in the allowed network hosts (${policy.join(', ') || 'none'})`;
}

function splitEntry(entry: string): { name: string; port: string | undefined } {
  const colon = entry.lastIndexOf(':');
  if (colon < 0) return { name: stripDot(entry.toLowerCase()), port: undefined };
  return { name: stripDot(entry.slice(0, colon).toLowerCase()), port: String(Number(entry.slice(colon + 1))) };
}

/** `example.com.` and `example.com` are the same host. */
function stripDot(host: string): string {
  return host.endsWith('.') ? host.slice(0, -1) : host;
}

/** Status codes whose Location the fetch would follow. */
export function isRedirect(status: number): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
}

/**
 * The two checks that keep other web sites out of the server a browser in the house can reach.
 *
 * DNS rebinding: a page on evil.example can make its own name resolve to 127.0.0.1 and then talk
 * to this server "same-origin"; the Host header still says evil.example. So every request must name
 * this machine (localhost, its host name, its addresses) or a name the owner allowed; loopback is
 * not a trust boundary.
 *
 * Cross-site requests: a state-changing request that rides on the session cookie must come from the
 * page itself. Browsers say where a request comes from in Sec-Fetch-Site (or at least in Origin);
 * a cookie-carrying POST with neither is refused, since every browser that sends cookies sends one
 * of them. API-key requests carry no ambient credentials and are not checked.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { hostname as osHostname, networkInterfaces as osNetworkInterfaces } from 'node:os';
import { HomeAgentError } from '../../src/sdk/index.js';

/** How often the machine's own addresses are read again at most (DHCP may change them; a flood of bad Hosts must not make every request read them). */
const REFRESH_MS = 5000;
/** Methods that change state and get the cross-site check. */
export const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export interface HostAllowListOptions {
  /** plugin.webui.host as listened on. */
  listenHost: string;
  /** plugin.webui.allowed_hosts, read at each check. */
  allowedHosts: () => readonly string[];
  now?: () => number;
  /** Injected by tests; os.hostname and os.networkInterfaces by default. */
  hostname?: () => string;
  networkInterfaces?: typeof osNetworkInterfaces;
}

export class HostAllowList {
  readonly #options: HostAllowListOptions;
  readonly #now: () => number;
  #own = new Set<string>();
  #readAt = Number.NEGATIVE_INFINITY;

  constructor(options: HostAllowListOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** Throws HA_ERR_HTTP_HOST unless the Host header names this machine or an allowed name. */
  check(hostHeader: string | undefined): void {
    if (hostHeader === undefined || hostHeader.trim() === '') {
      throw new HomeAgentError('HA_ERR_HTTP_HOST', 'the request has no Host header; it is required (DNS rebinding protection)');
    }
    const name = hostName(hostHeader);
    if (name !== undefined && this.allows(name)) return;
    throw new HomeAgentError(
      'HA_ERR_HTTP_HOST',
      `the Host ${JSON.stringify(hostHeader.slice(0, 100))} is not a name of this machine; if it is, add it to plugin.webui.allowed_hosts`,
    );
  }

  /** True when `name` (a host name without port, IPv6 without brackets) is allowed. */
  allows(name: string): boolean {
    if (name === 'localhost' || name.endsWith('.localhost')) return true;
    for (const allowed of this.#options.allowedHosts()) if (normalize(allowed) === name) return true;
    if (this.#ownNames().has(name)) return true;
    // A new address (DHCP) or host name: look again, at most every REFRESH_MS.
    if (this.#now() - this.#readAt >= REFRESH_MS) return this.#ownNames(true).has(name);
    return false;
  }

  #ownNames(refresh = false): Set<string> {
    if (!refresh && this.#readAt !== Number.NEGATIVE_INFINITY) return this.#own;
    const names = new Set(['127.0.0.1', '::1']);
    const listen = normalize(this.#options.listenHost);
    if (listen !== '0.0.0.0' && listen !== '::' && listen !== '') names.add(listen);
    const machine = normalize((this.#options.hostname ?? osHostname)());
    if (machine !== '') {
      names.add(machine);
      names.add(`${machine}.local`);
      // A fully qualified host name is reached by its first label on the LAN too.
      const first = machine.split('.')[0];
      if (first) names.add(`${first}.local`);
    }
    for (const addresses of Object.values((this.#options.networkInterfaces ?? osNetworkInterfaces)())) {
      for (const address of addresses ?? []) {
        const value = normalize(address.address);
        names.add(value);
        // fe80::1%eth0 is written [fe80::1%25eth0] in a Host header.
        const zone = value.indexOf('%');
        if (zone !== -1) names.add(`${value.slice(0, zone)}%25${value.slice(zone + 1)}`);
      }
    }
    this.#own = names;
    this.#readAt = this.#now();
    return names;
  }
}

/** The host name of a Host header: lower case, without the port, IPv6 without brackets, no trailing dot. */
export function hostName(hostHeader: string): string | undefined {
  const value = hostHeader.trim().toLowerCase();
  let name: string;
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    if (end === -1) return undefined;
    const rest = value.slice(end + 1);
    if (rest !== '' && !/^:\d{1,5}$/.test(rest)) return undefined;
    name = value.slice(1, end);
  } else {
    const colon = value.indexOf(':');
    if (colon !== -1 && !/^\d{1,5}$/.test(value.slice(colon + 1))) return undefined;
    name = colon === -1 ? value : value.slice(0, colon);
  }
  name = name.replace(/\.$/, '');
  return name === '' ? undefined : name;
}

function normalize(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
}

/**
 * Throws HA_ERR_HTTP_CROSS_SITE when a state-changing request not authenticated by API key comes
 * from another site. `viaCookie`: the request is authenticated by the session cookie (then a
 * request saying nothing about where it comes from is refused too).
 */
export function checkSameOrigin(headers: IncomingHttpHeaders, viaCookie: boolean): void {
  const site = headers['sec-fetch-site'];
  if (site !== undefined) {
    if (site === 'same-origin' || site === 'none') return;
    throw new HomeAgentError(
      'HA_ERR_HTTP_CROSS_SITE',
      `a ${JSON.stringify(site)} request may not change anything here; only the HomeAgent page itself (or a program with the API key) may`,
    );
  }
  const origin = headers.origin;
  if (origin !== undefined) {
    const host = (headers.host ?? '').trim().toLowerCase();
    const from = origin.trim().toLowerCase();
    if (host !== '' && (from === `http://${host}` || from === `https://${host}`)) return;
    throw new HomeAgentError(
      'HA_ERR_HTTP_CROSS_SITE',
      `a request from ${JSON.stringify(origin.slice(0, 100))} may not change anything here; only the HomeAgent page itself (or a program with the API key) may`,
    );
  }
  if (viaCookie) {
    throw new HomeAgentError(
      'HA_ERR_HTTP_CROSS_SITE',
      'a request with the session cookie that changes something must carry Sec-Fetch-Site or Origin (browsers send them); programs use the API key instead',
    );
  }
}

/**
 * Which addresses an HTTP service (kbtree, the web page) may listen on. Loopback is always fine.
 * Anything else makes the service reachable from the network, so it is only done when the address was
 * written down explicitly (the default is 127.0.0.1, so any other value is a choice someone made);
 * an empty host would make Node listen on every interface without anyone having chosen that, so it
 * is refused.
 */
import { isIP } from 'node:net';
import { HomeAgentError } from './errors.js';

export type AddressScope = 'loopback' | 'network';

export function addressScope(host: string): AddressScope {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost' || h.endsWith('.localhost')) return 'loopback';
  if (isIP(h) === 4) return h.startsWith('127.') ? 'loopback' : 'network';
  if (isIP(h) === 6) {
    if (h === '::1' || /^(0{1,4}:){7}0{0,3}1$/.test(h)) return 'loopback';
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h);
    return mapped?.[1]?.startsWith('127.') ? 'loopback' : 'network';
  }
  return 'network';
}

/** Checks a listen address setting (`setting` names it in the error); throws HA_ERR_PLUGIN_START for an address nobody chose. */
export function checkListenHost(host: string, setting: string): { host: string; scope: AddressScope } {
  const trimmed = host.trim();
  if (trimmed === '') {
    throw new HomeAgentError(
      'HA_ERR_PLUGIN_START',
      `${setting} is empty, which would listen on every network interface; set it to 127.0.0.1 (this machine only) or to the address to serve explicitly (0.0.0.0 for all interfaces)`,
    );
  }
  return { host: trimmed.replace(/^\[(.*)\]$/, '$1'), scope: addressScope(trimmed) };
}

/** `host:port` for a URL (IPv6 in brackets). */
export function urlHost(host: string, port: number): string {
  return `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
}

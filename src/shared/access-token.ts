/**
 * An HTTP service's token (kbtree's, the web API's key): where a client may put it and how it is compared. Both sides are
 * hashed before the comparison so that timingSafeEqual gets equal-length buffers and neither the
 * token's length nor its matching prefix shows in the response time.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/** Random bytes of a generated token (192 bits; 32 characters of base64url). */
const TOKEN_BYTES = 24;
/** Configured tokens shorter than this are accepted but logged as weak. */
export const WEAK_TOKEN_CHARS = 16;

/**
 * A new token. It never starts with `-`: a token is pasted after an option on command lines
 * (`companion.mjs --token …`, `curl -H …`), and one starting with a dash reads as another option
 * there (node's parseArgs refused 1 in 64 companion lines that way).
 */
export function randomToken(): string {
  for (;;) {
    const token = randomBytes(TOKEN_BYTES).toString('base64url');
    if (!token.startsWith('-')) return token;
  }
}

/**
 * Every token the request offers: `X-API-Key`, `Authorization: Bearer`, and `?token=`. A request
 * may carry several (a proxy adding a header, say); it is let in when one of them is right.
 */
export function offeredTokens(headers: IncomingHttpHeaders, query: URLSearchParams): string[] {
  const offered: string[] = [];
  const apiKey = headers['x-api-key'];
  for (const value of Array.isArray(apiKey) ? apiKey : apiKey === undefined ? [] : [apiKey]) offered.push(value.trim());
  const bearer = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(headers.authorization ?? '');
  if (bearer?.[1]) offered.push(bearer[1]);
  for (const value of query.getAll('token')) offered.push(value);
  return offered.filter((token) => token !== '');
}

/** Compares tokens in time independent of where they differ. */
export class TokenCheck {
  readonly #digest: Buffer;

  constructor(token: string) {
    this.#digest = digest(token);
  }

  matches(offered: string): boolean {
    return timingSafeEqual(digest(offered), this.#digest);
  }

  /** True when any offered token matches; every one is compared, so the count of wrong ones does not shorten the work. */
  anyMatches(offered: readonly string[]): boolean {
    let ok = false;
    for (const token of offered) ok = this.matches(token) || ok;
    return ok;
  }
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

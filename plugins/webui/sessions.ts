/**
 * Logged-in sessions of the web page. A session id is 256 random bits, handed to the browser once
 * in the `ha_session` cookie; the server keeps only its SHA-256 digest, in memory and in
 * <data>/sessions.json, so a restart keeps people logged in while a copy of the file logs nobody
 * in. A session lasts session_ttl_ms from the login (not from the last use: a stolen cookie does
 * not live forever); at most max_sessions are kept, the oldest ended first.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../src/sdk/index.js';
import { writeFileAtomic } from './credentials.js';

export const SESSIONS_FILE = 'sessions.json';
export const SESSION_COOKIE = 'ha_session';
const SESSION_BYTES = 32;
const PRIVATE_MODE = 0o600;
/** base64url of 32 bytes; anything else in the cookie is not one of ours and is not even hashed. */
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

export interface SessionInfo {
  /** Epoch ms of the login. */
  created_at: number;
  /** Epoch ms after which the session is over. */
  expires_at: number;
}

export interface SessionStoreOptions {
  dataDir: string;
  /** plugin.webui.session_ttl_ms, read at each login. */
  ttlMs: () => number;
  /** plugin.webui.max_sessions, read at each login. */
  maxSessions: () => number;
  now?: () => number;
  log: Logger;
}

export class SessionStore {
  readonly #file: string;
  readonly #options: SessionStoreOptions;
  readonly #now: () => number;
  /** Digest (hex) → session; insertion order is login order, so the first entry is the oldest. */
  #sessions = new Map<string, SessionInfo>();

  constructor(options: SessionStoreOptions) {
    this.#options = options;
    this.#file = join(options.dataDir, SESSIONS_FILE);
    this.#now = options.now ?? Date.now;
  }

  /** Reads the stored sessions; a missing or unreadable file means nobody is logged in (logged, never fatal). */
  load(): void {
    this.#sessions = new Map();
    let text: string;
    try {
      text = readFileSync(this.#file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
        this.#options.log.warn({ err: error, file: this.#file }, 'the web sessions cannot be read; everyone has to log in again');
      }
      return;
    }
    try {
      const rows = JSON.parse(text) as unknown;
      if (!Array.isArray(rows)) throw new Error('not a list');
      const now = this.#now();
      for (const row of rows as Array<Record<string, unknown>>) {
        const { digest, created_at, expires_at } = row ?? {};
        if (typeof digest !== 'string' || !/^[0-9a-f]{64}$/.test(digest)) continue;
        if (typeof created_at !== 'number' || typeof expires_at !== 'number' || expires_at <= now) continue;
        this.#sessions.set(digest, { created_at, expires_at });
      }
    } catch (error) {
      this.#options.log.warn({ err: error, file: this.#file }, 'the web sessions file is damaged; everyone has to log in again');
    }
  }

  /** Starts a session; the id goes to the browser and is not kept anywhere. */
  create(): { id: string } & SessionInfo {
    const now = this.#now();
    this.#dropExpired(now);
    const id = randomBytes(SESSION_BYTES).toString('base64url');
    const info: SessionInfo = { created_at: now, expires_at: now + this.#options.ttlMs() };
    this.#sessions.set(digestOf(id), info);
    const max = this.#options.maxSessions();
    for (const digest of this.#sessions.keys()) {
      if (this.#sessions.size <= max) break;
      this.#sessions.delete(digest);
    }
    this.#save();
    return { id, ...info };
  }

  /** The session of a cookie value, when it is one and has not expired. */
  verify(id: string | undefined): SessionInfo | undefined {
    if (id === undefined || !SESSION_ID.test(id)) return undefined;
    const digest = digestOf(id);
    const info = this.#sessions.get(digest);
    if (!info) return undefined;
    if (info.expires_at <= this.#now()) {
      this.#sessions.delete(digest);
      this.#save();
      return undefined;
    }
    return { ...info };
  }

  /** Ends a session (logout); false when there was none. */
  end(id: string | undefined): boolean {
    if (id === undefined || !SESSION_ID.test(id)) return false;
    const ended = this.#sessions.delete(digestOf(id));
    if (ended) this.#save();
    return ended;
  }

  /** Ends every session (after a password reset). */
  endAll(): number {
    const count = this.#sessions.size;
    this.#sessions.clear();
    this.#save();
    return count;
  }

  get size(): number {
    return this.#sessions.size;
  }

  #dropExpired(now: number): void {
    for (const [digest, info] of this.#sessions) if (info.expires_at <= now) this.#sessions.delete(digest);
  }

  #save(): void {
    const rows = [...this.#sessions].map(([digest, info]) => ({ digest, ...info }));
    try {
      writeFileAtomic(this.#file, `${JSON.stringify(rows)}\n`, PRIVATE_MODE);
    } catch (error) {
      // Logins keep working from memory; only a restart would forget them.
      this.#options.log.warn({ err: error, file: this.#file }, 'the web sessions could not be saved; a restart will log everyone out');
    }
  }
}

function digestOf(id: string): string {
  return createHash('sha256').update(id, 'utf8').digest('hex');
}

/** The session id in a Cookie header (the first `ha_session`), if any. */
export function sessionIdFromCookie(header: string | undefined): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    if (part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * The Set-Cookie value of a session: HttpOnly (no script reads it), SameSite=Strict (no other site
 * sends it), Path=/ and Max-Age as long as the session. `Secure` only over HTTPS, since the page is
 * usually served over plain HTTP on the home network.
 */
export function sessionCookie(id: string, maxAgeMs: number, secure: boolean): string {
  const maxAge = Math.max(0, Math.floor(maxAgeMs / 1000));
  return `${SESSION_COOKIE}=${id}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${maxAge}${secure ? '; Secure' : ''}`;
}

/** The Set-Cookie value that removes the session cookie. */
export function clearedSessionCookie(secure: boolean): string {
  return sessionCookie('', 0, secure);
}

/**
 * The web server's two secrets: the admin password (people log in to the page with it) and the API
 * key (programs send it). Both are made at the first start, kept in <data>/credentials.json (mode
 * 0600, written atomically so a crash never leaves half a file), and shown again only to the
 * machine's admin (`homeagentctl webui credentials`). They are kept in clear because the owner must
 * be able to read them again; comparisons go through {@link TokenCheck} (SHA-256 digests and
 * timingSafeEqual), so neither a secret's length nor a matching prefix shows in response times.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { chmodSync, closeSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { HomeAgentError, randomToken, TokenCheck } from '../../src/sdk/index.js';

export const CREDENTIALS_FILE = 'credentials.json';
/** Private to the daemon's user: the file holds the secrets in clear. */
const PRIVATE_MODE = 0o600;
/** Letters and digits that cannot be mistaken for each other when typed from a note (no 0/o, 1/l/i). */
const PASSWORD_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
/** Four groups of five: 20 characters, about 98 bits, typeable on a phone. */
const PASSWORD_GROUPS = 4;
const PASSWORD_GROUP_LENGTH = 5;
const API_KEY_PREFIX = 'ha_';

export type CredentialKind = 'password' | 'api_key';

export interface Credentials {
  password: string;
  api_key: string;
  /** When the credentials were first made (ISO 8601). */
  created_at: string;
  /** When one of them was last replaced (ISO 8601). */
  updated_at: string;
}

export function randomPassword(): string {
  const groups: string[] = [];
  for (let g = 0; g < PASSWORD_GROUPS; g++) {
    let group = '';
    for (let i = 0; i < PASSWORD_GROUP_LENGTH; i++) group += PASSWORD_ALPHABET[randomInt(PASSWORD_ALPHABET.length)];
    groups.push(group);
  }
  return groups.join('-');
}

export function randomApiKey(): string {
  return `${API_KEY_PREFIX}${randomToken()}`;
}

export class CredentialStore {
  readonly #file: string;
  readonly #now: () => number;
  #credentials: Credentials | undefined;
  #passwordCheck: TokenCheck | undefined;
  #apiKeyCheck: TokenCheck | undefined;

  constructor(options: { dataDir: string; now?: () => number }) {
    this.#file = join(options.dataDir, CREDENTIALS_FILE);
    this.#now = options.now ?? Date.now;
  }

  get file(): string {
    return this.#file;
  }

  /**
   * Reads the stored credentials, or makes and stores new ones when there are none. `created` is
   * true the one time they were made, so the caller shows them once. A file that cannot be read is
   * an error naming it, and is left as it is.
   */
  load(): { credentials: Credentials; created: boolean } {
    const text = readIfPresent(this.#file);
    if (text === undefined) {
      const at = new Date(this.#now()).toISOString();
      this.#use({ password: randomPassword(), api_key: randomApiKey(), created_at: at, updated_at: at });
      this.#save();
      return { credentials: this.current(), created: true };
    }
    this.#use(parseCredentials(text, this.#file));
    // A copy restored from a backup may have come back readable by others.
    if ((statSync(this.#file).mode & 0o077) !== 0) chmodSync(this.#file, PRIVATE_MODE);
    return { credentials: this.current(), created: false };
  }

  current(): Credentials {
    if (!this.#credentials) throw new HomeAgentError('HA_ERR_PLUGIN_STATE', 'the web server credentials are not loaded');
    return { ...this.#credentials };
  }

  /** Replaces one secret with a new random one and stores it; answers the new set. */
  reset(kind: CredentialKind): Credentials {
    const current = this.current();
    const next: Credentials = {
      ...current,
      ...(kind === 'password' ? { password: randomPassword() } : { api_key: randomApiKey() }),
      updated_at: new Date(this.#now()).toISOString(),
    };
    const previous = this.#credentials;
    this.#use(next);
    try {
      this.#save();
    } catch (error) {
      if (previous) this.#use(previous);
      throw error;
    }
    return this.current();
  }

  passwordMatches(offered: string): boolean {
    return this.#passwordCheck?.matches(offered) ?? false;
  }

  /** True when one of the offered keys is the API key. */
  apiKeyMatches(offered: readonly string[]): boolean {
    return this.#apiKeyCheck?.anyMatches(offered) ?? false;
  }

  #use(credentials: Credentials): void {
    this.#credentials = credentials;
    this.#passwordCheck = new TokenCheck(credentials.password);
    this.#apiKeyCheck = new TokenCheck(credentials.api_key);
  }

  #save(): void {
    writeFileAtomic(this.#file, `${JSON.stringify(this.#credentials, null, 2)}\n`, PRIVATE_MODE);
  }
}

function parseCredentials(text: string, file: string): Credentials {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new HomeAgentError(
      'HA_ERR_PLUGIN_START',
      `${file} is not valid JSON (${(error as Error).message}); fix it, or delete it to make a new password and API key`,
      { cause: error },
    );
  }
  const record = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  for (const field of ['password', 'api_key'] as const) {
    const secret = record[field];
    if (typeof secret !== 'string' || secret.length < 8) {
      throw new HomeAgentError(
        'HA_ERR_PLUGIN_START',
        `${file} has no usable ${field} (a string of at least 8 characters); fix it, or delete the file to make a new password and API key`,
      );
    }
  }
  const fallback = new Date(0).toISOString();
  const created = typeof record.created_at === 'string' ? record.created_at : fallback;
  return {
    password: record.password as string,
    api_key: record.api_key as string,
    created_at: created,
    updated_at: typeof record.updated_at === 'string' ? record.updated_at : created,
  };
}

function readIfPresent(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new HomeAgentError('HA_ERR_PLUGIN_START', `${file} cannot be read: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * Writes a file so that readers see either the old or the new content, never a part: a private
 * temporary file next to it, flushed, then renamed over it. The temporary file is created with
 * `mode` from the start, so the secret is never readable by others, not even for a moment.
 */
export function writeFileAtomic(file: string, text: string, mode: number): void {
  const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = openSync(temporary, 'wx', mode);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(temporary, file);
  } catch (error) {
    // Do not leave the secret lying around under another name.
    rmSync(temporary, { force: true });
    throw error;
  }
}

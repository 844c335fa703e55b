/**
 * The embedded broker's generated logins, made at its first start and kept in
 * `<data>/plugin-data/mqtt/broker-credentials.json`:
 * - `homeagent`: HomeAgent's own client (it alone may publish on HomeAgent's topics, see
 *   broker-access.ts). Nothing shows its password; it never needs to be typed anywhere.
 * - `devices`: for Home Assistant, Zigbee2MQTT, Tasmota and other HomeAgent nodes;
 *   `homeagentctl mqtt credentials` shows it, `--reset devices` replaces it.
 *
 * The file is private to the daemon's user (mode 0600 from the moment it exists: the temporary
 * file is created with it) and written atomically (temporary file, fsync, rename), so a crash
 * leaves the old logins or the new ones, never half a file. The passwords are kept in clear
 * because the owner must be able to read the devices' one again, and HomeAgent must present its
 * own. A file that cannot be read is an error naming it and is left untouched: making new logins
 * silently would lock every configured device out.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { HomeAgentError, randomToken } from '../../src/sdk/index.js';

export const BROKER_CREDENTIALS_FILE = 'broker-credentials.json';
const FORMAT = 'homeagent-mqtt-broker-credentials';
/** Private to the daemon's user: the file holds the passwords in clear. */
const PRIVATE_MODE = 0o600;
/** Shorter stored passwords are refused: the file was edited by hand or damaged. */
const MIN_PASSWORD_CHARS = 16;

const HOMEAGENT_USER = 'homeagent';
const DEVICES_USER = 'devices';

export interface UserPassword {
  username: string;
  password: string;
}

export interface BrokerCredentials {
  homeagent: UserPassword;
  devices: UserPassword;
  /** When the logins were first made (ISO 8601). */
  created_at: string;
  /** When one was last replaced (ISO 8601). */
  updated_at: string;
}

export class BrokerCredentialStore {
  readonly #file: string;
  readonly #now: () => number;
  #credentials: BrokerCredentials | undefined;

  constructor(options: { dir: string; now?: () => number }) {
    this.#file = join(options.dir, BROKER_CREDENTIALS_FILE);
    this.#now = options.now ?? Date.now;
  }

  get file(): string {
    return this.#file;
  }

  /**
   * Reads the stored logins, or makes and stores new ones when there are none; `created` is true
   * the one time they were made. HA_ERR_MQTT_BROKER naming the file when it cannot be used.
   */
  async load(): Promise<{ credentials: BrokerCredentials; created: boolean }> {
    const text = await readIfPresent(this.#file);
    if (text === undefined) {
      const at = new Date(this.#now()).toISOString();
      const made: BrokerCredentials = {
        homeagent: { username: HOMEAGENT_USER, password: randomToken() },
        devices: { username: DEVICES_USER, password: randomToken() },
        created_at: at,
        updated_at: at,
      };
      await mkdir(dirname(this.#file), { recursive: true });
      await this.#save(made);
      this.#credentials = made;
      return { credentials: this.current(), created: true };
    }
    this.#credentials = parseCredentials(text, this.#file);
    // A copy restored from a backup may have come back readable by others.
    if (((await stat(this.#file)).mode & 0o077) !== 0) await chmod(this.#file, PRIVATE_MODE);
    return { credentials: this.current(), created: false };
  }

  current(): BrokerCredentials {
    const credentials = this.#credentials;
    if (credentials === undefined) throw new HomeAgentError('HA_ERR_PLUGIN_STATE', 'the MQTT broker credentials are not loaded');
    return { ...credentials, homeagent: { ...credentials.homeagent }, devices: { ...credentials.devices } };
  }

  /** A new random password for the devices' login, stored before it is answered (the old one is kept if storing fails). */
  async resetDevices(): Promise<BrokerCredentials> {
    const current = this.current();
    const next: BrokerCredentials = {
      ...current,
      devices: { username: current.devices.username, password: randomToken() },
      updated_at: new Date(this.#now()).toISOString(),
    };
    await this.#save(next);
    this.#credentials = next;
    return this.current();
  }

  async #save(credentials: BrokerCredentials): Promise<void> {
    await writePrivateFileAtomic(this.#file, `${JSON.stringify({ format: FORMAT, ...credentials }, null, 2)}\n`);
  }
}

function parseCredentials(text: string, file: string): BrokerCredentials {
  const unusable = (why: string, cause?: unknown) =>
    new HomeAgentError(
      'HA_ERR_MQTT_BROKER',
      `${file} ${why}; fix it, or delete it to make new broker logins (devices then need the new password: homeagentctl mqtt credentials)`,
      cause === undefined ? {} : { cause },
    );
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw unusable(`is not valid JSON (${(error as Error).message})`, error);
  }
  const record = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  if (record.format !== FORMAT) throw unusable(`is not a HomeAgent MQTT broker credentials file (format ${JSON.stringify(FORMAT)})`);
  const login = (key: 'homeagent' | 'devices'): UserPassword => {
    const entry = (typeof record[key] === 'object' && record[key] !== null ? record[key] : {}) as Record<string, unknown>;
    const { username, password } = entry;
    if (typeof username !== 'string' || username === '') throw unusable(`has no user name for the ${key} login`);
    if (typeof password !== 'string' || password.length < MIN_PASSWORD_CHARS) {
      throw unusable(`has no usable password for the ${key} login (a string of at least ${MIN_PASSWORD_CHARS} characters)`);
    }
    return { username, password };
  };
  const homeagent = login('homeagent');
  const devices = login('devices');
  if (homeagent.username === devices.username) throw unusable('gives the homeagent and devices logins the same user name');
  const fallback = new Date(0).toISOString();
  const created = typeof record.created_at === 'string' ? record.created_at : fallback;
  return { homeagent, devices, created_at: created, updated_at: typeof record.updated_at === 'string' ? record.updated_at : created };
}

async function readIfPresent(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new HomeAgentError('HA_ERR_MQTT_BROKER', `${file} cannot be read: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * Readers see the old content or the new, never a part: a private temporary file next to it,
 * flushed, renamed over it, and the folder flushed so the rename survives a power cut.
 */
async function writePrivateFileAtomic(file: string, text: string): Promise<void> {
  const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    const handle = await open(temporary, 'wx', PRIVATE_MODE);
    try {
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, file);
  } catch (error) {
    // Do not leave the passwords lying around under another name.
    await rm(temporary, { force: true });
    throw new HomeAgentError('HA_ERR_MQTT_BROKER', `${file} could not be written: ${(error as Error).message}`, { cause: error });
  }
  let folder: Awaited<ReturnType<typeof open>> | undefined;
  try {
    folder = await open(dirname(file), 'r');
    await folder.sync();
  } catch {
    // Some file systems refuse fsync on a folder; the rename is still atomic.
  } finally {
    await folder?.close();
  }
}

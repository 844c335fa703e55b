/**
 * The registered devices: one row per device in <plugin data>/devices.db (synchronous=FULL, so a
 * device added and acknowledged survives a power cut), listed by the kernel as
 * `remotedevice.devices` (status, backup, restore). A device's token is shown to the owner once,
 * when it is made, and only its sha256 is kept: the tokens are 192 random bits, so a fast hash is
 * enough, and a copy of the database does not let anyone bind. Tokens are compared in time that
 * does not depend on where they differ.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import {
  HomeAgentError,
  type Migration,
  type PluginDatabase,
  type PluginDatabases,
  randomToken,
  type SqlStatement,
} from '../../src/sdk/index.js';

const DATABASE_NAME = 'devices';

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'devices',
    up(db) {
      db.exec(`
        CREATE TABLE devices (
          id           TEXT    PRIMARY KEY,
          name         TEXT    NOT NULL,
          token_sha256 TEXT    NOT NULL,
          capabilities INTEGER NOT NULL,
          created_at   INTEGER NOT NULL,
          created_by   TEXT    NOT NULL,
          token_at     INTEGER NOT NULL
        ) STRICT, WITHOUT ROWID;
      `);
    },
  },
];

export interface RegisteredDevice {
  id: string;
  name: string;
  /** The capabilities the owner granted (a mask of DEVICE_CAPABILITY bits). */
  capabilities: number;
  created_at: number;
  created_by: string;
  /** When the current token was made. */
  token_at: number;
}

interface Row extends RegisteredDevice {
  token_sha256: string;
}

const hash = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

export class DeviceStore {
  readonly #database: PluginDatabase;
  readonly #get: SqlStatement;
  readonly #all: SqlStatement;
  readonly #insert: SqlStatement;
  readonly #delete: SqlStatement;
  readonly #token: SqlStatement;
  readonly #count: SqlStatement;
  readonly #now: () => number;

  constructor(databases: PluginDatabases, now: () => number = Date.now) {
    this.#now = now;
    this.#database = databases.open({ name: DATABASE_NAME, migrations: MIGRATIONS });
    const db = this.#database.db;
    this.#get = db.prepare('SELECT * FROM devices WHERE id = ?');
    this.#all = db.prepare('SELECT * FROM devices ORDER BY id');
    this.#insert = db.prepare(
      'INSERT INTO devices (id, name, token_sha256, capabilities, created_at, created_by, token_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    this.#delete = db.prepare('DELETE FROM devices WHERE id = ?');
    this.#token = db.prepare('UPDATE devices SET token_sha256 = ?, token_at = ? WHERE id = ?');
    this.#count = db.prepare('SELECT COUNT(*) AS n FROM devices');
  }

  /** Where a damaged file was moved (the store then started empty). */
  get recovered(): string | undefined {
    return this.#database.recovery?.movedTo;
  }

  close(): void {
    this.#database.close();
  }

  count(): number {
    return (this.#count.get() as { n: number }).n;
  }

  list(): RegisteredDevice[] {
    return (this.#all.all() as Row[]).map(shown);
  }

  get(id: string): RegisteredDevice | undefined {
    const row = this.#get.get(id) as Row | undefined;
    return row && shown(row);
  }

  /** Registers a device and answers its token, the only time it exists outside the device. */
  add(
    device: { id: string; name: string; capabilities: number; by: string },
    maxDevices: number,
  ): { device: RegisteredDevice; token: string } {
    if (this.get(device.id)) throw new HomeAgentError('HA_ERR_REMOTEDEVICE_EXISTS', `a device ${device.id} is registered already`);
    if (this.count() >= maxDevices) {
      throw new HomeAgentError(
        'HA_ERR_REMOTEDEVICE_LIMIT',
        `${maxDevices} devices are registered already (plugin.remotedevice.max_devices); revoke one first`,
      );
    }
    const token = randomToken();
    const now = this.#now();
    this.#insert.run(device.id, device.name, hash(token).toString('hex'), device.capabilities, now, device.by, now);
    return { device: this.get(device.id) as RegisteredDevice, token };
  }

  /** Replaces a device's token; the old one stops working at once. */
  rotate(id: string): { device: RegisteredDevice; token: string } {
    if (!this.get(id)) throw unknown(id);
    const token = randomToken();
    this.#token.run(hash(token).toString('hex'), this.#now(), id);
    return { device: this.get(id) as RegisteredDevice, token };
  }

  remove(id: string): RegisteredDevice {
    const device = this.get(id);
    if (!device) throw unknown(id);
    this.#delete.run(id);
    return device;
  }

  /**
   * The device when `token` is its token. An unknown id costs the same comparison as a wrong
   * token, so the answer's time does not tell which ids exist.
   */
  verify(id: string, token: string): RegisteredDevice | undefined {
    const row = this.#get.get(id) as Row | undefined;
    const stored = row ? Buffer.from(row.token_sha256, 'hex') : hash(`no device\u0000${id}`);
    const ok = timingSafeEqual(hash(token), stored.length === 32 ? stored : Buffer.alloc(32));
    return ok && row ? shown(row) : undefined;
  }
}

function shown(row: Row): RegisteredDevice {
  const { token_sha256: _secret, ...device } = row;
  return device;
}

function unknown(id: string): HomeAgentError {
  return new HomeAgentError('HA_ERR_REMOTEDEVICE_UNKNOWN', `no device ${id} is registered`);
}

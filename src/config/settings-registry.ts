/**
 * The runtime settings registry: typed definitions (from the schema, plus plugin definitions under
 * `plugin.<name>.*`), the effective value of each key and where it came from, and runtime changes
 * stored in the state database (synchronous=FULL, so an acknowledged change survives power loss).
 *
 * Precedence: schema default < configuration file < environment < runtime change (`config set`).
 * `config reset` removes the runtime change and falls back to the file, environment or default.
 * Secrets are stored in the database (mode 0600 inside the private state directory) but are never
 * returned, printed or logged in clear.
 */
import { isDeepStrictEqual } from 'node:util';
import type { HistoryEntry, SettingView } from '../api/settings.js';
import type { EventBus } from '../events/event-bus.js';
import type { Logger, LogManager } from '../log/logger.js';
import type { Clock } from '../shared/clock.js';
import { HomeAgentError, isHomeAgentError } from '../shared/errors.js';
import { nearNames } from '../shared/near-names.js';
import type { Service } from '../shared/service.js';
import type { ManagedDatabase } from '../store/database.js';
import type { Migration, SqlDatabase } from '../store/types.js';
import { renamedSettingKeys } from './config-migrations.js';
import { checkValue, coerceText, describeProblem, type SettingChecks, type SettingDefinition, withDefaults } from './definitions.js';
import { getByKey, type LoadedConfig, setByKey } from './loader.js';
import type { Config } from './schema.js';

export type { HistoryEntry, SettingView };

export const SECRET_MASK = '********';

/** Field names that are secret wherever they appear inside a structured setting (LLM sources). */
const SECRET_FIELD = /^(api_key|password|token|secret)$/;

/** The value as it may be shown or recorded: secrets masked, nested secret fields too. */
export function maskSecrets(def: SettingDefinition, value: unknown): unknown {
  if (def.secret) return value === '' || value === undefined ? '' : SECRET_MASK;
  return maskNested(value);
}

function maskNested(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskNested);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, SECRET_FIELD.test(k) && typeof v === 'string' && v !== '' ? SECRET_MASK : maskNested(v)]),
  );
}

export const SETTINGS_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'settings and history',
    up(db) {
      db.exec(`
        CREATE TABLE settings (
          key        TEXT PRIMARY KEY,
          value      TEXT NOT NULL,
          updated_at TEXT NOT NULL,
          updated_by TEXT NOT NULL
        ) STRICT;
        CREATE TABLE settings_history (
          id     INTEGER PRIMARY KEY AUTOINCREMENT,
          key    TEXT NOT NULL,
          action TEXT NOT NULL CHECK (action IN ('set', 'reset')),
          value  TEXT,
          actor  TEXT NOT NULL,
          at     TEXT NOT NULL
        ) STRICT;
        CREATE INDEX settings_history_by_key ON settings_history (key, id);
      `);
    },
  },
];

export interface SettingsRegistryOptions {
  database: () => ManagedDatabase;
  definitions: readonly SettingDefinition[];
  loaded: LoadedConfig;
  events: EventBus;
  logs: LogManager;
  clock: Clock;
  /** Checks beyond the schema, per key (the ones the loader ran on the file). */
  checks?: SettingChecks;
  /** Keys renamed by configuration migrations, old → new; default every migration's (config-migrations.ts). */
  renames?: ReadonlyMap<string, string>;
}

export class SettingsRegistry implements Service {
  readonly name = 'settings';
  readonly #options: SettingsRegistryOptions;
  readonly #log: Logger;
  readonly #definitions = new Map<string, SettingDefinition>();
  readonly #overrides = new Map<string, unknown>();
  readonly #bootValues = new Map<string, unknown>();
  #db: SqlDatabase | undefined;
  #snapshot: Config | undefined;

  constructor(options: SettingsRegistryOptions) {
    this.#options = options;
    this.#log = options.logs.child('settings');
    for (const def of options.definitions) this.#definitions.set(def.key, def);
  }

  async start(): Promise<void> {
    const managed = this.#options.database();
    managed.migrate('settings', SETTINGS_MIGRATIONS);
    this.#db = managed.db;
    this.#renameStoredKeys(this.#options.renames ?? renamedSettingKeys());
    const rows = this.#db.prepare('SELECT key, value FROM settings').all() as Array<{ key: string; value: string }>;
    for (const row of rows) {
      const def = this.#definitions.get(row.key);
      let value: unknown;
      try {
        value = JSON.parse(row.value);
      } catch {
        this.#log.warn({ key: row.key }, 'stored setting is not valid JSON; ignoring it');
        continue;
      }
      if (def) {
        value = withDefaults(def, value);
        const problem = checkValue(def, value) ?? this.#options.checks?.[row.key]?.(value);
        if (problem) {
          // Kept in the database (a later version may accept it again) but not used.
          this.#log.warn({ key: row.key, problem }, 'stored setting no longer fits its definition; using the configured value');
          continue;
        }
      }
      this.#overrides.set(row.key, value);
    }
    for (const key of this.#definitions.keys()) this.#bootValues.set(key, this.#effective(key));
    this.#snapshot = undefined;
  }

  async stop(): Promise<void> {
    this.#db = undefined;
  }

  /**
   * Run-time changes stored under a key a configuration migration renamed move to the new key, in
   * one transaction with their history; a value already stored under the new key wins.
   */
  #renameStoredKeys(renames: ReadonlyMap<string, string>): void {
    const db = this.#db;
    if (!db || renames.size === 0) return;
    const has = db.prepare('SELECT 1 FROM settings WHERE key = ?');
    const move = db.prepare('UPDATE settings SET key = ? WHERE key = ?');
    const drop = db.prepare('DELETE FROM settings WHERE key = ?');
    const history = db.prepare('UPDATE settings_history SET key = ? WHERE key = ?');
    db.transaction(() => {
      for (const [oldKey, newKey] of renames) {
        if (!has.get(oldKey)) continue;
        const kept = has.get(newKey) !== undefined;
        if (kept) drop.run(oldKey);
        else move.run(newKey, oldKey);
        history.run(newKey, oldKey);
        this.#log.info({ from: oldKey, to: newKey, kept_new: kept }, 'stored setting moved to its renamed key');
      }
    })();
  }

  /**
   * The configuration the running daemon uses, as a typed object: runtime changes apply at once,
   * except for `requires_restart` keys, which keep the value they had when the daemon started.
   */
  config(): Config {
    if (!this.#snapshot) {
      const snapshot = structuredClone(this.#options.loaded.config);
      for (const def of this.#definitions.values()) {
        const atBoot = def.requires_restart && this.#bootValues.has(def.key);
        setByKey(snapshot, def.key, atBoot ? this.#bootValues.get(def.key) : this.#effective(def.key));
      }
      this.#snapshot = snapshot;
    }
    return this.#snapshot;
  }

  definition(key: string): SettingDefinition {
    const def = this.#definitions.get(key);
    if (!def) throw unknownKey(key, [...this.#definitions.keys()]);
    return def;
  }

  isDefined(key: string): boolean {
    return this.#definitions.has(key);
  }

  /** Adds definitions for a plugin's own settings (`plugin.<name>.*`). */
  define(plugin: string, definitions: readonly SettingDefinition[]): void {
    const prefix = `plugin.${plugin}.`;
    for (const def of definitions) {
      if (!def.key.startsWith(prefix)) {
        throw new HomeAgentError(
          'HA_ERR_SETTINGS_DEFINITION',
          `plugin ${plugin} may only define settings under ${prefix}*, not ${def.key}`,
        );
      }
      if (this.#definitions.has(def.key)) {
        throw new HomeAgentError('HA_ERR_SETTINGS_DEFINITION', `setting ${def.key} is already defined`);
      }
    }
    for (const def of definitions) {
      this.#definitions.set(def.key, def);
      // A row stored before the key was defined was loaded unchecked at start; check it now.
      const problem = this.#overrides.has(def.key) ? checkValue(def, this.#overrides.get(def.key)) : undefined;
      if (problem) {
        this.#overrides.delete(def.key);
        this.#log.warn({ key: def.key, problem }, 'stored setting no longer fits its definition; using the configured value');
      }
      this.#bootValues.set(def.key, this.#effective(def.key));
    }
    this.#snapshot = undefined;
  }

  get(key: string): SettingView {
    return this.#view(this.definition(key));
  }

  list(prefix = ''): SettingView[] {
    return [...this.#definitions.values()].filter((d) => d.key.startsWith(prefix)).map((d) => this.#view(d));
  }

  /** Keys changed at run time that only take effect after a restart. */
  restartPending(): string[] {
    return this.list()
      .filter((v) => v.restart_pending)
      .map((v) => v.key);
  }

  /**
   * Changes a setting. Text (from the CLI or a form) is converted to the setting's type first.
   * The change and its history row are written in one transaction before this returns.
   */
  set(key: string, input: unknown, actor: string): SettingView {
    const def = this.definition(key);
    if (def.file_only) {
      throw new HomeAgentError(
        'HA_ERR_SETTINGS_FILE_ONLY',
        `${key} can only be set in the configuration file or with the environment variable ${def.env}, because it is needed before the settings database opens`,
      );
    }
    const value = withDefaults(
      def,
      typeof input === 'string' && def.type !== 'string' && def.type !== 'enum' ? coerceText(def, input) : input,
    );
    const problem = checkValue(def, value) ?? this.#options.checks?.[key]?.(value);
    if (problem) throw new HomeAgentError('HA_ERR_SETTINGS_INVALID_VALUE', describeProblem(key, problem));
    const at = new Date(this.#options.clock.now()).toISOString();
    const json = JSON.stringify(value);
    this.#write(def, () => {
      this.#requireDb()
        .prepare(
          `INSERT INTO settings (key, value, updated_at, updated_by) VALUES (?, ?, ?, ?)
           ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at, updated_by = excluded.updated_by`,
        )
        .run(key, json, at, actor);
      this.#recordHistory(key, 'set', def.secret ? null : JSON.stringify(maskSecrets(def, value)), actor, at);
    });
    this.#overrides.set(key, value);
    this.#changed(def, actor, false, maskSecrets(def, value));
    return this.#view(def);
  }

  /** Removes the runtime change; the file, environment or default value applies again. */
  reset(key: string, actor: string): SettingView {
    const def = this.definition(key);
    const at = new Date(this.#options.clock.now()).toISOString();
    this.#write(def, () => {
      this.#requireDb().prepare('DELETE FROM settings WHERE key = ?').run(key);
      this.#recordHistory(key, 'reset', null, actor, at);
    });
    this.#overrides.delete(key);
    this.#changed(def, actor, true, undefined);
    return this.#view(def);
  }

  /**
   * The configuration file changed on disk and now says `value` for `key` (undefined: it no longer
   * sets it, so the default applies). The value is checked like the file's at start; a problem
   * throws HA_ERR_SETTINGS_INVALID_VALUE naming it, and nothing changes. `changed`: the running
   * value changed (settings.changed is emitted); `unchanged`: the file says what it said;
   * `overridden`: the environment or a runtime change (`config set`) wins over the file, which is
   * kept for when that goes (`config reset` falls back to the new file value).
   */
  reloadFromFile(key: string, value: unknown, file: string): 'changed' | 'unchanged' | 'overridden' {
    const def = this.definition(key);
    const loaded = this.#options.loaded;
    if (loaded.sources.get(key)?.startsWith('env:')) return 'overridden';
    const filled = value === undefined ? structuredClone(def.default) : withDefaults(def, value);
    const problem = checkValue(def, filled) ?? this.#options.checks?.[key]?.(filled);
    if (problem) throw new HomeAgentError('HA_ERR_SETTINGS_INVALID_VALUE', describeProblem(key, problem), { details: { key } });
    if (isDeepStrictEqual(getByKey(loaded.config, key), filled)) return 'unchanged';
    setByKey(loaded.config, key, filled);
    loaded.sources.set(key, value === undefined ? 'default' : file);
    this.#snapshot = undefined;
    if (this.#overrides.has(key)) return 'overridden';
    this.#options.logs.audit({ actor: 'config-file', action: 'settings.file_changed', key, file });
    this.#options.events.emit('settings.changed', { key, actor: 'config-file', requires_restart: def.requires_restart, reset: false });
    return 'changed';
  }

  history(key?: string, limit = 100): HistoryEntry[] {
    const db = this.#requireDb();
    const rows =
      key === undefined
        ? db.prepare('SELECT * FROM settings_history ORDER BY id DESC LIMIT ?').all(limit)
        : db.prepare('SELECT * FROM settings_history WHERE key = ? ORDER BY id DESC LIMIT ?').all(key, limit);
    return rows as HistoryEntry[];
  }

  /**
   * One transaction; nothing in memory changes before it committed. A full disk or a refused write
   * comes out with its code (HA_ERR_STORE_FULL / HA_ERR_STORE_WRITE) and says that the setting
   * keeps the value it had.
   */
  #write(def: SettingDefinition, body: () => void): void {
    try {
      this.#requireDb().transaction(body)();
    } catch (error) {
      if (!isHomeAgentError(error, 'HA_ERR_STORE_FULL') && !isHomeAgentError(error, 'HA_ERR_STORE_WRITE')) throw error;
      const kept = JSON.stringify(maskSecrets(def, this.#effective(def.key)));
      throw new HomeAgentError(error.code, `${def.key} was not changed and stays ${kept}: ${error.message}`, {
        cause: error,
        ...(error.details && { details: error.details }),
      });
    }
  }

  #recordHistory(key: string, action: 'set' | 'reset', value: string | null, actor: string, at: string): void {
    const db = this.#requireDb();
    db.prepare('INSERT INTO settings_history (key, action, value, actor, at) VALUES (?, ?, ?, ?, ?)').run(key, action, value, actor, at);
    const keep = this.config().core.settings.history_max_rows;
    db.prepare('DELETE FROM settings_history WHERE id <= (SELECT id FROM settings_history ORDER BY id DESC LIMIT 1 OFFSET ?)').run(keep);
  }

  #changed(def: SettingDefinition, actor: string, reset: boolean, loggedValue: unknown): void {
    this.#snapshot = undefined;
    this.#options.logs.audit({ actor, action: reset ? 'settings.reset' : 'settings.set', key: def.key, value: loggedValue });
    this.#options.events.emit('settings.changed', { key: def.key, actor, requires_restart: def.requires_restart, reset });
  }

  #effective(key: string): unknown {
    return this.#overrides.has(key) ? this.#overrides.get(key) : this.#bootValue(key);
  }

  #bootValue(key: string): unknown {
    const fromConfig = getByKey(this.#options.loaded.config, key);
    return fromConfig === undefined ? this.#definitions.get(key)?.default : fromConfig;
  }

  #view(def: SettingDefinition): SettingView {
    const value = this.#effective(def.key);
    const mask = (v: unknown) => maskSecrets(def, v);
    const view: SettingView = {
      key: def.key,
      value: mask(value),
      source: this.#overrides.has(def.key) ? 'runtime' : (this.#options.loaded.sources.get(def.key) ?? 'default'),
      default: mask(def.default),
      type: def.type,
      description: def.description,
      category: def.category,
      requires_restart: def.requires_restart,
      restart_pending: def.requires_restart && !isDeepStrictEqual(value, this.#bootValues.get(def.key)),
      secret: def.secret,
      file_only: def.file_only,
      env: def.env,
    };
    if (def.description_zh !== undefined) view.description_zh = def.description_zh;
    if (def.minimum !== undefined) view.minimum = def.minimum;
    if (def.maximum !== undefined) view.maximum = def.maximum;
    if (def.enum !== undefined) view.enum = def.enum;
    return view;
  }

  #requireDb(): SqlDatabase {
    if (!this.#db) throw new HomeAgentError('HA_ERR_INTERNAL', 'the settings registry is not started');
    return this.#db;
  }
}

/**
 * `no setting named plugin.cli.sockt_path; did you mean plugin.cli.socket_path? plugin.cli.* has:
 * enabled, socket_path, ...`: the near misses (a typo, the same name in another section, a section
 * given for a key) and the keys of the section it names.
 */
function unknownKey(key: string, known: string[]): HomeAgentError {
  const last = key.split('.').pop() ?? key;
  const similar = [...nearNames(key, known), ...known.filter((k) => k.endsWith(`.${last}`) || k.startsWith(`${key}.`))].filter(
    (k, i, all) => all.indexOf(k) === i,
  );
  const parent = key.includes('.') ? key.slice(0, key.lastIndexOf('.') + 1) : '';
  const siblings = parent === '' ? [] : known.filter((k) => k.startsWith(parent) && !k.slice(parent.length).includes('.'));
  const hint = similar.length > 0 ? `; did you mean ${similar.slice(0, 5).join(', ')}?` : '';
  const near =
    siblings.length > 0
      ? ` ${parent}* has: ${siblings.map((k) => k.slice(parent.length)).join(', ')}`
      : ' `homeagentctl config list` shows every key';
  return new HomeAgentError('HA_ERR_SETTINGS_UNKNOWN_KEY', `no setting named ${key}${hint}${hint ? '' : ';'}${near}`, {
    details: { key, similar: similar.slice(0, 5) },
  });
}

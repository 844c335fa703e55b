/**
 * Versioned configuration files. The appliance is upgraded in place, so a file written for one
 * release must keep meaning the same after the next one: a file says which version of the
 * configuration it was written for (top-level `version`; a file without it is version 1, every
 * file written before versions existed), and each migration turns version N-1 into N — renamed
 * keys and any other change of meaning. The anchor is zigbee2mqtt's settingsMigration.
 *
 * The daemon migrates the file in memory at every start (the system file belongs to root and the
 * service may not write it) and says so; `homeagent config-migrate` writes the migrated file with
 * a backup of the old one, and the package's postinst runs it on upgrade. Renames also apply to
 * settings changed at run time (stored by key in the state database), see renamedSettingKeys.
 * A file for a newer version than this HomeAgent knows is refused: guessing would be worse.
 *
 * Rules for a new migration: bump CONFIG_VERSION, append the migration, never reuse a retired key
 * name for something else (renames of stored settings are applied whenever the old name is found),
 * and add the previous release's file to test/fixtures/config/ so the tests load it.
 */
import { type Document, isMap, parseDocument } from 'yaml';
import { HomeAgentError } from '../shared/errors.js';

/** The configuration version this HomeAgent writes and reads; files up to it are accepted. */
export const CONFIG_VERSION = 1;

export interface ConfigMigration {
  /** The version it produces from version - 1. */
  version: number;
  /** What it changes, in one sentence (logged with each migration). */
  description: string;
  /** Setting keys renamed, old dotted key → new: in the file and in stored run-time settings. */
  renames?: Readonly<Record<string, string>>;
  /** Any other change to the file's document; answers what it changed, one line each. */
  transform?: (doc: Document) => string[];
}

/** Every migration, in version order (none yet: version 1 is the first versioned release). */
export const CONFIG_MIGRATIONS: readonly ConfigMigration[] = [];

export interface MigratedDocument {
  doc: Document;
  /** The version the file said (1 without `version`). */
  from: number;
  to: number;
  /** One line per change, e.g. "core.x renamed core.y (migration 2: ...)"; empty when nothing changed. */
  changes: string[];
}

/** The version a parsed file declares; HA_ERR_CONFIG_FILE when `version` is not a whole number ≥ 1. */
export function fileVersion(doc: Document, path: string): number {
  if (!isMap(doc.contents) || !doc.has('version')) return 1;
  const version = doc.get('version');
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1)
    throw new HomeAgentError(
      'HA_ERR_CONFIG_FILE',
      `${path}: version must be a whole number of at least 1, found ${JSON.stringify(version)}`,
    );
  return version;
}

/**
 * Brings a parsed file to `current`, in place; `version` in the document is set to the result
 * when anything ran. HA_ERR_CONFIG_VERSION for a file newer than `current`.
 */
export function migrateConfigDocument(
  doc: Document,
  path: string,
  migrations: readonly ConfigMigration[] = CONFIG_MIGRATIONS,
  current: number = CONFIG_VERSION,
): MigratedDocument {
  const from = fileVersion(doc, path);
  if (from > current)
    throw new HomeAgentError(
      'HA_ERR_CONFIG_VERSION',
      `${path} is written for configuration version ${from}, and this HomeAgent knows versions up to ${current}: upgrade HomeAgent, or restore the file's backup from before the upgrade`,
      { details: { problems: [`${path}: version ${from} is newer than ${current}`] } },
    );
  const changes: string[] = [];
  for (const migration of migrations) {
    if (migration.version <= from || migration.version > current) continue;
    const label = `migration ${migration.version}: ${migration.description}`;
    for (const [oldKey, newKey] of Object.entries(migration.renames ?? {})) {
      const oldPath = oldKey.split('.');
      if (!doc.hasIn(oldPath)) continue;
      const newPath = newKey.split('.');
      if (doc.hasIn(newPath)) {
        changes.push(`${oldKey} dropped: ${newKey} is set too and wins (${label})`);
      } else {
        doc.setIn(newPath, doc.getIn(oldPath, true));
        changes.push(`${oldKey} renamed ${newKey} (${label})`);
      }
      doc.deleteIn(oldPath);
    }
    for (const line of migration.transform?.(doc) ?? []) changes.push(`${line} (${label})`);
  }
  if (from < current && isMap(doc.contents)) doc.set('version', current);
  return { doc, from, to: Math.max(from, current), changes };
}

/** Stored run-time setting keys to rename, old → new, over every migration (applied whenever an old key is found). */
export function renamedSettingKeys(migrations: readonly ConfigMigration[] = CONFIG_MIGRATIONS): Map<string, string> {
  const renames = new Map<string, string>();
  for (const migration of migrations)
    for (const [oldKey, newKey] of Object.entries(migration.renames ?? {})) {
      // A chain (a → b in one release, b → c in a later one) goes straight to its end.
      for (const [earlier, target] of renames) if (target === oldKey) renames.set(earlier, newKey);
      renames.set(oldKey, newKey);
    }
  return renames;
}

/** Parses configuration text into a document that keeps comments (for writing it back). */
export function parseConfigText(text: string): Document {
  return parseDocument(text, { prettyErrors: true, uniqueKeys: true });
}

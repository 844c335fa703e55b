/**
 * Loads the boot configuration: schema defaults < profile (`core.profile`, profiles.ts) <
 * configuration file < HOMEAGENT_* environment.
 *
 * The file is $HOMEAGENT_CONFIG (or `--config`) when given, which must then exist; otherwise
 * /etc/homeagent/config.yaml when it exists. Every problem is collected first so that one run
 * names all of them, one line each: the key, what was expected and what was found. A key the
 * schema does not know is a problem at every level (with the near misses named), except inside
 * `plugin.<name>` of a plugin the kernel does not ship: only the plugin's manifest knows those
 * keys, and manifests are read later, so such sections are kept as given and listed in
 * {@link LoadedConfig.pluginSections} for the plugin host to check (plugin-settings.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import type { TSchema } from '@sinclair/typebox';
import { HomeAgentError } from '../shared/errors.js';
import { didYouMean } from '../shared/near-names.js';
import { type MigratedDocument, migrateConfigDocument, parseConfigText } from './config-migrations.js';
import {
  BUILTIN_DEFINITIONS,
  checkValue,
  coerceText,
  definitionFromLeaf,
  describeProblem,
  ENV_PREFIX,
  NON_SETTING_ENV,
  type SettingChecks,
  withDefaults,
} from './definitions.js';
import { isProfileName, PROFILE_DEFAULTS, profileSource } from './profiles.js';
import { type Config, ConfigSchema, isSettingLeaf } from './schema.js';

export const SYSTEM_CONFIG_FILE = '/etc/homeagent/config.yaml';

/** Where a value came from: `default`, the file's path, or `env:<NAME>`. Later the registry adds `runtime`. */
export type ValueSource = string;

export interface LoadedConfig {
  config: Config;
  /** Source of every setting key (flat dotted keys). */
  sources: Map<string, ValueSource>;
  /** The configuration file that was read, if any. */
  file: string | undefined;
  /** Non-fatal observations (unknown HOMEAGENT_* variables), to be logged once the logger exists. */
  warnings: string[];
  /**
   * Sections `plugin.<name>` of the file for plugins the schema does not know (installed ones, or
   * none): kept unchecked in `config.plugin`, checked against the manifests once they are read.
   */
  pluginSections: string[];
  /** The file's configuration version and what migrating it to this release's changed (in memory). */
  migration?: Omit<MigratedDocument, 'doc'>;
}

export interface LoadConfigOptions {
  env?: NodeJS.ProcessEnv;
  /** Explicit file (from `--config`); wins over $HOMEAGENT_CONFIG. */
  file?: string;
  /** Override for tests; defaults to {@link SYSTEM_CONFIG_FILE}. */
  systemFile?: string;
  /** Checks beyond the schema, per key; a failing one is a configuration problem like any other. */
  checks?: SettingChecks;
}

export function chooseConfigFile(options: LoadConfigOptions): { path: string; required: boolean } | undefined {
  const env = options.env ?? process.env;
  if (options.file) return { path: options.file, required: true };
  const fromEnv = env[`${ENV_PREFIX}CONFIG`];
  if (fromEnv) return { path: fromEnv, required: true };
  const systemFile = options.systemFile ?? SYSTEM_CONFIG_FILE;
  return existsSync(systemFile) ? { path: systemFile, required: false } : undefined;
}

export function loadConfig(options: LoadConfigOptions = {}): LoadedConfig {
  const env = options.env ?? process.env;
  const problems: string[] = [];
  const warnings: string[] = [];
  const config = defaultConfig();
  const sources = new Map<string, ValueSource>(BUILTIN_DEFINITIONS.map((d) => [d.key, 'default']));

  const pluginSections: string[] = [];
  const chosen = chooseConfigFile(options);
  let migration: LoadedConfig['migration'];
  const read = chosen ? readConfigFile(chosen.path) : undefined;
  applyProfile(config, sources, env, read?.values);
  if (chosen && read) {
    const { values: fileValues, migrated } = read;
    migration = migrated;
    if (migrated.changes.length > 0)
      warnings.push(
        `${chosen.path} is written for configuration version ${migrated.from}; read as version ${migrated.to} (run \`homeagent config-migrate\` to write it): ${migrated.changes.join('; ')}`,
      );
    const merge: MergeContext = { file: chosen.path, sources, problems, pluginSections };
    mergeSection(ConfigSchema, fileValues, config as unknown as Record<string, unknown>, '', merge);
  }

  const byEnv = new Map(BUILTIN_DEFINITIONS.map((d) => [d.env, d]));
  for (const [name, text] of Object.entries(env)) {
    if (!name.startsWith(ENV_PREFIX) || text === undefined || NON_SETTING_ENV.has(name)) continue;
    const def = byEnv.get(name);
    if (!def) {
      warnings.push(`${name} is not a HomeAgent setting and is ignored${didYouMean(name, byEnv.keys())}`);
      continue;
    }
    const value = withDefaults(def, coerceText(def, text));
    const problem = checkValue(def, value);
    if (problem) problems.push(`${describeProblem(def.key, problem)} (from environment variable ${name})`);
    else {
      setByKey(config, def.key, value);
      sources.set(def.key, `env:${name}`);
    }
  }

  for (const [key, check] of Object.entries(options.checks ?? {})) {
    const problem = problems.some((p) => p.startsWith(`${key}:`)) ? undefined : check(getByKey(config, key));
    if (problem) problems.push(`${describeProblem(key, problem)} (${describeSource(sources.get(key))})`);
  }

  if (problems.length > 0) {
    throw new HomeAgentError('HA_ERR_CONFIG_INVALID', `invalid configuration:\n${problems.join('\n')}`, {
      details: { problems },
    });
  }
  return { config, sources, file: chosen?.path, warnings, pluginSections, ...(migration && { migration }) };
}

/**
 * Lays the chosen profile's defaults over the schema defaults, before the file and the environment
 * are merged (so theirs win). The profile is read from the same places, the environment first; an
 * unknown name lays nothing down and is reported by the schema check of `core.profile` like any
 * other wrong value (the name and the allowed ones).
 */
const PROFILE_ENV = BUILTIN_DEFINITIONS.find((d) => d.key === 'core.profile')?.env ?? `${ENV_PREFIX}PROFILE`;

function applyProfile(
  config: Config,
  sources: Map<string, ValueSource>,
  env: NodeJS.ProcessEnv,
  fileValues: Record<string, unknown> | undefined,
): void {
  const fromFile = isPlainObject(fileValues?.core) ? fileValues.core.profile : undefined;
  const name = env[PROFILE_ENV] ?? fromFile;
  if (!isProfileName(name)) return;
  for (const [key, value] of Object.entries(PROFILE_DEFAULTS[name])) {
    if (!sources.has(key)) continue; // a plugin section this build does not ship
    setByKey(config, key, structuredClone(value));
    sources.set(key, profileSource(name));
  }
}

function describeSource(source: ValueSource | undefined): string {
  if (source === undefined || source === 'default') return 'the default';
  if (source.startsWith('profile:')) return `the default of profile ${source.slice(8)}`;
  return source.startsWith('env:') ? `from environment variable ${source.slice(4)}` : `in ${source}`;
}

/** The configuration with every setting at its schema default. */
export function defaultConfig(): Config {
  const config = { core: {}, plugin: {} } as Config;
  for (const def of BUILTIN_DEFINITIONS) setByKey(config, def.key, structuredClone(def.default));
  return config;
}

/** The file's values at this release's configuration version (migrated in memory), without `version`. */
function readConfigFile(path: string): { values: Record<string, unknown>; migrated: Omit<MigratedDocument, 'doc'> } {
  const parsed = parseConfigFile(readConfigText(path), path);
  const { doc, ...migrated } = migrateConfigDocument(parsed, path);
  const value: unknown = doc.toJS();
  if (value === null || value === undefined) return { values: {}, migrated };
  const { version: _version, ...values } = value as Record<string, unknown>;
  return { values, migrated };
}

/** The text of a configuration file; HA_ERR_CONFIG_FILE says why it cannot be read. */
export function readConfigText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message;
    throw new HomeAgentError('HA_ERR_CONFIG_FILE', `cannot read configuration file ${path}: ${reason}`, { cause: error });
  }
}

/** Parses configuration text; HA_ERR_CONFIG_FILE names the file's syntax errors or a top level that is no mapping. */
export function parseConfigFile(text: string, path: string): ReturnType<typeof parseConfigText> {
  const doc = parseConfigText(text);
  if (doc.errors.length > 0) {
    const lines = doc.errors.map((e) => `${path}: ${e.message.split('\n')[0]}`);
    throw new HomeAgentError('HA_ERR_CONFIG_FILE', `cannot parse configuration file:\n${lines.join('\n')}`, {
      details: { problems: lines },
    });
  }
  const value: unknown = doc.contents === null ? null : doc.toJS();
  if (value !== null && value !== undefined && (typeof value !== 'object' || Array.isArray(value))) {
    throw new HomeAgentError('HA_ERR_CONFIG_FILE', `${path}: the top level must be a mapping with the sections core and plugin`);
  }
  return doc;
}

/** One setting as a configuration file says it now, and where in the file a part of it is. */
export interface FileSetting {
  /** The value under the key, migrated to this release's version; undefined when the file does not set it. */
  value: unknown;
  /**
   * The 1-based line of the deepest part of `where` the file has: `[0].triggers[1].edge` below the
   * setting's key (a problem's path), '' for the key itself; undefined when the key is not there.
   */
  lineOf(where: string): number | undefined;
}

/**
 * Reads one setting (`core.automations.rules`) from a configuration file again, for a file that
 * changed on disk. HA_ERR_CONFIG_FILE when it cannot be read or parsed (naming the line).
 */
export function readFileSetting(path: string, key: string): FileSetting {
  const text = readConfigText(path);
  const { doc } = migrateConfigDocument(parseConfigFile(text, path), path);
  const keyPath = key.split('.');
  const value: unknown = doc.getIn(keyPath);
  const lineOf = (where: string): number | undefined => {
    const parts = [...keyPath, ...(where.match(/[^.[\]]+/g) ?? []).map((part) => (/^\d+$/.test(part) ? Number(part) : part))];
    // The deepest node the file has on the way: a missing field is reported at its parent.
    for (let n = parts.length; n >= keyPath.length; n--) {
      const node = doc.getIn(parts.slice(0, n), true) as { range?: [number, number, number] } | undefined;
      if (node?.range) return lineAt(text, node.range[0]);
    }
    return undefined;
  };
  return { value: isYamlNode(value) ? (value as { toJSON(): unknown }).toJSON() : value, lineOf };
}

function isYamlNode(value: unknown): boolean {
  return typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON === 'function';
}

/** The 1-based line of a character offset. */
function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

interface MergeContext {
  file: string;
  sources: Map<string, ValueSource>;
  problems: string[];
  pluginSections: string[];
  /** Said of the known keys after an unknown one, before the file (whose settings they are). */
  knownKeysNote?: string;
}

const BUILTIN_BY_KEY = new Map(BUILTIN_DEFINITIONS.map((d) => [d.key, d]));

/**
 * The problems of one section of a file against its schema, one line each, worded as the loader
 * words its own: the plugin host checks an installed plugin's section with it once it has read the
 * plugin's manifest (src/plugin/plugin-settings.ts). `knownKeysNote` says whose keys the known ones are.
 */
export function sectionProblems(
  schema: TSchema,
  values: Readonly<Record<string, unknown>>,
  prefix: string,
  file: string,
  knownKeysNote?: string,
): string[] {
  const merge: MergeContext = { file, sources: new Map(), problems: [], pluginSections: [], ...(knownKeysNote && { knownKeysNote }) };
  mergeSection(schema, values, {}, prefix, merge);
  return merge.problems;
}

/** Walks file values against the schema, merging valid leaves into `target` and collecting problems. */
function mergeSection(
  schema: TSchema,
  values: Readonly<Record<string, unknown>>,
  target: Record<string, unknown>,
  prefix: string,
  merge: MergeContext,
): void {
  const { file, sources, problems } = merge;
  const properties = (schema.properties ?? {}) as Record<string, TSchema>;
  for (const [name, value] of Object.entries(values)) {
    const key = prefix ? `${prefix}.${name}` : name;
    const child = properties[name];
    if (child === undefined) {
      if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
        // A section of a plugin that is not built in: kept as given, checked by the plugin host.
        if (!isPlainObject(value)) problems.push(`${key}: expected a mapping (key: value), found ${JSON.stringify(value)} (in ${file})`);
        else {
          target[name] = value;
          merge.pluginSections.push(name);
        }
        continue;
      }
      const known = Object.keys(properties);
      const note = merge.knownKeysNote ? `${merge.knownKeysNote}; ` : '';
      problems.push(`${key}: unknown key${didYouMean(name, known)}, expected one of: ${known.join(', ')} (${note}in ${file})`);
      continue;
    }
    if (isSettingLeaf(child)) {
      const def = BUILTIN_BY_KEY.get(key) ?? definitionFromLeaf(key, child);
      const filled = withDefaults(def, value);
      const problem = checkValue(def, filled);
      if (problem) problems.push(`${describeProblem(key, problem)} (in ${file})`);
      else {
        target[name] = filled;
        sources.set(key, file);
      }
      continue;
    }
    if (!isPlainObject(value)) {
      problems.push(`${key}: expected a section (a mapping), found ${JSON.stringify(value)} (in ${file})`);
      continue;
    }
    target[name] ??= {};
    mergeSection(child, value, target[name] as Record<string, unknown>, key, merge);
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Sets `core.a.b` inside a nested config object. */
export function setByKey(config: Config | Record<string, unknown>, key: string, value: unknown): void {
  const parts = key.split('.');
  let node = config as Record<string, unknown>;
  for (const part of parts.slice(0, -1)) {
    if (!isPlainObject(node[part])) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[parts[parts.length - 1] as string] = value;
}

/** Reads `core.a.b` from a nested config object. */
export function getByKey(config: Config | Record<string, unknown>, key: string): unknown {
  let node: unknown = config;
  for (const part of key.split('.')) {
    if (!isPlainObject(node)) return undefined;
    node = node[part];
  }
  return node;
}

/**
 * Setting definitions: the flat, typed view of the configuration schema that the loader, the
 * environment mapping, the runtime settings registry, `homeagentctl config` and (later) the
 * settings page all share. Built-in definitions come from {@link ConfigSchema}; plugins add their
 * own under `plugin.<name>.*` at run time.
 */
import { Kind, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { SettingType } from '../api/settings.js';
import { HomeAgentError } from '../shared/errors.js';
import { ConfigSchema, isSettingLeaf } from './schema.js';
import { describeFound as describeFoundValue, firstSchemaProblem } from './schema-problem.js';

export type { SettingType };

export interface SettingDefinition {
  /** Dotted key, e.g. `core.daemon.stop_timeout_ms` or `plugin.cli.max_frame_bytes`. */
  key: string;
  type: SettingType;
  default: unknown;
  description: string;
  /** The description in Chinese, when the schema carries one (see SettingMeta.description_zh). */
  description_zh?: string;
  requires_restart: boolean;
  category: string;
  secret: boolean;
  file_only: boolean;
  minimum?: number;
  maximum?: number;
  min_length?: number;
  max_length?: number;
  pattern?: string;
  enum?: string[];
  /** The widest octal file mode allowed (see SettingMeta.max_mode). */
  max_mode?: number;
  /** Environment variable that sets it (see {@link envNameForKey}). */
  env: string;
  /** The leaf schema values are checked against. */
  schema: TSchema;
}

export const ENV_PREFIX = 'HOMEAGENT_';

/**
 * `core.llm.base_url` → `HOMEAGENT_LLM_BASE_URL`, `plugin.cli.socket_path` →
 * `HOMEAGENT_PLUGIN_CLI_SOCKET_PATH`: the `core.` prefix is dropped, dots become underscores.
 * Collisions are impossible by test (test/unit/config/definitions.test.ts).
 */
export function envNameForKey(key: string): string {
  const withoutCore = key.startsWith('core.') ? key.slice('core.'.length) : key;
  return ENV_PREFIX + withoutCore.replace(/[.-]/g, '_').toUpperCase();
}

/** Environment variables that are not settings but are read by HomeAgent. */
export const NON_SETTING_ENV = new Set([`${ENV_PREFIX}CONFIG`, `${ENV_PREFIX}SOCKET`]);

function settingType(schema: TSchema): SettingType {
  if (schema[Kind] === 'Union' && Array.isArray(schema.anyOf) && schema.anyOf.every((s: TSchema) => s[Kind] === 'Literal')) return 'enum';
  switch (schema.type) {
    case 'string':
    case 'integer':
    case 'number':
    case 'boolean':
    case 'array':
    case 'object':
      return schema.type;
    default:
      throw new HomeAgentError('HA_ERR_SETTINGS_DEFINITION', `unsupported schema for a setting: ${JSON.stringify(schema)}`);
  }
}

/** Builds a definition from a leaf schema carrying the setting keywords. */
export function definitionFromLeaf(key: string, schema: TSchema): SettingDefinition {
  if (!isSettingLeaf(schema)) {
    throw new HomeAgentError('HA_ERR_SETTINGS_DEFINITION', `${key}: a setting needs description and requires_restart`);
  }
  if (!('default' in schema)) throw new HomeAgentError('HA_ERR_SETTINGS_DEFINITION', `${key}: a setting needs a default`);
  const type = settingType(schema);
  const def: SettingDefinition = {
    key,
    type,
    default: schema.default,
    description: schema.description,
    requires_restart: schema.requires_restart,
    category: schema.category,
    secret: schema.secret === true,
    file_only: schema.file_only === true,
    env: envNameForKey(key),
    schema,
  };
  if (typeof schema.description_zh === 'string') def.description_zh = schema.description_zh;
  if (typeof schema.minimum === 'number') def.minimum = schema.minimum;
  if (typeof schema.maximum === 'number') def.maximum = schema.maximum;
  if (typeof schema.minLength === 'number') def.min_length = schema.minLength;
  if (typeof schema.maxLength === 'number') def.max_length = schema.maxLength;
  if (typeof schema.pattern === 'string') def.pattern = schema.pattern;
  if (type === 'enum') def.enum = (schema.anyOf as TSchema[]).map((s) => String(s.const));
  if (schema.max_mode !== undefined) {
    if (type !== 'string' || !/^0?[0-7]{3}$/.test(schema.max_mode)) {
      throw new HomeAgentError('HA_ERR_SETTINGS_DEFINITION', `${key}: max_mode belongs on a string setting and is an octal mode like 0660`);
    }
    def.max_mode = Number.parseInt(schema.max_mode, 8);
  }
  if (!Value.Check(schema, def.default)) {
    throw new HomeAgentError(
      'HA_ERR_SETTINGS_DEFINITION',
      `${key}: the default ${JSON.stringify(def.default)} does not fit its own schema`,
    );
  }
  return def;
}

/** Walks an object schema and returns a definition per setting leaf, in schema order. */
export function definitionsFromSchema(schema: TSchema, prefix = ''): SettingDefinition[] {
  if (isSettingLeaf(schema)) return [definitionFromLeaf(prefix, schema)];
  if (schema.type !== 'object' || typeof schema.properties !== 'object') {
    throw new HomeAgentError('HA_ERR_SETTINGS_DEFINITION', `${prefix || '(root)'}: neither a section nor a setting`);
  }
  const out: SettingDefinition[] = [];
  for (const [name, child] of Object.entries(schema.properties as Record<string, TSchema>)) {
    out.push(...definitionsFromSchema(child, prefix ? `${prefix}.${name}` : name));
  }
  return out;
}

/** The definitions of every built-in setting (core.* and the built-in plugins' plugin.<name>.*). */
export const BUILTIN_DEFINITIONS: readonly SettingDefinition[] = definitionsFromSchema(ConfigSchema);

/** "an integer from 1 to 50", "one of info, debug", ...: the "expected" half of an error line. */
export function describeExpected(def: SettingDefinition): string {
  const range = (unit: string) => {
    if (def.minimum !== undefined && def.maximum !== undefined) return ` from ${def.minimum} to ${def.maximum}${unit}`;
    if (def.minimum !== undefined) return ` of at least ${def.minimum}${unit}`;
    if (def.maximum !== undefined) return ` of at most ${def.maximum}${unit}`;
    return '';
  };
  switch (def.type) {
    case 'integer':
      return `an integer${range('')}`;
    case 'number':
      return `a number${range('')}`;
    case 'boolean':
      return 'true or false';
    case 'enum':
      return `one of ${(def.enum ?? []).join(', ')}`;
    case 'string': {
      if (def.max_mode !== undefined) return `an octal file mode within ${octal(def.max_mode)} (${describeModeBits(def.max_mode)})`;
      const parts = [def.min_length === 1 ? 'a non-empty string' : 'a string'];
      if (def.min_length !== undefined && def.min_length > 1) parts.push(`of at least ${def.min_length} characters`);
      if (def.max_length !== undefined) parts.push(`${parts.length > 1 ? 'and' : 'of'} at most ${def.max_length} characters`);
      if (def.pattern !== undefined) parts.push(`matching ${def.pattern}`);
      return parts.join(' ');
    }
    case 'array':
      return 'a list';
    case 'object':
      return 'a mapping (key: value)';
  }
}

/** A short, safe rendering of a value someone supplied, for error messages. */
export function describeFound(value: unknown, secret = false): string {
  return secret ? 'a value (hidden: secret)' : describeFoundValue(value);
}

/**
 * Fills the defaults inside a list or mapping value (a GPIO pin written as {id, bcm, direction}
 * gets the other fields' defaults), so that a file only has to say what differs. Other values and
 * values of the wrong shape come back unchanged for {@link checkValue} to judge.
 */
export function withDefaults(def: SettingDefinition, value: unknown): unknown {
  if ((def.type !== 'array' && def.type !== 'object') || value === null || typeof value !== 'object') return value;
  // A list given for a mapping (or the other way round) stays as it is, for checkValue to name.
  if (Array.isArray(value) !== (def.type === 'array')) return value;
  return Value.Default(def.schema, structuredClone(value));
}

/**
 * Checks the schema cannot express, per setting key (an automation rule's cron expression, say),
 * handed in by the composition root so that config stays below the layers that know them. A
 * check returns the problem text or undefined; it runs after the schema check passed.
 */
export type SettingChecks = Readonly<Record<string, (value: unknown) => string | undefined>>;

/** `core.x: problem`, or `plugin.gpio.pins[0].bcm: problem` when the problem names a part of the value. */
export function describeProblem(key: string, problem: string): string {
  return problem.startsWith('[') || problem.startsWith('.') ? `${key}${problem}` : `${key}: ${problem}`;
}

/** Checks a value against a definition; returns the problem text or undefined. */
export function checkValue(def: SettingDefinition, value: unknown): string | undefined {
  if (Value.Check(def.schema, value)) return def.max_mode === undefined ? undefined : checkMode(def.max_mode, value as string);
  const expected = `expected ${describeExpected(def)}, found ${describeFound(value, def.secret)}`;
  // A list where a mapping belongs (or the other way round) is wrong as a whole, not in an item.
  if ((def.type === 'object' && Array.isArray(value)) || (def.type === 'array' && !Array.isArray(value))) return expected;
  // Inside a list or mapping, name the item and field that is wrong rather than the whole value
  // (schema-problem.ts: a union's allowed values or kinds rather than "expected union value").
  const first =
    (def.type === 'array' || def.type === 'object') && value !== null && typeof value === 'object'
      ? firstSchemaProblem(def.schema, value, def.secret)
      : undefined;
  if (first === undefined || first.path === '') return expected;
  // `[0].bcm` for a list item's field, `.store` for a mapping's key: appended to the setting's key.
  const where = first.path.replace(/\/(\d+)/g, '[$1]').replace(/\//g, '.');
  return `${where}: ${first.text}`;
}

/** `0660`. */
function octal(mode: number): string {
  return `0${mode.toString(8).padStart(3, '0')}`;
}

const WHO = [
  { name: 'the owner', shift: 6 },
  { name: 'the group', shift: 3 },
  { name: 'others', shift: 0 },
];

/** "read and write for the owner and the group, nothing for others". */
function describeModeBits(mode: number): string {
  const rights = (bits: number) =>
    [bits & 4 ? 'read' : '', bits & 2 ? 'write' : '', bits & 1 ? 'execute' : ''].filter(Boolean).join(' and ') || 'nothing';
  return WHO.map((w) => `${rights((mode >> w.shift) & 7)} for ${w.name}`).join(', ');
}

/** A mode with bits outside `max` is too wide: who would get what they must not. */
function checkMode(max: number, text: string): string | undefined {
  const mode = Number.parseInt(text, 8);
  const extra = mode & ~max;
  if (extra === 0) return undefined;
  const gained = WHO.filter((w) => ((extra >> w.shift) & 7) !== 0).map((w) => w.name);
  return `expected an octal file mode within ${octal(max)} (${describeModeBits(max)}), found ${JSON.stringify(text)}, which gives ${gained.join(' and ')} more (${octal(extra)})`;
}

/**
 * Turns text from the environment or the command line into a typed value. Returns the text itself
 * when it cannot be coerced, so that {@link checkValue} reports it.
 */
export function coerceText(def: SettingDefinition, text: string): unknown {
  const trimmed = text.trim();
  switch (def.type) {
    case 'integer':
    case 'number':
      return trimmed !== '' && Number.isFinite(Number(trimmed)) ? Number(trimmed) : text;
    case 'boolean':
      if (/^(true|1|yes|on)$/i.test(trimmed)) return true;
      if (/^(false|0|no|off)$/i.test(trimmed)) return false;
      return text;
    case 'array':
    case 'object':
      try {
        return JSON.parse(trimmed);
      } catch {
        return text;
      }
    default:
      return text;
  }
}

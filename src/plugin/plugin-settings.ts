/**
 * Turns the `config` block of a plugin manifest into setting definitions under
 * `plugin.<name>.*`, so external plugins' settings are validated, stored, listed and audited like
 * every other setting. Keys the schema already defines (the built-in plugins' sections) are kept.
 *
 * It also checks the configuration file's `plugin.<name>` section of such a plugin, which the
 * loader could not: the loader runs before any manifest is read, so it keeps sections of plugins
 * the schema does not know as given (LoadedConfig.pluginSections), and the plugin host checks them
 * here once it has read the manifests: an unknown key or a value that does not fit is refused like
 * any other configuration problem; a section naming no plugin that is installed is warned about.
 */
import { type TSchema, Type } from '@sinclair/typebox';
import {
  checkValue,
  definitionFromLeaf,
  describeFound,
  describeProblem,
  type SettingDefinition,
  withDefaults,
} from '../config/definitions.js';
import type { LoadedConfig } from '../config/loader.js';
import type { SettingsRegistry } from '../config/settings-registry.js';
import { HomeAgentError } from '../shared/errors.js';
import { didYouMean } from '../shared/near-names.js';
import type { ConfigKey, Manifest } from './manifest.js';

export function pluginSettingDefinitions(manifest: Manifest): SettingDefinition[] {
  return Object.entries(manifest.config ?? {}).map(([key, spec]) => {
    const full = `plugin.${manifest.name}.${key}`;
    try {
      return definitionFromLeaf(full, leafSchema(spec, manifest.name));
    } catch (error) {
      throw new HomeAgentError('HA_ERR_PLUGIN_MANIFEST', `${manifest.name}: config.${key}: ${(error as Error).message}`, { cause: error });
    }
  });
}

/** Defines the manifest's settings that are not defined yet. */
export function defineManifestSettings(settings: SettingsRegistry, manifest: Manifest): void {
  const fresh = pluginSettingDefinitions(manifest).filter((def) => !settings.isDefined(def.key));
  if (fresh.length > 0) settings.define(manifest.name, fresh);
}

/** `plugin.<name>.enabled` is every plugin's, declared or not (the plugin host reads it). */
const ENABLED = 'enabled';

/**
 * The problems of the configuration file's section `plugin.<name>` against the plugin's manifest,
 * one line each, as the loader words them: unknown keys (with the near misses and the known keys)
 * and values that do not fit their declaration.
 */
export function checkPluginSection(manifest: Manifest, section: Readonly<Record<string, unknown>>, file: string): string[] {
  const prefix = `plugin.${manifest.name}.`;
  const definitions = new Map(pluginSettingDefinitions(manifest).map((def) => [def.key.slice(prefix.length), def]));
  const known = definitions.has(ENABLED) ? [...definitions.keys()] : [ENABLED, ...definitions.keys()];
  const problems: string[] = [];
  for (const [name, value] of Object.entries(section)) {
    const key = `${prefix}${name}`;
    const def = definitions.get(name);
    if (def) {
      const problem = checkValue(def, withDefaults(def, value));
      if (problem) problems.push(`${describeProblem(key, problem)} (in ${file})`);
    } else if (name === ENABLED) {
      if (typeof value !== 'boolean') problems.push(`${key}: expected true or false, found ${describeFound(value)} (in ${file})`);
    } else {
      problems.push(
        `${key}: unknown key${didYouMean(name, known)}, expected one of: ${known.join(', ')} (the settings the manifest of ${manifest.name} declares; in ${file})`,
      );
    }
  }
  return problems;
}

/** The file's sections the plugin host checks (PluginHostOptions.configSections), or undefined without a file. */
export function configSectionsOf(
  loaded: LoadedConfig,
): { file: string; sections: ReadonlyMap<string, Readonly<Record<string, unknown>>> } | undefined {
  if (loaded.file === undefined) return undefined;
  const plugin = loaded.config.plugin as Record<string, Record<string, unknown> | undefined>;
  return { file: loaded.file, sections: new Map(loaded.pluginSections.map((name) => [name, plugin[name] ?? {}])) };
}

/** The warning for a section `plugin.<name>` of the file when no plugin of that name is installed. */
export function unusedSectionWarning(name: string, installed: readonly string[], file: string): string {
  return `plugin.${name} in ${file}: no plugin named ${name} is installed, so the section is not used${didYouMean(name, installed)}; it is checked when the plugin is installed`;
}

function leafSchema(spec: ConfigKey, plugin: string): TSchema {
  const meta = {
    default: spec.default,
    description: spec.description,
    requires_restart: spec.requires_restart ?? false,
    category: `plugin.${plugin}`,
    ...(spec.secret ? { secret: true } : {}),
  };
  const bounds = {
    ...(spec.minimum === undefined ? {} : { minimum: spec.minimum }),
    ...(spec.maximum === undefined ? {} : { maximum: spec.maximum }),
  };
  switch (spec.type) {
    case 'string':
      return spec.enum
        ? Type.Union(
            spec.enum.map((v) => Type.Literal(v)),
            meta,
          )
        : Type.String(meta);
    case 'integer':
      return Type.Integer({ ...meta, ...bounds });
    case 'number':
      return Type.Number({ ...meta, ...bounds });
    case 'boolean':
      return Type.Boolean(meta);
    case 'array':
      return Type.Array(Type.Unknown(), meta);
    case 'object':
      return Type.Record(Type.String(), Type.Unknown(), meta);
  }
}

/**
 * Turns the `config` block of a plugin manifest into the plugin's settings section: a TypeBox
 * schema like the ones the built-in plugins write beside their code (plugins/<name>/settings-schema.ts),
 * read by the same code from there on. So external plugins' settings under `plugin.<name>.*` are
 * validated, stored, listed and audited like every other setting. Keys the schema already defines
 * (the built-in plugins' sections) are kept.
 *
 * It also checks the configuration file's `plugin.<name>` section of such a plugin, which the
 * loader could not: the loader runs before any manifest is read, so it keeps sections of plugins
 * the schema does not know as given (LoadedConfig.pluginSections), and the plugin host checks them
 * here, with the loader's own section check, once it has read the manifests: an unknown key or a
 * value that does not fit is refused like any other configuration problem; a section naming no
 * plugin that is installed is warned about.
 */
import { type TObject, type TSchema, Type } from '@sinclair/typebox';
import { definitionsFromSchema, type SettingDefinition } from '../config/definitions.js';
import { type LoadedConfig, sectionProblems } from '../config/loader.js';
import { pluginEnabled } from '../config/setting-schema.js';
import type { SettingsRegistry } from '../config/settings-registry.js';
import { HomeAgentError } from '../shared/errors.js';
import { didYouMean } from '../shared/near-names.js';
import type { ConfigKey, Manifest } from './manifest.js';

/** `plugin.<name>.enabled` is every plugin's, declared or not (the plugin host reads it). */
const ENABLED = 'enabled';

/** The manifest's settings as a section schema, with `enabled` as every section has it. */
export function manifestSettingsSchema(manifest: Manifest): TObject {
  const properties: Record<string, TSchema> = { [ENABLED]: pluginEnabled(manifest.name) };
  for (const [key, spec] of Object.entries(manifest.config ?? {})) properties[key] = leafSchema(spec, manifest.name);
  return Type.Object(properties, { additionalProperties: false, default: {} });
}

/** The definitions of the settings the manifest declares (`enabled` only when it declares it). */
export function pluginSettingDefinitions(manifest: Manifest): SettingDefinition[] {
  const declared = manifest.config ?? {};
  try {
    return definitionsFromSchema(manifestSettingsSchema(manifest), `plugin.${manifest.name}`).filter(
      (def) => def.key !== `plugin.${manifest.name}.${ENABLED}` || ENABLED in declared,
    );
  } catch (error) {
    throw new HomeAgentError('HA_ERR_PLUGIN_MANIFEST', `${manifest.name}: config: ${(error as Error).message}`, { cause: error });
  }
}

/** Defines the manifest's settings that are not defined yet. */
export function defineManifestSettings(settings: SettingsRegistry, manifest: Manifest): void {
  const fresh = pluginSettingDefinitions(manifest).filter((def) => !settings.isDefined(def.key));
  if (fresh.length > 0) settings.define(manifest.name, fresh);
}

/**
 * The problems of the configuration file's section `plugin.<name>` against the plugin's manifest,
 * one line each, as the loader words them: unknown keys (with the near misses and the known keys)
 * and values that do not fit their declaration.
 */
export function checkPluginSection(manifest: Manifest, section: Readonly<Record<string, unknown>>, file: string): string[] {
  return sectionProblems(
    manifestSettingsSchema(manifest),
    section,
    `plugin.${manifest.name}`,
    file,
    `the settings the manifest of ${manifest.name} declares`,
  );
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
    ...(spec.description_zh === undefined ? {} : { description_zh: spec.description_zh }),
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

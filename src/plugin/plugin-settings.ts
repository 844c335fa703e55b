/**
 * Turns the `config` block of a plugin manifest into setting definitions under
 * `plugin.<name>.*`, so external plugins' settings are validated, stored, listed and audited like
 * every other setting. Keys the schema already defines (the built-in plugins' sections) are kept.
 */
import { type TSchema, Type } from '@sinclair/typebox';
import { definitionFromLeaf, type SettingDefinition } from '../config/definitions.js';
import type { SettingsRegistry } from '../config/settings-registry.js';
import { HomeAgentError } from '../shared/errors.js';
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

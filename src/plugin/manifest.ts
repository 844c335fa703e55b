/**
 * The plugin manifest (`plugin.json`), validated before any plugin code is loaded. Every problem
 * names the field (`/permissions/fs_paths/0/path: ...`). Skills may ship without one: their
 * manifest is derived from the SKILL.md front matter ({@link skillManifest}).
 */
import { readFileSync } from 'node:fs';
import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import semver from 'semver';
import { PLUGIN_KINDS, type PluginKind } from '../api/plugins.js';
import { describeError, HomeAgentError } from '../shared/errors.js';
import { VERSION } from '../shared/version.js';

export { PLUGIN_KINDS, type PluginKind };

/** Plugin and skill names: lowercase letters, digits and `-_.`, 1-64 characters, not starting with a dot. */
export const PLUGIN_NAME = /^[a-z0-9_-][a-z0-9_.-]{0,63}$/;

const FsPathSchema = Type.Object(
  {
    /** Absolute, or starting with `${data_dir}` (the daemon's data directory) or `${plugin_data}`. */
    path: Type.String({ minLength: 1, maxLength: 4096, pattern: '^(/|\\$\\{(data_dir|plugin_data)\\})[^\\u0000-\\u001f]*$' }),
    mode: Type.Union([Type.Literal('ro'), Type.Literal('rw')], { default: 'ro' }),
  },
  { additionalProperties: false },
);

export const PermissionsSchema = Type.Object(
  {
    /**
     * Tool names the plugin may register (`*` matches any run of name characters). Absent means
     * names starting with the plugin's name and `_` (`weather_*` for the weather plugin).
     */
    tools: Type.Optional(Type.Array(Type.String({ pattern: '^[a-zA-Z0-9_*-]{1,64}$' }), { maxItems: 256 })),
    /**
     * BCM GPIO lines the plugin may drive or read. Reserved: the SDK gives plugins no GPIO access
     * (devices reach them as entities), so today it grants nothing; accepted so manifests stay valid.
     */
    gpio_pins: Type.Optional(Type.Array(Type.Integer({ minimum: 0, maximum: 1023 }), { maxItems: 64 })),
    /** MQTT topic filters the plugin may use. Reserved like gpio_pins: the SDK has no MQTT API, so it grants nothing yet. */
    mqtt_topics: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { maxItems: 64 })),
    /** Network access: false (default), true, or a list of host names. */
    network: Type.Optional(
      Type.Union([Type.Boolean(), Type.Array(Type.String({ pattern: '^[A-Za-z0-9.-]{1,253}(:\\d{1,5})?$' }), { maxItems: 64 })]),
    ),
    /** Paths outside its own folders the plugin may read (ro) or write (rw). */
    fs_paths: Type.Optional(Type.Array(FsPathSchema, { maxItems: 32 })),
  },
  { additionalProperties: false },
);
export type Permissions = Static<typeof PermissionsSchema>;

const SETTING_TYPES = ['string', 'integer', 'number', 'boolean', 'array', 'object'] as const;

/** One key of a plugin's settings namespace `plugin.<name>.<key>`. */
export const ConfigKeySchema = Type.Object(
  {
    type: Type.Union(SETTING_TYPES.map((t) => Type.Literal(t))),
    default: Type.Unknown(),
    description: Type.String({ minLength: 1, maxLength: 500 }),
    /** The description in Chinese, for the settings page in Chinese; English is shown without it. */
    description_zh: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
    minimum: Type.Optional(Type.Number()),
    maximum: Type.Optional(Type.Number()),
    enum: Type.Optional(Type.Array(Type.String(), { minItems: 1, maxItems: 100 })),
    secret: Type.Optional(Type.Boolean()),
    requires_restart: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type ConfigKey = Static<typeof ConfigKeySchema>;

export const ManifestSchema = Type.Object(
  {
    name: Type.String({ pattern: PLUGIN_NAME.source, description: 'Unique plugin name; also its settings namespace plugin.<name>.*' }),
    version: Type.String({ pattern: '^\\d+\\.\\d+\\.\\d+([-+][0-9A-Za-z.-]+)?$' }),
    description: Type.String({ minLength: 1, maxLength: 500 }),
    /** Semver range of HomeAgent versions the plugin works with, e.g. `>=0.1.0 <1`. */
    engine: Type.String({ minLength: 1, maxLength: 100 }),
    kind: Type.Union(PLUGIN_KINDS.map((k) => Type.Literal(k))),
    /** Entry file relative to the manifest: index.js (builtin, process), main.lua (lua), SKILL.md (skill). */
    entry: Type.String({ pattern: '^(?!/)(?!.*\\.\\.)[A-Za-z0-9_./-]+\\.(js|mjs|lua|md)$' }),
    author: Type.Optional(Type.String({ maxLength: 200 })),
    license: Type.Optional(Type.String({ maxLength: 100 })),
    homepage: Type.Optional(Type.String({ maxLength: 500 })),
    permissions: Type.Optional(PermissionsSchema),
    /** The plugin's settings, defined under plugin.<name>.* when it loads. */
    config: Type.Optional(Type.Record(Type.String({ pattern: '^[a-z][a-z0-9_]{0,63}$' }), ConfigKeySchema)),
  },
  { additionalProperties: false },
);

export type Manifest = Static<typeof ManifestSchema>;

const ENTRY_EXTENSIONS: Record<PluginKind, RegExp> = {
  builtin: /\.(js|mjs)$/,
  process: /\.(js|mjs)$/,
  lua: /\.lua$/,
  skill: /\.md$/,
};

/** Checks a parsed manifest; throws HA_ERR_PLUGIN_MANIFEST naming every problem (at most 5) and `where`. */
export function checkManifest(data: unknown, where: string): Manifest {
  if (!Value.Check(ManifestSchema, data)) {
    const problems = [...Value.Errors(ManifestSchema, data)].slice(0, 5).map((e) => `${e.path || '/'}: ${e.message}`);
    throw new HomeAgentError('HA_ERR_PLUGIN_MANIFEST', `${where}: ${problems.join('; ')}`);
  }
  const problems: string[] = [];
  if (semver.validRange(data.engine) === null) problems.push(`/engine: ${JSON.stringify(data.engine)} is not a semver range`);
  if (!ENTRY_EXTENSIONS[data.kind].test(data.entry)) problems.push(`/entry: ${data.entry} is not a valid entry for a ${data.kind} plugin`);
  for (const [key, def] of Object.entries(data.config ?? {})) {
    if (def.default === undefined) problems.push(`/config/${key}/default: a default is required`);
  }
  if (problems.length > 0) throw new HomeAgentError('HA_ERR_PLUGIN_MANIFEST', `${where}: ${problems.join('; ')}`);
  return data;
}

export function readManifest(file: string): Manifest {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new HomeAgentError('HA_ERR_PLUGIN_MANIFEST', `${file}: ${describeError(error)}`, { cause: error });
  }
  return checkManifest(data, file);
}

/** Throws HA_ERR_PLUGIN_LOAD unless this HomeAgent satisfies the manifest's engine range. */
export function checkEngine(manifest: Manifest, version: string = VERSION): void {
  if (!semver.satisfies(version, manifest.engine, { includePrerelease: true })) {
    throw new HomeAgentError('HA_ERR_PLUGIN_LOAD', `${manifest.name} needs HomeAgent ${manifest.engine}; this is ${version}`);
  }
}

/** The tool-name patterns a plugin may register (its declared ones, else `<name>_*`). */
export function allowedToolPatterns(manifest: Manifest): string[] {
  return manifest.permissions?.tools ?? [`${manifest.name.replace(/[.-]/g, '_')}_*`];
}

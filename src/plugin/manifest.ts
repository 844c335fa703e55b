/** The plugin manifest (`plugin.json`), validated before any plugin code is loaded. */
import { readFileSync } from 'node:fs';
import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { describeError, HomeAgentError } from '../shared/errors.js';

export const ManifestSchema = Type.Object(
  {
    name: Type.String({
      pattern: '^[a-z][a-z0-9_-]{0,31}$',
      description: 'Unique plugin name; also its settings namespace plugin.<name>.*',
    }),
    version: Type.String({ pattern: '^\\d+\\.\\d+\\.\\d+([-+][0-9A-Za-z.-]+)?$' }),
    description: Type.String({ minLength: 1, maxLength: 500 }),
    /** Entry module relative to the manifest; for built-ins the compiled file. */
    entry: Type.String({ pattern: '^(?!/)(?!.*\\.\\.)[A-Za-z0-9_./-]+\\.(js|mjs)$' }),
    /** Oldest HomeAgent version the plugin works with. */
    min_version: Type.Optional(Type.String({ pattern: '^\\d+\\.\\d+\\.\\d+$' })),
  },
  { additionalProperties: false },
);

export type Manifest = Static<typeof ManifestSchema>;

export function readManifest(file: string): Manifest {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new HomeAgentError('HA_ERR_PLUGIN_MANIFEST', `${file}: ${describeError(error)}`, { cause: error });
  }
  if (!Value.Check(ManifestSchema, data)) {
    const problems = [...Value.Errors(ManifestSchema, data)].slice(0, 5).map((e) => `${e.path || '/'}: ${e.message}`);
    throw new HomeAgentError('HA_ERR_PLUGIN_MANIFEST', `${file}: ${problems.join('; ')}`);
  }
  return data;
}

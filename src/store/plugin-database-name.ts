/**
 * How a built-in plugin's own database is named and where its file lives, in one place: the daemon
 * registers it under this name (status, `homeagentctl backup --db NAME`) and the offline
 * `homeagent restore FILE --db NAME` resolves the same name back to the file without the plugin
 * running. `<plugin>.<database>` says whose it is and cannot collide with a kernel database (their
 * names have no dot); the database part has no dot either, so the last dot splits the two.
 */
import { join } from 'node:path';

/** The database part: what a plugin passes to `ctx.database.open({ name })`. */
export const PLUGIN_DATABASE_NAME = /^[a-z][a-z0-9_]{0,31}$/;

/**
 * The plugin part, as manifest.ts's PLUGIN_NAME (repeated here so src/store does not depend on the
 * plugin loader), minus the names that are path steps.
 */
const PLUGIN_PART = /^[a-z0-9_-][a-z0-9_.-]{0,63}$/;

export function pluginDatabaseName(plugin: string, database: string): string {
  return `${plugin}.${database}`;
}

/** The file of a plugin database: `<database>.db` in the plugin's private folder (`<data>/plugin-data/<plugin>`). */
export function pluginDatabaseFile(pluginData: string, database: string): string {
  return join(pluginData, `${database}.db`);
}

/** `seq.sequences` -> { plugin: 'seq', database: 'sequences' }; undefined when it is not such a name. */
export function parsePluginDatabaseName(name: string): { plugin: string; database: string } | undefined {
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return undefined;
  const plugin = name.slice(0, dot);
  const database = name.slice(dot + 1);
  if (!PLUGIN_PART.test(plugin) || plugin === '.' || plugin === '..' || !PLUGIN_DATABASE_NAME.test(database)) return undefined;
  return { plugin, database };
}

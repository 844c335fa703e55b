/**
 * How the host runs one plugin kind. A runtime turns a validated manifest, the plugin's folder and
 * the context the host built for it into a {@link PluginInstance}; the host then drives every kind
 * through the same lifecycle (start with a timeout, stop, reload, quarantine). Built-in plugins are
 * imported in-process; out-of-process, Lua and skill plugins have their own runtimes.
 */
import type { Config } from '../config/schema.js';
import type { Logger } from '../log/logger.js';
import type { PluginContext, PluginInstance } from '../sdk/plugin.js';
import type { Manifest } from './manifest.js';

export type PluginsLimits = Config['core']['plugins'];

/** States a running plugin can move to on its own (a process crashing and coming back, or giving up). */
export type ReportedState = 'running' | 'restarting' | 'failed';

export interface RuntimeContext {
  manifest: Manifest;
  /** Real path of the plugin's folder (its manifest and entry live here). */
  dir: string;
  /** The context the host built for this plugin (restricted for external plugins). */
  context: PluginContext;
  /** core.plugins.*, read afresh on each use so run-time changes apply. */
  limits: () => PluginsLimits;
  /** The daemon's data directory, for `${data_dir}` in manifest fs_paths. */
  dataDir: string;
  log: Logger;
  /** The plugin's state changed without the host asking (crash, restart, gave up after too many crashes). */
  reportState(state: ReportedState, detail?: string): void;
}

export type PluginRuntime = (context: RuntimeContext) => PluginInstance | Promise<PluginInstance>;

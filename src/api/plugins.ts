/**
 * The wire shapes of the plugin host's control methods (plugins.*): each plugin's kind, origin,
 * state and tools, as `homeagentctl plugins list`, status and the web page read them.
 */

export const PLUGIN_KINDS = ['builtin', 'process', 'lua', 'skill'] as const;

export type PluginKind = (typeof PLUGIN_KINDS)[number];

export type PluginState = 'disabled' | 'starting' | 'running' | 'restarting' | 'stopping' | 'stopped' | 'quarantined';

export type PluginOrigin = 'shipped' | 'installed';

export interface PluginStatus {
  name: string;
  version: string;
  description: string;
  kind: PluginKind;
  origin: PluginOrigin;
  state: PluginState;
  enabled: boolean;
  /** Why it is quarantined (or the last problem). */
  error?: string;
  tools: string[];
  dir: string;
}

/** The answer of `plugins.list`: the plugins found, and the folders that could not be read as one. */
export interface PluginsListResult {
  plugins: PluginStatus[];
  rejected: Array<{ dir: string; error: string }>;
}

/**
 * Which of the daemon's folders and files an in-process command must not reach (path-guard.ts),
 * learnt from the daemon itself on every run, so a changed setting counts at once:
 *
 * - the data folder (the plugin's data folder is `<data>/plugin-data/<name>`), with the databases,
 *   backups, plugin data and the web page's credentials; the runtime folder (control socket);
 * - the configuration: /etc/homeagent, $HOMEAGENT_CONFIG, and every file a setting's value came
 *   from (config.list names it as the setting's source);
 * - every folder or file a setting names (a key ending in _dir, _file or _path: backup_dir,
 *   tracker state_dir, the MQTT TLS key_file, ...), resolved as the daemon resolves them, against
 *   its working directory. The cmd plugin's own settings are not among them.
 *
 * When the daemon cannot say (config.list fails), nothing runs in-process: guessing would let a
 * moved backup folder through. A host that has no config.list at all (test hosts) has no
 * settings either; the folders above are then all there is.
 */
import { resolve } from 'node:path';
import { type PluginContext, ToolError } from '../../src/sdk/index.js';
import { canonicalPath, type ProtectedRoot, type ProtectedTrees } from './path-guard.js';

export const SYSTEM_CONFIG_DIR = '/etc/homeagent';

interface SettingViewLike {
  key: string;
  value: unknown;
  source: string;
}

export async function collectProtectedTrees(ctx: PluginContext): Promise<ProtectedTrees> {
  let views: SettingViewLike[];
  try {
    views = (await ctx.control.call('config.list', {}, { actor: `plugin:${ctx.name}` })) as SettingViewLike[];
    if (!Array.isArray(views)) throw new Error('config.list did not answer a list');
  } catch (error) {
    // A host without the method (a test host, no settings registry of its own) has no settings to
    // name other folders: the folders the plugin knows are all there is. Any other failure: none.
    if ((error as { code?: unknown }).code === 'HA_ERR_RPC_UNKNOWN_METHOD') views = [];
    else
      throw new ToolError({
        reason: 'unavailable',
        detail: `HA_ERR_CMD_FAILED: the daemon's protected folders could not be listed (config.list: ${error instanceof Error ? error.message : String(error)}), so nothing runs in-process`,
      });
  }
  const cwd = process.cwd();
  const roots: ProtectedRoot[] = [
    { path: resolve(ctx.paths.data, '..', '..'), what: "the daemon's data folder" },
    { path: ctx.paths.runtime, what: "the daemon's runtime folder" },
    { path: SYSTEM_CONFIG_DIR, what: 'the configuration folder' },
  ];
  const fromEnv = process.env.HOMEAGENT_CONFIG;
  if (fromEnv) roots.push({ path: resolve(cwd, fromEnv), what: 'the configuration file' });
  const own = `plugin.${ctx.name}.`;
  for (const view of views) {
    const source = view.source;
    if (typeof source === 'string' && source !== 'default' && source !== 'runtime' && !source.startsWith('env:')) {
      roots.push({ path: resolve(cwd, source), what: 'the configuration file' });
    }
    if (/(?:_dir|_file|_path)$/.test(view.key) && !view.key.startsWith(own) && typeof view.value === 'string' && view.value !== '') {
      roots.push({ path: resolve(cwd, view.value), what: `the folder or file of ${view.key}` });
    }
  }
  const seen = new Set<string>();
  const canonical: ProtectedRoot[] = [];
  for (const root of roots) {
    const path = canonicalPath(root.path, '/');
    if (seen.has(path)) continue;
    seen.add(path);
    canonical.push({ path, what: root.what });
  }
  return {
    roots: canonical,
    exempt: canonicalPath(ctx.paths.data, '/'),
    pid: process.pid,
    uid: process.getuid?.() ?? -1,
  };
}

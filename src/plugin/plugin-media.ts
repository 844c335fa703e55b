/**
 * The media store as one plugin sees it (ctx.media). Built-in plugins store and read. External
 * plugins (process, Lua) get neither, unlike the read-only memory and knowledge library: the store
 * holds pictures taken inside the home (more private than a knowledge entry, and any digest opens
 * any of them), and its calls are synchronous, which the process boundary cannot serve. Both calls
 * throw HA_ERR_PLUGIN_PERMISSION for them, here and in the process plugin's child runtime alike.
 */
import type { PluginMedia, StoredMediaInfo } from '../sdk/plugin.js';
import { HomeAgentError } from '../shared/errors.js';
import type { StoredMedia } from '../store/media-store.js';

/** The media store as the host gets it (MediaStore). */
export interface HostMedia {
  put(data: Uint8Array): StoredMedia;
  read(digest: string): Buffer | undefined;
}

export function pluginMedia(store: HostMedia | undefined, plugin: { name: string; external: boolean }): PluginMedia {
  const need = (): HostMedia => {
    if (!store) throw new HomeAgentError('HA_ERR_UNAVAILABLE', 'this daemon has no media store');
    return store;
  };
  if (plugin.external) return deniedMedia(plugin.name);
  return {
    put: (data) => {
      if (!(data instanceof Uint8Array)) throw new HomeAgentError('HA_ERR_MEDIA_TYPE', 'media must be given as bytes (a Uint8Array)');
      const { digest, mime, kind, bytes } = need().put(data);
      const info: StoredMediaInfo = { digest, mime, kind, bytes };
      return info;
    },
    read: (digest) => {
      const bytes = typeof digest === 'string' ? need().read(digest.toLowerCase()) : undefined;
      if (!bytes) throw new HomeAgentError('HA_ERR_MEDIA_NOT_FOUND', `the media store has no file ${String(digest).slice(0, 80)}`);
      return bytes;
    },
  };
}

/** The media of an external plugin: every call refused (see the header). */
export function deniedMedia(name: string): PluginMedia {
  const deny = (what: string): never => {
    throw new HomeAgentError('HA_ERR_PLUGIN_PERMISSION', `plugin ${name} (external) may not ${what} the media store`);
  };
  return { put: () => deny('write to'), read: () => deny('read from') };
}

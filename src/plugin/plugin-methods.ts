/**
 * Control methods for plugins (`plugins.list`, `plugins.enable`, ...), used by `homeagentctl
 * plugins` and the pluginmgr plugin's tools. Every change is audited by the host with its actor.
 */

import { isAbsolute } from 'node:path';
import { Type } from '@sinclair/typebox';
import type { PluginsListResult } from '../api/plugins.js';
import { HomeAgentError } from '../shared/errors.js';
import type { ChangeOrigin } from '../tracker/change-types.js';
import type { ControlRegistry } from './control-registry.js';
import type { PluginHost } from './plugin-host.js';

/** The change tracker's track() (src/tracker/change-tracker.ts): records what `run` did to the plugins tree. */
export type TrackChange = <T>(origin: ChangeOrigin, run: () => Promise<T>, options?: { activate?: boolean }) => Promise<T>;

const Name = Type.String({ minLength: 1, maxLength: 64 });

/**
 * With a tracker, install and uninstall are recorded as change sets: install only unpacks and the
 * tracker starts the plugin (so a version that fails to load is held against the change).
 */
export function registerPluginMethods(control: ControlRegistry, plugins: PluginHost, track?: TrackChange): void {
  control.register({
    name: 'plugins.list',
    description:
      'Every plugin with its kind, origin, state (running, disabled, quarantined, ...), tools and problem; and folders refused before loading.',
    params: Type.Object({}),
    handler: (): PluginsListResult => ({ plugins: plugins.list(), rejected: plugins.rejected() }),
  });
  control.register({
    name: 'plugins.enable',
    description: 'Enable a plugin (remembered across restarts) and start it.',
    params: Type.Object({ name: Name }),
    handler: ({ name }, caller) => plugins.enable(name, caller.actor),
  });
  control.register({
    name: 'plugins.disable',
    description: 'Disable a plugin (remembered across restarts) and stop it.',
    params: Type.Object({ name: Name }),
    handler: ({ name }, caller) => plugins.disable(name, caller.actor),
  });
  control.register({
    name: 'plugins.reload',
    description: 'Hot-reload one plugin (the running version stays if the new one fails), or all of them and pick up new folders.',
    params: Type.Object({ name: Type.Optional(Name) }),
    handler: async ({ name }, caller) => ({ plugins: await plugins.reload(name, caller.actor) }),
  });
  control.register({
    name: 'plugins.install',
    description: 'Install or upgrade a plugin from a .tgz or .zip archive on this machine (absolute path) and start it.',
    params: Type.Object({ file: Type.String({ minLength: 1, maxLength: 4096 }) }),
    handler: ({ file }, caller) => {
      if (!isAbsolute(file))
        throw new HomeAgentError('HA_ERR_RPC_INVALID_PARAMS', `plugins.install: file must be an absolute path, got ${file}`);
      if (!track) return plugins.install(file, caller.actor);
      return track({ actor: caller.actor, tool: 'plugins.install' }, async () => {
        const placed = await plugins.install(file, caller.actor, { start: false });
        return placed.name;
      }).then((name) => plugins.list().find((p) => p.name === name) ?? { name });
    },
  });
  control.register({
    name: 'plugins.uninstall',
    description: 'Stop an installed plugin and remove its files (its private data folder is kept).',
    params: Type.Object({ name: Name }),
    handler: async ({ name }, caller) => {
      const uninstall = () => plugins.uninstall(name, caller.actor);
      await (track ? track({ actor: caller.actor, tool: 'plugins.uninstall' }, uninstall, { activate: false }) : uninstall());
      return { name, uninstalled: true };
    },
  });
  control.register({
    name: 'plugins.health',
    description: 'Health ping of every plugin (or one): ok and a detail.',
    params: Type.Object({ name: Type.Optional(Name) }),
    handler: async ({ name }) => ({ plugins: await plugins.health(name) }),
  });
}

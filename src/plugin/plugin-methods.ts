/**
 * Control methods for plugins (`plugins.list`, `plugins.enable`, ...), used by `homeagentctl
 * plugins` and the pluginmgr plugin's tools. Every change is audited by the host with its actor.
 */
import { isAbsolute } from 'node:path';
import { Type } from '@sinclair/typebox';
import { HomeAgentError } from '../shared/errors.js';
import type { ControlRegistry } from './control-registry.js';
import type { PluginHost } from './plugin-host.js';

const Name = Type.String({ minLength: 1, maxLength: 64 });

export function registerPluginMethods(control: ControlRegistry, plugins: PluginHost): void {
  control.register({
    name: 'plugins.list',
    description:
      'Every plugin with its kind, origin, state (running, disabled, quarantined, ...), tools and problem; and folders refused before loading.',
    params: Type.Object({}),
    handler: () => ({ plugins: plugins.list(), rejected: plugins.rejected() }),
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
      return plugins.install(file, caller.actor);
    },
  });
  control.register({
    name: 'plugins.uninstall',
    description: 'Stop an installed plugin and remove its files (its private data folder is kept).',
    params: Type.Object({ name: Name }),
    handler: async ({ name }, caller) => {
      await plugins.uninstall(name, caller.actor);
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

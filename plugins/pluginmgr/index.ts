/**
 * pluginmgr: the plugin control methods as tools for the agent. Listing is read-only; enabling
 * and reloading act; disabling is dangerous (turning off the CLI or a chat channel can cut the
 * owner off), so it waits for the owner's confirmation like any dangerous tool.
 */
import { definePlugin, type PluginContext, type ToolTier } from '../../src/sdk/index.js';

const NAME = { type: 'string', minLength: 1, maxLength: 64, description: 'The plugin name, as plugin_list shows it.' };

export default definePlugin((ctx: PluginContext) => {
  const call = (method: string, params: Record<string, unknown>) => ctx.control.call(method, params, { actor: `plugin:${ctx.name}` });
  const tool = (name: string, description: string, tier: ToolTier, method: string, withName: 'required' | 'optional' | 'none') => ({
    name,
    description,
    tier,
    parameters: {
      type: 'object',
      properties: withName === 'none' ? {} : { name: NAME },
      ...(withName === 'required' ? { required: ['name'] } : {}),
      additionalProperties: false,
    },
    execute: (args: { name?: string }) => call(method, args.name === undefined ? {} : { name: args.name }),
  });
  return {
    async start() {
      ctx.tools.register({
        ...tool(
          'plugin_list',
          'List the plugins: kind, origin, state (running, disabled, quarantined with the reason) and their tools.',
          'read',
          'plugins.list',
          'none',
        ),
        parallel_safe: true,
      });
      ctx.tools.register(
        tool('plugin_enable', 'Enable a plugin and start it (remembered across restarts).', 'act', 'plugins.enable', 'required'),
      );
      ctx.tools.register(
        tool('plugin_disable', 'Disable a plugin and stop it (remembered across restarts).', 'dangerous', 'plugins.disable', 'required'),
      );
      ctx.tools.register(
        tool(
          'plugin_reload',
          'Hot-reload a plugin after its files changed (the running version stays if the new one fails); without a name, all plugins.',
          'act',
          'plugins.reload',
          'optional',
        ),
      );
    },
    async stop() {},
  };
});

/**
 * The settings of the pluginmgr plugin, `plugin.pluginmgr.*`: defaults, bounds, descriptions and
 * `requires_restart` for each. The configuration schema composes it (src/config/plugin-sections.ts);
 * the plugin reads its values through `PluginSettings<PluginmgrSettings>`.
 */
import { type Static, Type } from '@sinclair/typebox';
import { pluginEnabled } from '../../src/sdk/settings.js';

export const settingsSchema = Type.Object({ enabled: pluginEnabled('pluginmgr') }, { additionalProperties: false, default: {} });

export type PluginmgrSettings = Static<typeof settingsSchema>;

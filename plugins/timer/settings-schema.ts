/**
 * The settings of the timer plugin, `plugin.timer.*`: defaults, bounds, descriptions and
 * `requires_restart` for each. The configuration schema composes it (src/config/plugin-sections.ts);
 * the plugin reads its values through `PluginSettings<TimerSettings>`.
 */
import { type Static, Type } from '@sinclair/typebox';
import { pluginEnabled, pluginMeta } from '../../src/sdk/settings.js';

export const settingsSchema = Type.Object(
  {
    enabled: pluginEnabled('timer'),
    max_duration_s: Type.Integer({
      default: 86400,
      minimum: 1,
      maximum: 86400,
      ...pluginMeta('timer', 'Longest timer timer_set accepts, in seconds (at most 24 h).', {
        description_zh: 'timer_set 接受的最长定时，单位秒（最多 24 h）。',
      }),
    }),
    max_timers: Type.Integer({
      default: 100,
      minimum: 1,
      maximum: 10000,
      ...pluginMeta('timer', 'Timers that may be pending at once.', { description_zh: '同时最多有几个待响的定时器。' }),
    }),
  },
  { additionalProperties: false, default: {} },
);

export type TimerSettings = Static<typeof settingsSchema>;

/**
 * The settings of the homeassistant plugin, `plugin.homeassistant.*`: defaults, bounds, descriptions and
 * `requires_restart` for each. The configuration schema composes it (src/config/plugin-sections.ts);
 * the plugin reads its values through `PluginSettings<HomeassistantSettings>`.
 */
import { type Static, Type } from '@sinclair/typebox';
import { pluginMeta, type SettingMeta, settingMeta } from '../../src/sdk/settings.js';

const homeassistantMeta = (description: string, extra: Partial<SettingMeta> = {}) => pluginMeta('homeassistant', description, extra);
const HaPattern = Type.String({ minLength: 1, maxLength: 255, pattern: '^[a-z0-9_]+(\\.([a-z0-9_]+|\\*))?$' });

export const settingsSchema = Type.Object(
  {
    enabled: Type.Boolean({
      default: false,
      ...settingMeta({
        description:
          "Load the homeassistant plugin at start: Home Assistant's entities (those exposed to Assist, or listed in include) become HomeAgent entities over its WebSocket API.",
        requires_restart: true,
        category: 'plugin.homeassistant',
      }),
    }),
    url: Type.String({
      default: 'ws://homeassistant.local:8123/api/websocket',
      minLength: 1,
      maxLength: 1024,
      ...homeassistantMeta("Home Assistant's WebSocket API: ws://<host>:8123/api/websocket (wss:// behind TLS). A change reconnects."),
    }),
    token: Type.String({
      default: '',
      maxLength: 4096,
      ...homeassistantMeta(
        'A long-lived access token (Home Assistant: your profile > Security > Long-lived access tokens). After Home Assistant refused it, HomeAgent tries again only when this changes.',
        { secret: true },
      ),
    }),
    expose: Type.Union([Type.Literal('assist'), Type.Literal('list')], {
      default: 'assist',
      ...homeassistantMeta(
        "assist: the entities Home Assistant exposes to Assist (Settings > Voice assistants > Expose; needs an administrator's token), plus include, minus exclude. list: only include, minus exclude.",
      ),
    }),
    include: Type.Array(HaPattern, {
      default: [],
      maxItems: 1000,
      ...homeassistantMeta('Entity ids (light.kitchen), domains (light) or domain.* patterns brought in besides the exposed ones.'),
    }),
    exclude: Type.Array(HaPattern, {
      default: [],
      maxItems: 1000,
      ...homeassistantMeta('Entity ids, domains or domain.* patterns never brought in, even when exposed or included.'),
    }),
    max_entities: Type.Integer({
      default: 500,
      minimum: 1,
      maximum: 5000,
      ...homeassistantMeta('Most Home Assistant entities brought in; the rest are skipped and counted in homeassistant.status.'),
    }),
    command_timeout_ms: Type.Integer({
      default: 10000,
      minimum: 500,
      maximum: 120000,
      ...homeassistantMeta('A command (a service call, a registry list) Home Assistant does not answer within this fails.'),
    }),
    ping_interval_ms: Type.Integer({
      default: 30000,
      minimum: 1000,
      maximum: 600000,
      ...homeassistantMeta('How often HomeAgent pings Home Assistant; a ping not answered within command_timeout_ms ends the connection.'),
    }),
    reconnect_min_ms: Type.Integer({
      default: 1000,
      minimum: 100,
      maximum: 60000,
      ...homeassistantMeta(
        'First wait before reconnecting; it doubles (with jitter) up to reconnect_max_ms and resets after a healthy connection.',
      ),
    }),
    reconnect_max_ms: Type.Integer({
      default: 60000,
      minimum: 1000,
      maximum: 3600000,
      ...homeassistantMeta('Longest wait between reconnects (a restarting Home Assistant can take minutes).'),
    }),
  },
  { additionalProperties: false, default: {} },
);

export type HomeassistantSettings = Static<typeof settingsSchema>;

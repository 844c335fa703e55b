/**
 * The settings of the kbtree plugin, `plugin.kbtree.*`: defaults, bounds, descriptions and
 * `requires_restart` for each. The configuration schema composes it (src/config/plugin-sections.ts);
 * the plugin reads its values through `PluginSettings<KbtreeSettings>`.
 */
import { type Static, Type } from '@sinclair/typebox';
import { pluginMeta, settingMeta } from '../../src/sdk/settings.js';

export const settingsSchema = Type.Object(
  {
    // Opt-in: a service for other machines' agents is the household's decision, not a default.
    enabled: Type.Boolean({
      default: false,
      ...settingMeta({
        description: 'Run the read-only knowledge service for other agents (kbtree).',
        requires_restart: true,
        category: 'plugin.kbtree',
      }),
    }),
    host: Type.String({
      default: '127.0.0.1',
      maxLength: 255,
      ...pluginMeta(
        'kbtree',
        'Address the read-only knowledge service listens on. Anything but a loopback address must be set here explicitly.',
        {
          requires_restart: true,
        },
      ),
    }),
    port: Type.Integer({
      default: 9892,
      minimum: 1,
      maximum: 65535,
      ...pluginMeta('kbtree', 'Port of the read-only knowledge service.', { requires_restart: true }),
    }),
    token: Type.String({
      default: '',
      maxLength: 256,
      ...pluginMeta(
        'kbtree',
        'Token other agents must send (X-API-Key, Authorization: Bearer or ?token=). Empty: a random one per start, shown by `homeagentctl kb token`.',
        {
          requires_restart: true,
          secret: true,
        },
      ),
    }),
    header_timeout_ms: Type.Integer({
      default: 5000,
      minimum: 100,
      maximum: 600000,
      ...pluginMeta('kbtree', 'A client must send its request headers within this time.', { requires_restart: true }),
    }),
    request_timeout_ms: Type.Integer({
      default: 30000,
      minimum: 100,
      maximum: 600000,
      ...pluginMeta('kbtree', 'A whole request must arrive within this time.', { requires_restart: true }),
    }),
    idle_timeout_ms: Type.Integer({
      default: 60000,
      minimum: 100,
      maximum: 3600000,
      ...pluginMeta('kbtree', 'An idle keep-alive connection is closed after this time.', { requires_restart: true }),
    }),
    max_connections: Type.Integer({
      default: 256,
      minimum: 1,
      maximum: 10000,
      ...pluginMeta('kbtree', 'Open connections at most; more are refused.', { requires_restart: true }),
    }),
  },
  { additionalProperties: false, default: {} },
);

export type KbtreeSettings = Static<typeof settingsSchema>;

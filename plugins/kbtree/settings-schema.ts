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
        description_zh: '为其他智能体运行只读知识服务（kbtree）。',
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
        { description_zh: '只读知识服务监听的地址。非回环地址必须在这里明确设置。', requires_restart: true },
      ),
    }),
    port: Type.Integer({
      default: 9892,
      minimum: 1,
      maximum: 65535,
      ...pluginMeta('kbtree', 'Port of the read-only knowledge service.', {
        description_zh: '只读知识服务的端口。',
        requires_restart: true,
      }),
    }),
    token: Type.String({
      default: '',
      maxLength: 256,
      ...pluginMeta(
        'kbtree',
        'Token other agents must send (X-API-Key, Authorization: Bearer or ?token=). Empty: a random one per start, shown by `homeagentctl kb token`.',
        {
          description_zh:
            '其他智能体必须发送的令牌（X-API-Key、Authorization: Bearer 或 ?token=）。留空：每次启动随机生成一个，用 `homeagentctl kb token` 查看。',
          requires_restart: true,
          secret: true,
        },
      ),
    }),
    header_timeout_ms: Type.Integer({
      default: 5000,
      minimum: 100,
      maximum: 600000,
      ...pluginMeta('kbtree', 'A client must send its request headers within this time.', {
        description_zh: '客户端必须在这个时间内发完请求头。',
        requires_restart: true,
      }),
    }),
    request_timeout_ms: Type.Integer({
      default: 30000,
      minimum: 100,
      maximum: 600000,
      ...pluginMeta('kbtree', 'A whole request must arrive within this time.', {
        description_zh: '整个请求必须在这个时间内到达。',
        requires_restart: true,
      }),
    }),
    idle_timeout_ms: Type.Integer({
      default: 60000,
      minimum: 100,
      maximum: 3600000,
      ...pluginMeta('kbtree', 'An idle keep-alive connection is closed after this time.', {
        description_zh: '空闲的 keep-alive 连接过了这个时间就关闭。',
        requires_restart: true,
      }),
    }),
    max_connections: Type.Integer({
      default: 256,
      minimum: 1,
      maximum: 10000,
      ...pluginMeta('kbtree', 'Open connections at most; more are refused.', {
        description_zh: '最多同时打开的连接数；再多的被拒绝。',
        requires_restart: true,
      }),
    }),
  },
  { additionalProperties: false, default: {} },
);

export type KbtreeSettings = Static<typeof settingsSchema>;

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
        description_zh:
          '启动时加载 homeassistant 插件：通过 Home Assistant 的 WebSocket API，把它的实体（公开给 Assist 的，或列在 include 里的）变成 HomeAgent 的实体。',
        requires_restart: true,
        category: 'plugin.homeassistant',
      }),
    }),
    url: Type.String({
      default: 'ws://homeassistant.local:8123/api/websocket',
      minLength: 1,
      maxLength: 1024,
      ...homeassistantMeta("Home Assistant's WebSocket API: ws://<host>:8123/api/websocket (wss:// behind TLS). A change reconnects.", {
        description_zh: 'Home Assistant 的 WebSocket API：ws://<host>:8123/api/websocket（TLS 后面用 wss://）。修改后重新连接。',
      }),
    }),
    token: Type.String({
      default: '',
      maxLength: 4096,
      ...homeassistantMeta(
        'A long-lived access token (Home Assistant: your profile > Security > Long-lived access tokens). After Home Assistant refused it, HomeAgent tries again only when this changes.',
        {
          description_zh:
            '长期访问令牌（Home Assistant：个人资料 > 安全 > 长期访问令牌）。被 Home Assistant 拒绝后，只有改了它 HomeAgent 才会再试。',
          secret: true,
        },
      ),
    }),
    expose: Type.Union([Type.Literal('assist'), Type.Literal('list')], {
      default: 'assist',
      ...homeassistantMeta(
        "assist: the entities Home Assistant exposes to Assist (Settings > Voice assistants > Expose; needs an administrator's token), plus include, minus exclude. list: only include, minus exclude.",
        {
          description_zh:
            'assist：Home Assistant 公开给 Assist 的实体（设置 > 语音助手 > 公开；需要管理员的令牌），加上 include，减去 exclude。list：只用 include，减去 exclude。',
        },
      ),
    }),
    include: Type.Array(HaPattern, {
      default: [],
      maxItems: 1000,
      ...homeassistantMeta('Entity ids (light.kitchen), domains (light) or domain.* patterns brought in besides the exposed ones.', {
        description_zh: '除了公开的实体之外还要接入的实体 id（light.kitchen）、域（light）或 domain.* 模式。',
      }),
    }),
    exclude: Type.Array(HaPattern, {
      default: [],
      maxItems: 1000,
      ...homeassistantMeta('Entity ids, domains or domain.* patterns never brought in, even when exposed or included.', {
        description_zh: '永不接入的实体 id、域或 domain.* 模式，即使已公开或列在 include 里。',
      }),
    }),
    max_entities: Type.Integer({
      default: 500,
      minimum: 1,
      maximum: 5000,
      ...homeassistantMeta('Most Home Assistant entities brought in; the rest are skipped and counted in homeassistant.status.', {
        description_zh: '最多接入多少个 Home Assistant 实体；其余跳过，并计入 homeassistant.status。',
      }),
    }),
    command_timeout_ms: Type.Integer({
      default: 10000,
      minimum: 500,
      maximum: 120000,
      ...homeassistantMeta('A command (a service call, a registry list) Home Assistant does not answer within this fails.', {
        description_zh: 'Home Assistant 在这个时间内没有回应的命令（服务调用、注册表列表）算失败。',
      }),
    }),
    ping_interval_ms: Type.Integer({
      default: 30000,
      minimum: 1000,
      maximum: 600000,
      ...homeassistantMeta('How often HomeAgent pings Home Assistant; a ping not answered within command_timeout_ms ends the connection.', {
        description_zh: 'HomeAgent 多久 ping 一次 Home Assistant；ping 在 command_timeout_ms 内没有回应就断开连接。',
      }),
    }),
    reconnect_min_ms: Type.Integer({
      default: 1000,
      minimum: 100,
      maximum: 60000,
      ...homeassistantMeta(
        'First wait before reconnecting; it doubles (with jitter) up to reconnect_max_ms and resets after a healthy connection.',
        { description_zh: '重连前第一次等待多久；之后翻倍（带随机抖动），最多到 reconnect_max_ms，连接正常后重置。' },
      ),
    }),
    reconnect_max_ms: Type.Integer({
      default: 60000,
      minimum: 1000,
      maximum: 3600000,
      ...homeassistantMeta('Longest wait between reconnects (a restarting Home Assistant can take minutes).', {
        description_zh: '两次重连之间最长等待多久（Home Assistant 重启可能要好几分钟）。',
      }),
    }),
  },
  { additionalProperties: false, default: {} },
);

export type HomeassistantSettings = Static<typeof settingsSchema>;

/**
 * The settings of the onebot plugin, `plugin.onebot.*`: defaults, bounds, descriptions and
 * `requires_restart` for each. The configuration schema composes it (src/config/plugin-sections.ts);
 * the plugin reads its values through `PluginSettings<OnebotSettings>`.
 */
import { type Static, Type } from '@sinclair/typebox';
import { pluginMeta, type SettingMeta, settingMeta } from '../../src/sdk/settings.js';

const onebotMeta = (description: string, extra: Partial<SettingMeta> = {}) => pluginMeta('onebot', description, extra);
const QqNumberList = (description: string, extra: Partial<SettingMeta> = {}) =>
  Type.Array(Type.Union([Type.Integer({ minimum: 10000, maximum: 999999999999 }), Type.String({ pattern: '^[0-9]{5,12}$' })]), {
    default: [],
    maxItems: 1000,
    ...onebotMeta(description, extra),
  });

export const settingsSchema = Type.Object(
  {
    enabled: Type.Boolean({
      default: false,
      ...settingMeta({
        description: 'Load the onebot plugin (QQ through a OneBot v11 implementation: NapCat, Lagrange, go-cqhttp) at start.',
        description_zh: '启动时加载 onebot 插件（通过 OneBot v11 实现接入 QQ：NapCat、Lagrange、go-cqhttp）。',
        requires_restart: true,
        category: 'plugin.onebot',
      }),
    }),
    mode: Type.Union([Type.Literal('reverse'), Type.Literal('forward')], {
      default: 'reverse',
      ...onebotMeta(
        'reverse: the OneBot implementation connects to HomeAgent (host, port, path); forward: HomeAgent connects to the implementation (url).',
        {
          description_zh: 'reverse：OneBot 实现连到 HomeAgent（host、port、path）；forward：HomeAgent 连到 OneBot 实现（url）。',
          requires_restart: true,
        },
      ),
    }),
    host: Type.String({
      default: '127.0.0.1',
      maxLength: 255,
      ...onebotMeta('reverse: address the WebSocket server listens on. Anything but loopback needs access_token.', {
        description_zh: 'reverse：WebSocket 服务器监听的地址。非回环地址需要 access_token。',
        requires_restart: true,
      }),
    }),
    port: Type.Integer({
      default: 6700,
      minimum: 1,
      maximum: 65535,
      ...onebotMeta('reverse: port of the WebSocket server.', {
        description_zh: 'reverse：WebSocket 服务器的端口。',
        requires_restart: true,
      }),
    }),
    path: Type.String({
      default: '/onebot/v11/ws',
      maxLength: 255,
      pattern: '^/',
      ...onebotMeta('reverse: the WebSocket path the implementation connects to.', {
        description_zh: 'reverse：OneBot 实现连接的 WebSocket 路径。',
        requires_restart: true,
      }),
    }),
    url: Type.String({
      default: '',
      maxLength: 1024,
      ...onebotMeta("forward: the implementation's WebSocket server, ws://host:port/ (or wss://).", {
        description_zh: 'forward：OneBot 实现的 WebSocket 服务器，ws://host:port/（或 wss://）。',
        requires_restart: true,
      }),
    }),
    access_token: Type.String({
      default: '',
      maxLength: 1024,
      ...onebotMeta('Token both sides send (Authorization: Bearer). Required unless the reverse server listens on loopback.', {
        description_zh: '双方都发送的令牌（Authorization: Bearer）。除非 reverse 服务器只监听回环地址，否则必须设置。',
        requires_restart: true,
        secret: true,
      }),
    }),
    owners: QqNumberList('QQ numbers of the owners: they may command the home and confirm dangerous actions.', {
      description_zh: '主人的 QQ 号：他们可以控制家里的设备，也可以确认危险操作。',
    }),
    allow_users: QqNumberList('Further QQ numbers whose private messages reach the agent (owners always do).', {
      description_zh: '私聊消息也会交给智能体的其他 QQ 号（主人的总会）。',
    }),
    allow_groups: QqNumberList(
      'QQ groups whose messages reach the agent (from anyone in the group; only owners approve, and approval codes are never shown in a group).',
      { description_zh: '消息会交给智能体的 QQ 群（群里任何人的消息；只有主人能批准，群里也从不显示批准码）。' },
    ),
    require_at_in_groups: Type.Boolean({
      default: true,
      ...onebotMeta('In groups, only messages that @-mention the bot reach the agent.', {
        description_zh: '在群里，只有 @ 了机器人的消息才交给智能体。',
      }),
    }),
    approvals_to_owners: Type.Boolean({
      default: true,
      ...onebotMeta(
        "Send each owner a private message when a dangerous action asked for elsewhere (MQTT, a group, a voice in the room) waits for the owner's approval; they approve by answering /confirm CODE.",
        { description_zh: '别处（MQTT、群聊、房间里的语音）请求的危险操作等待批准时，私聊通知每位主人；主人回复 /confirm CODE 即可批准。' },
      ),
    }),
    refuse_reply: Type.Boolean({
      default: true,
      ...onebotMeta('Answer a private message from someone not allowed with one short refusal per person per hour (false: silence).', {
        description_zh: '对不被允许的人发来的私聊，每人每小时回一条简短的拒绝（false：不回复）。',
      }),
    }),
    action_timeout_ms: Type.Integer({
      default: 10000,
      minimum: 100,
      maximum: 120000,
      ...onebotMeta('An action (send, lookup) the implementation does not answer within this fails.', {
        description_zh: 'OneBot 实现在这个时间内没有回应的动作（发送、查询）算失败。',
      }),
    }),
    max_message_chars: Type.Integer({
      default: 4000,
      minimum: 100,
      maximum: 20000,
      ...onebotMeta('Longer texts are split near this length at a paragraph or sentence boundary, one message per part.', {
        description_zh: '更长的文字在接近这个长度处按段落或句子拆开，每段发一条消息。',
      }),
    }),
    max_sends_per_turn: Type.Integer({
      default: 5,
      minimum: 1,
      maximum: 50,
      ...onebotMeta('Messages one agent turn may send to QQ (output_send__qq and qq_send_* together); more are refused.', {
        description_zh: '智能体一轮最多向 QQ 发送几条消息（output_send__qq 和 qq_send_* 合计）；再多的被拒绝。',
      }),
    }),
    reconnect_min_ms: Type.Integer({
      default: 1000,
      minimum: 100,
      maximum: 60000,
      ...onebotMeta('forward: first wait before reconnecting; it doubles up to reconnect_max_ms and resets after a healthy connection.', {
        description_zh: 'forward：重连前第一次等待多久；之后翻倍，最多到 reconnect_max_ms，连接正常后重置。',
      }),
    }),
    reconnect_max_ms: Type.Integer({
      default: 30000,
      minimum: 1000,
      maximum: 3600000,
      ...onebotMeta('forward: longest wait between reconnects.', { description_zh: 'forward：两次重连之间最长等待多久。' }),
    }),
  },
  { additionalProperties: false, default: {} },
);

export type OnebotSettings = Static<typeof settingsSchema>;

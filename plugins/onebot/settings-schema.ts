/**
 * The settings of the onebot plugin, `plugin.onebot.*`: defaults, bounds, descriptions and
 * `requires_restart` for each. The configuration schema composes it (src/config/plugin-sections.ts);
 * the plugin reads its values through `PluginSettings<OnebotSettings>`.
 */
import { type Static, Type } from '@sinclair/typebox';
import { pluginMeta, type SettingMeta, settingMeta } from '../../src/sdk/settings.js';

const onebotMeta = (description: string, extra: Partial<SettingMeta> = {}) => pluginMeta('onebot', description, extra);
const QqNumberList = (description: string) =>
  Type.Array(Type.Union([Type.Integer({ minimum: 10000, maximum: 999999999999 }), Type.String({ pattern: '^[0-9]{5,12}$' })]), {
    default: [],
    maxItems: 1000,
    ...onebotMeta(description),
  });

export const settingsSchema = Type.Object(
  {
    enabled: Type.Boolean({
      default: false,
      ...settingMeta({
        description: 'Load the onebot plugin (QQ through a OneBot v11 implementation: NapCat, Lagrange, go-cqhttp) at start.',
        requires_restart: true,
        category: 'plugin.onebot',
      }),
    }),
    mode: Type.Union([Type.Literal('reverse'), Type.Literal('forward')], {
      default: 'reverse',
      ...onebotMeta(
        'reverse: the OneBot implementation connects to HomeAgent (host, port, path); forward: HomeAgent connects to the implementation (url).',
        { requires_restart: true },
      ),
    }),
    host: Type.String({
      default: '127.0.0.1',
      maxLength: 255,
      ...onebotMeta('reverse: address the WebSocket server listens on. Anything but loopback needs access_token.', {
        requires_restart: true,
      }),
    }),
    port: Type.Integer({
      default: 6700,
      minimum: 1,
      maximum: 65535,
      ...onebotMeta('reverse: port of the WebSocket server.', { requires_restart: true }),
    }),
    path: Type.String({
      default: '/onebot/v11/ws',
      maxLength: 255,
      pattern: '^/',
      ...onebotMeta('reverse: the WebSocket path the implementation connects to.', { requires_restart: true }),
    }),
    url: Type.String({
      default: '',
      maxLength: 1024,
      ...onebotMeta("forward: the implementation's WebSocket server, ws://host:port/ (or wss://).", { requires_restart: true }),
    }),
    access_token: Type.String({
      default: '',
      maxLength: 1024,
      ...onebotMeta('Token both sides send (Authorization: Bearer). Required unless the reverse server listens on loopback.', {
        requires_restart: true,
        secret: true,
      }),
    }),
    owners: QqNumberList('QQ numbers of the owners: they may command the home and confirm dangerous actions.'),
    allow_users: QqNumberList('Further QQ numbers whose private messages reach the agent (owners always do).'),
    allow_groups: QqNumberList(
      'QQ groups whose messages reach the agent (from anyone in the group; only owners approve, and approval codes are never shown in a group).',
    ),
    require_at_in_groups: Type.Boolean({
      default: true,
      ...onebotMeta('In groups, only messages that @-mention the bot reach the agent.'),
    }),
    approvals_to_owners: Type.Boolean({
      default: true,
      ...onebotMeta(
        "Send each owner a private message when a dangerous action asked for elsewhere (MQTT, a group, a voice in the room) waits for the owner's approval; they approve by answering /confirm CODE.",
      ),
    }),
    refuse_reply: Type.Boolean({
      default: true,
      ...onebotMeta('Answer a private message from someone not allowed with one short refusal per person per hour (false: silence).'),
    }),
    action_timeout_ms: Type.Integer({
      default: 10000,
      minimum: 100,
      maximum: 120000,
      ...onebotMeta('An action (send, lookup) the implementation does not answer within this fails.'),
    }),
    max_message_chars: Type.Integer({
      default: 4000,
      minimum: 100,
      maximum: 20000,
      ...onebotMeta('Longer texts are split near this length at a paragraph or sentence boundary, one message per part.'),
    }),
    max_sends_per_turn: Type.Integer({
      default: 5,
      minimum: 1,
      maximum: 50,
      ...onebotMeta('Messages one agent turn may send to QQ (output_send__qq and qq_send_* together); more are refused.'),
    }),
    reconnect_min_ms: Type.Integer({
      default: 1000,
      minimum: 100,
      maximum: 60000,
      ...onebotMeta('forward: first wait before reconnecting; it doubles up to reconnect_max_ms and resets after a healthy connection.'),
    }),
    reconnect_max_ms: Type.Integer({
      default: 30000,
      minimum: 1000,
      maximum: 3600000,
      ...onebotMeta('forward: longest wait between reconnects.'),
    }),
  },
  { additionalProperties: false, default: {} },
);

export type OnebotSettings = Static<typeof settingsSchema>;

/**
 * The settings of the mqtt plugin, `plugin.mqtt.*`: defaults, bounds, descriptions and
 * `requires_restart` for each. The configuration schema composes it (src/config/plugin-sections.ts);
 * the plugin reads its values through `PluginSettings<MqttSettings>`.
 */
import { type Static, Type } from '@sinclair/typebox';
import { pluginEnabled, pluginMeta, type SettingMeta, SLUG } from '../../src/sdk/settings.js';

const mqttMeta = (description: string, extra: Partial<SettingMeta> = {}) => pluginMeta('mqtt', description, extra);

const MqttEntityMappingSchema = Type.Object(
  {
    domain: Type.Union([Type.Literal('sensor'), Type.Literal('binary_sensor'), Type.Literal('switch'), Type.Literal('light')], {
      default: 'sensor',
    }),
    object_id: Type.String({ pattern: SLUG, description: 'Entity <domain>.<object_id>.' }),
    name: Type.String({ default: '', maxLength: 64 }),
    area: Type.String({ default: '', maxLength: 64 }),
    unit: Type.String({ default: '', maxLength: 16 }),
    device_class: Type.String({ default: '', maxLength: 32 }),
    value_path: Type.String({
      default: '',
      maxLength: 128,
      description: 'Dot path of the value in a JSON payload (temperature, state.power); empty: the whole payload.',
    }),
    payload_on: Type.String({ default: 'ON', maxLength: 64, description: 'binary_sensor, switch, light: the value meaning on.' }),
    payload_off: Type.String({ default: 'OFF', maxLength: 64 }),
    command_topic: Type.String({
      default: '',
      maxLength: 256,
      description: 'switch, light: where turn_on / turn_off publish payload_on / payload_off; empty: the entity only reports.',
    }),
  },
  { additionalProperties: false },
);

const MqttSubscriptionSchema = Type.Object(
  {
    topic: Type.String({ minLength: 1, maxLength: 256, description: 'Topic filter (+ and # wildcards).' }),
    qos: Type.Union([Type.Literal(0), Type.Literal(1), Type.Literal(2)], { default: 1 }),
    to: Type.Union([Type.Literal('input'), Type.Literal('entity'), Type.Literal('event')], {
      default: 'event',
      description: 'input: a text for the agent; entity: the state of an entity; event: only the mqtt.message event (automations).',
    }),
    template: Type.String({
      default: '',
      maxLength: 1000,
      description: 'input: the text; {topic}, {payload} and {json.path} are filled in. Empty: "MQTT <topic>: <payload>".',
    }),
    channel: Type.String({ default: 'mqtt', minLength: 1, maxLength: 128, description: 'input: the conversation it belongs to.' }),
    level: Type.Integer({ default: 0, minimum: 0, maximum: 3, description: 'input: interrupt level (0 = queued).' }),
    entity: Type.Optional(MqttEntityMappingSchema),
    rate_per_minute: Type.Integer({
      default: 60,
      minimum: 1,
      maximum: 60000,
      description: 'Messages per minute taken from one topic; more are dropped and counted (a chatty sensor cannot flood the agent).',
    }),
  },
  { additionalProperties: false },
);

export const settingsSchema = Type.Object(
  {
    enabled: pluginEnabled('mqtt'),
    url: Type.String({
      default: '',
      maxLength: 512,
      ...mqttMeta(
        'Broker address: mqtt://host:1883, mqtts://host:8883, ws://, wss://. Empty: the embedded broker when broker_enabled, else no MQTT.',
        {
          description_zh:
            'broker 地址：mqtt://host:1883、mqtts://host:8883、ws://、wss://。留空：启用 broker_enabled 时用内置 broker，否则不用 MQTT。',
          requires_restart: true,
        },
      ),
    }),
    username: Type.String({
      default: '',
      maxLength: 256,
      ...mqttMeta('Broker user name.', { description_zh: 'broker 用户名。', requires_restart: true }),
    }),
    password: Type.String({
      default: '',
      maxLength: 1024,
      ...mqttMeta('Broker password.', { description_zh: 'broker 密码。', requires_restart: true, secret: true }),
    }),
    client_id: Type.String({
      default: '',
      maxLength: 128,
      ...mqttMeta('Client id; fixed so the broker keeps the session. Empty: homeagent-<node_id>.', {
        description_zh: '客户端 id；固定不变，broker 才能保留会话。留空：homeagent-<node_id>。',
        requires_restart: true,
      }),
    }),
    ca_file: Type.String({
      default: '',
      maxLength: 4096,
      ...mqttMeta('TLS: CA certificate file (PEM) to trust.', {
        description_zh: 'TLS：要信任的 CA 证书文件（PEM）。',
        requires_restart: true,
      }),
    }),
    cert_file: Type.String({
      default: '',
      maxLength: 4096,
      ...mqttMeta('TLS: client certificate file (PEM), with key_file.', {
        description_zh: 'TLS：客户端证书文件（PEM），与 key_file 一起使用。',
        requires_restart: true,
      }),
    }),
    key_file: Type.String({
      default: '',
      maxLength: 4096,
      ...mqttMeta('TLS: client key file (PEM).', { description_zh: 'TLS：客户端私钥文件（PEM）。', requires_restart: true }),
    }),
    reject_unauthorized: Type.Boolean({
      default: true,
      ...mqttMeta('TLS: refuse a broker whose certificate does not verify.', {
        description_zh: 'TLS：broker 的证书验证不通过就拒绝连接。',
        requires_restart: true,
      }),
    }),
    node_id: Type.String({
      default: '',
      maxLength: 64,
      pattern: '^[a-z0-9_]{0,64}$',
      ...mqttMeta('This HomeAgent on MQTT (Home Assistant node id, client id). Empty: from core.name.', {
        description_zh: '这台 HomeAgent 在 MQTT 上的标识（Home Assistant 节点 id、客户端 id）。留空：由 core.name 生成。',
        requires_restart: true,
      }),
    }),
    base_topic: Type.String({
      default: '',
      maxLength: 128,
      pattern: '^[^#+]*$',
      ...mqttMeta(
        'Topics of this HomeAgent: <base>/status, <base>/<entity_id>/state, <base>/<entity_id>/set. Empty: homeagent/<node_id>, so several HomeAgents share a broker.',
        {
          description_zh:
            '这台 HomeAgent 的主题：<base>/status、<base>/<entity_id>/state、<base>/<entity_id>/set。留空：homeagent/<node_id>，这样几台 HomeAgent 可以共用一个 broker。',
          requires_restart: true,
        },
      ),
    }),
    keepalive_s: Type.Integer({
      default: 30,
      minimum: 5,
      maximum: 3600,
      ...mqttMeta('MQTT keep-alive.', { description_zh: 'MQTT keep-alive（秒）。', requires_restart: true }),
    }),
    reconnect_min_ms: Type.Integer({
      default: 1000,
      minimum: 100,
      maximum: 60000,
      ...mqttMeta('First wait before reconnecting; it doubles (with jitter) up to reconnect_max_ms.', {
        description_zh: '重连前第一次等待多久；之后翻倍（带随机抖动），最多到 reconnect_max_ms。',
      }),
    }),
    reconnect_max_ms: Type.Integer({
      default: 60000,
      minimum: 1000,
      maximum: 3600000,
      ...mqttMeta('Longest wait between reconnects.', { description_zh: '两次重连之间最长等待多久。' }),
    }),
    connect_timeout_ms: Type.Integer({
      default: 10000,
      minimum: 1000,
      maximum: 120000,
      ...mqttMeta('A connection attempt longer than this fails.', { description_zh: '一次连接尝试超过这个时间就算失败。' }),
    }),
    publish_qos: Type.Union([Type.Literal(0), Type.Literal(1), Type.Literal(2)], {
      default: 1,
      ...mqttMeta('QoS of what HomeAgent publishes (states, the output channel, mqtt_publish).', {
        description_zh: 'HomeAgent 发布消息（状态、输出通道、mqtt_publish）用的 QoS。',
      }),
    }),
    max_payload_bytes: Type.Integer({
      // Zigbee2MQTT's retained device list is ~3-4 KB per device: a 250-device network fits.
      default: 1048576,
      minimum: 256,
      maximum: 16777216,
      ...mqttMeta('Larger inbound payloads are dropped and counted; larger outbound ones refused.', {
        description_zh: '收到的更大消息体被丢弃并计数；要发出的更大消息体被拒绝。',
      }),
    }),
    outbox_max_messages: Type.Integer({
      default: 10000,
      minimum: 10,
      // MQTT packet ids are 16 bits: every stored message needs its own.
      maximum: 60000,
      ...mqttMeta('QoS 1/2 messages kept on disk while the broker is away; beyond it the oldest are dropped and counted.', {
        description_zh: 'broker 不在线时，磁盘上最多保留多少条 QoS 1/2 消息；超出时丢掉最旧的并计数。',
      }),
    }),
    subscriptions: Type.Array(MqttSubscriptionSchema, {
      default: [],
      maxItems: 256,
      ...mqttMeta('Topics to follow, each {topic, qos, to: input|entity|event, template, channel, level, entity, rate_per_minute}.', {
        description_zh: '要订阅的主题，每个为 {topic, qos, to: input|entity|event, template, channel, level, entity, rate_per_minute}。',
        requires_restart: true,
      }),
    }),
    publish_allow: Type.Array(Type.String({ minLength: 1, maxLength: 256 }), {
      default: ['homeagent/#'],
      maxItems: 64,
      ...mqttMeta('Topic filters the mqtt_publish tool and the mqtt output channel may publish to.', {
        description_zh: 'mqtt_publish 工具和 mqtt 输出通道可以发布到的主题过滤器。',
      }),
    }),
    notify_rate_per_minute: Type.Integer({
      default: 20,
      minimum: 1,
      maximum: 6000,
      ...mqttMeta('Texts for the agent taken from <base>/agent/notify per minute; more are dropped and counted.', {
        description_zh: '每分钟从 <base>/agent/notify 最多接收几条给智能体的文字；多出的被丢弃并计数。',
      }),
    }),
    command_rate_per_minute: Type.Integer({
      default: 120,
      minimum: 1,
      maximum: 6000,
      ...mqttMeta('Commands taken per minute on one entity command topic (<base>/<entity_id>/set); more are dropped and counted.', {
        description_zh: '每个实体命令主题（<base>/<entity_id>/set）每分钟最多接收几条命令；多出的被丢弃并计数。',
      }),
    }),
    discovery: Type.Boolean({
      default: true,
      ...mqttMeta('Publish Home Assistant MQTT discovery for every entity HomeAgent owns (and the agent as a notify entity).', {
        description_zh: '为 HomeAgent 自己的每个实体发布 Home Assistant MQTT discovery（智能体作为一个 notify 实体）。',
      }),
    }),
    discovery_prefix: Type.String({
      default: 'homeassistant',
      minLength: 1,
      maxLength: 128,
      pattern: '^[^#+]+$',
      ...mqttMeta('Home Assistant discovery prefix.', { description_zh: 'Home Assistant discovery 前缀。', requires_restart: true }),
    }),
    state_min_interval_ms: Type.Integer({
      default: 100,
      minimum: 0,
      maximum: 60000,
      ...mqttMeta('An entity state is published at most this often; a burst waits and its last state wins.', {
        description_zh: '实体状态最多这么频繁地发布一次；一阵密集变化会等一等，以最后的状态为准。',
      }),
    }),
    discovery_removal_grace_ms: Type.Integer({
      default: 5000,
      minimum: 0,
      maximum: 600000,
      ...mqttMeta('A removed entity leaves Home Assistant only when it is not back within this time (a plugin reload).', {
        description_zh: '移除的实体在这个时间内没有回来（比如插件重载），才从 Home Assistant 中移除。',
      }),
    }),
    discovery_stale_grace_ms: Type.Integer({
      default: 60000,
      minimum: 0,
      maximum: 3600000,
      ...mqttMeta(
        'After start, discovery configs of this node that no entity publishes (deleted while HomeAgent was down) are removed after this time.',
        { description_zh: '启动后，本节点没有任何实体再发布的 discovery 配置（HomeAgent 停机期间删掉的）在这个时间后移除。' },
      ),
    }),
    remote_nodes: Type.Boolean({
      default: true,
      ...mqttMeta('Entities other HomeAgent nodes announce by discovery on this broker become remote entities here (multi-room).', {
        description_zh: '同一 broker 上其他 HomeAgent 节点通过 discovery 公布的实体，在这里成为远程实体（多房间）。',
      }),
    }),
    zigbee2mqtt: Type.Boolean({
      default: false,
      ...mqttMeta('Zigbee2MQTT devices become entities.', { description_zh: 'Zigbee2MQTT 设备成为实体。', requires_restart: true }),
    }),
    zigbee2mqtt_base_topic: Type.String({
      default: 'zigbee2mqtt',
      minLength: 1,
      maxLength: 128,
      pattern: '^[^#+]+$',
      ...mqttMeta('Zigbee2MQTT base topic.', { description_zh: 'Zigbee2MQTT 的基础主题。', requires_restart: true }),
    }),
    zigbee2mqtt_confirm_ms: Type.Integer({
      default: 3000,
      minimum: 0,
      maximum: 60000,
      ...mqttMeta('How long an entity call to a Zigbee2MQTT device waits for its new state before it returns anyway.', {
        description_zh: '对 Zigbee2MQTT 设备的实体调用最多等多久新状态，超时也照样返回。',
      }),
    }),
    zigbee2mqtt_request_timeout_ms: Type.Integer({
      default: 10000,
      minimum: 1000,
      maximum: 120000,
      ...mqttMeta(
        'How long a Zigbee2MQTT management request (permit join, rename, remove, groups) waits for its bridge/response before it fails.',
        { description_zh: 'Zigbee2MQTT 管理请求（允许入网、改名、删除、分组）等待 bridge/response 多久，超时即失败。' },
      ),
    }),
    zigbee2mqtt_permit_join_max_s: Type.Integer({
      default: 254,
      minimum: 1,
      maximum: 254,
      ...mqttMeta(
        'Longest time Zigbee2MQTT may let new devices join when HomeAgent opens the network (Zigbee allows 254 s at most; Zigbee2MQTT closes it itself).',
        { description_zh: 'HomeAgent 打开网络时，Zigbee2MQTT 最长允许新设备入网多久（Zigbee 最多 254 s；Zigbee2MQTT 会自己关闭）。' },
      ),
    }),
    broker_enabled: Type.Boolean({
      default: false,
      ...mqttMeta(
        'Run an embedded MQTT broker (for a house without one); its messages persist in <data>/plugin-data/mqtt. Clients log in: the devices login is shown by homeagentctl mqtt credentials.',
        {
          description_zh:
            '运行内置 MQTT broker（给家里没有 broker 的情况）；消息持久保存在 <data>/plugin-data/mqtt。客户端需要登录：设备登录信息用 homeagentctl mqtt credentials 查看。',
          requires_restart: true,
        },
      ),
    }),
    broker_host: Type.String({
      default: '127.0.0.1',
      minLength: 1,
      maxLength: 255,
      ...mqttMeta('Embedded broker: address to listen on (127.0.0.1: this machine only; 0.0.0.0: the network too).', {
        description_zh: '内置 broker：监听的地址（127.0.0.1：只有本机；0.0.0.0：网络上也可以）。',
        requires_restart: true,
      }),
    }),
    broker_port: Type.Integer({
      default: 1883,
      minimum: 1,
      maximum: 65535,
      ...mqttMeta('Embedded broker: port.', { description_zh: '内置 broker：端口。', requires_restart: true }),
    }),
    broker_tls_cert_file: Type.String({
      default: '',
      maxLength: 4096,
      ...mqttMeta(
        'Embedded broker: TLS certificate (PEM, with its chain), with broker_tls_key_file. Set: MQTT over TLS on broker_host:broker_tls_port, and plain MQTT only on 127.0.0.1:broker_port.',
        {
          description_zh:
            '内置 broker：TLS 证书（PEM，含证书链），与 broker_tls_key_file 一起使用。设置后：broker_host:broker_tls_port 上为 MQTT over TLS，明文 MQTT 只在 127.0.0.1:broker_port 上。',
          requires_restart: true,
        },
      ),
    }),
    broker_tls_key_file: Type.String({
      default: '',
      maxLength: 4096,
      ...mqttMeta("Embedded broker: the TLS certificate's private key (PEM).", {
        description_zh: '内置 broker：TLS 证书的私钥（PEM）。',
        requires_restart: true,
      }),
    }),
    broker_tls_port: Type.Integer({
      default: 8883,
      minimum: 1,
      maximum: 65535,
      ...mqttMeta('Embedded broker: port of MQTT over TLS (when broker_tls_cert_file is set).', {
        description_zh: '内置 broker：MQTT over TLS 的端口（设置了 broker_tls_cert_file 时）。',
        requires_restart: true,
      }),
    }),
    broker_allow_anonymous: Type.Boolean({
      default: false,
      ...mqttMeta(
        "Embedded broker: let clients in without a login (only with broker_host on loopback; a warning at start and in health). They may then switch HomeAgent's entities and talk to the agent.",
        {
          description_zh:
            '内置 broker：允许客户端不登录就连入（仅当 broker_host 是回环地址；启动时和健康信息里会有警告）。这样它们就能开关 HomeAgent 的实体、和智能体对话。',
          requires_restart: true,
        },
      ),
    }),
    broker_username: Type.String({
      default: '',
      maxLength: 256,
      ...mqttMeta(
        'Embedded broker: an extra device login besides the generated one (homeagentctl mqtt credentials), with broker_password; empty: none.',
        {
          description_zh:
            '内置 broker：除自动生成的登录（homeagentctl mqtt credentials）之外再加一个设备登录，与 broker_password 一起使用；留空：不加。',
          requires_restart: true,
        },
      ),
    }),
    broker_password: Type.String({
      default: '',
      maxLength: 1024,
      ...mqttMeta("Embedded broker: the extra login's password.", {
        description_zh: '内置 broker：额外登录的密码。',
        requires_restart: true,
        secret: true,
      }),
    }),
    broker_login_timeout_ms: Type.Integer({
      default: 10000,
      minimum: 1000,
      maximum: 120000,
      ...mqttMeta(
        'Embedded broker: a connection that has not logged in after this time is closed (half-open connections cannot hold the slots).',
        { description_zh: '内置 broker：连接在这个时间后还没登录就关闭（半开的连接不能占着名额）。', requires_restart: true },
      ),
    }),
    broker_max_connections: Type.Integer({
      default: 64,
      minimum: 1,
      maximum: 10000,
      ...mqttMeta("Embedded broker: clients at once (HomeAgent's own client always gets in).", {
        description_zh: '内置 broker：同时最多几个客户端（HomeAgent 自己的客户端总能连入）。',
        requires_restart: true,
      }),
    }),
    broker_max_queued_messages: Type.Integer({
      default: 1000,
      minimum: 10,
      maximum: 1000000,
      ...mqttMeta('Embedded broker: QoS 1/2 messages kept for one absent persistent client; beyond it new ones are dropped and counted.', {
        description_zh: '内置 broker：为一个离线的持久客户端最多保留多少条 QoS 1/2 消息；超出时新消息被丢弃并计数。',
        requires_restart: true,
      }),
    }),
    broker_max_stored_mb: Type.Integer({
      default: 64,
      minimum: 1,
      maximum: 4096,
      ...mqttMeta('Embedded broker: retained and queued messages kept in all (MiB).', {
        description_zh: '内置 broker：保留消息和排队消息合计最多多少 MiB。',
        requires_restart: true,
      }),
    }),
    broker_max_payload_bytes: Type.Integer({
      default: 1048576,
      minimum: 256,
      maximum: 268435455,
      ...mqttMeta('Embedded broker: larger publishes are refused (the client is disconnected).', {
        description_zh: '内置 broker：更大的发布被拒绝（客户端被断开）。',
        requires_restart: true,
      }),
    }),
  },
  { additionalProperties: false, default: {} },
);

export type MqttSettings = Static<typeof settingsSchema>;

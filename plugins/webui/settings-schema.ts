/**
 * The settings of the webui plugin, `plugin.webui.*`: defaults, bounds, descriptions and
 * `requires_restart` for each. The configuration schema composes it (src/config/plugin-sections.ts);
 * the plugin reads its values through `PluginSettings<WebuiSettings>`.
 */
import { type Static, Type } from '@sinclair/typebox';
import { pluginEnabled, pluginMeta, type SettingMeta } from '../../src/sdk/settings.js';

const webuiMeta = (description: string, extra: Partial<SettingMeta> = {}) => pluginMeta('webui', description, extra);

export const settingsSchema = Type.Object(
  {
    enabled: pluginEnabled('webui'),
    host: Type.String({
      default: '127.0.0.1',
      maxLength: 255,
      ...webuiMeta(
        'Address the web server listens on (127.0.0.1: this machine only; 0.0.0.0: every interface, for phones on the LAN). Anything but loopback must be set here explicitly.',
        {
          description_zh:
            '网页服务器监听的地址（127.0.0.1：只有本机；0.0.0.0：所有网卡，供局域网里的手机访问）。非回环地址必须在这里明确设置。',
          requires_restart: true,
        },
      ),
    }),
    port: Type.Integer({
      default: 8080,
      minimum: 0,
      maximum: 65535,
      ...webuiMeta('Port of the web server; 0 picks a free one (tests), shown by `homeagentctl webui credentials`.', {
        description_zh: '网页服务器的端口；0 表示随便选一个空闲端口（测试用），用 `homeagentctl webui credentials` 查看。',
        requires_restart: true,
      }),
    }),
    allowed_hosts: Type.Array(Type.String({ minLength: 1, maxLength: 255, pattern: '^[A-Za-z0-9._:\\[\\]-]+$' }), {
      default: [],
      maxItems: 64,
      ...webuiMeta(
        "Host names the web server answers besides localhost, 127.0.0.1, [::1], this machine's host name (and .local) and its own addresses; any other Host header gets 403 (DNS rebinding).",
        {
          description_zh:
            '除了 localhost、127.0.0.1、[::1]、本机主机名（及 .local）和本机地址之外，网页服务器还接受的主机名；其他 Host 头一律返回 403（防 DNS rebinding）。',
        },
      ),
    }),
    session_ttl_ms: Type.Integer({
      default: 86400000,
      minimum: 60000,
      maximum: 2592000000,
      ...webuiMeta('A login lasts this long (the session cookie expires with it).', {
        description_zh: '一次登录的有效期（会话 cookie 同时过期）。',
      }),
    }),
    max_sessions: Type.Integer({
      default: 32,
      minimum: 1,
      maximum: 1000,
      ...webuiMeta('Logged-in sessions kept at once; the oldest is ended when a new login would exceed it.', {
        description_zh: '同时保留多少个登录会话；新登录会超出时，结束最早的那个。',
      }),
    }),
    login_max_failures: Type.Integer({
      default: 5,
      minimum: 1,
      maximum: 1000,
      ...webuiMeta(
        'Failed logins (and, counted apart, requests with a wrong API key) from one address that cost no wait; after them each further attempt waits login_delay_ms after the last failure, doubling up to login_max_delay_ms (429 while waiting). The right password after the wait always works.',
        {
          description_zh:
            '同一地址可以免等待失败几次登录（错误 API key 的请求另外计数）；之后每次尝试都要在上次失败后等 login_delay_ms，逐次翻倍，最多到 login_max_delay_ms（等待期间返回 429）。等完之后输入正确密码总能登录。',
        },
      ),
    }),
    login_window_ms: Type.Integer({
      default: 300000,
      minimum: 1000,
      maximum: 86400000,
      ...webuiMeta("An address's failed logins (or wrong API keys) are forgotten when it has had none for this long after its wait.", {
        description_zh: '某地址等待结束后这么久没有再失败，就忘掉它的失败登录（或错误 API key）记录。',
      }),
    }),
    login_delay_ms: Type.Integer({
      default: 1000,
      minimum: 100,
      maximum: 60000,
      ...webuiMeta('The wait after the first failure beyond login_max_failures; it doubles with each further failure.', {
        description_zh: '超过 login_max_failures 后第一次失败的等待时间；之后每失败一次翻倍。',
      }),
    }),
    login_max_delay_ms: Type.Integer({
      default: 60000,
      minimum: 1000,
      maximum: 3600000,
      ...webuiMeta('The longest wait between two attempts from an address that keeps failing: at most one guess per this time.', {
        description_zh: '一直失败的地址两次尝试之间的最长等待：每这么长时间最多猜一次。',
      }),
    }),
    header_timeout_ms: Type.Integer({
      default: 10000,
      minimum: 100,
      maximum: 600000,
      ...webuiMeta('A client must send its request headers within this time (slow clients are cut off).', {
        description_zh: '客户端必须在这个时间内发完请求头（太慢的客户端会被断开）。',
        requires_restart: true,
      }),
    }),
    request_timeout_ms: Type.Integer({
      default: 30000,
      minimum: 100,
      maximum: 600000,
      ...webuiMeta('A whole request must arrive within this time.', {
        description_zh: '整个请求必须在这个时间内到达。',
        requires_restart: true,
      }),
    }),
    idle_timeout_ms: Type.Integer({
      default: 5000,
      minimum: 100,
      maximum: 3600000,
      ...webuiMeta('An idle keep-alive connection is closed after this time.', {
        description_zh: '空闲的 keep-alive 连接过了这个时间就关闭。',
        requires_restart: true,
      }),
    }),
    max_connections: Type.Integer({
      default: 512,
      minimum: 1,
      maximum: 10000,
      ...webuiMeta(
        "Open connections at most; more are refused. High enough that a crowd of slow clients (each cut off after header_timeout_ms) leaves room for the household; keep it under the service's open-file limit (1024).",
        {
          description_zh:
            '最多同时打开的连接数；再多的被拒绝。要足够大，让一大批慢客户端（每个在 header_timeout_ms 后被断开）也挤不掉家里人；但要低于服务的打开文件数上限（1024）。',
          requires_restart: true,
        },
      ),
    }),
    body_limit_bytes: Type.Integer({
      default: 1048576,
      minimum: 1024,
      maximum: 104857600,
      ...webuiMeta('Largest request body of an API call (413 above it).', {
        description_zh: 'API 调用的请求体最大多少字节（超过返回 413）。',
        requires_restart: true,
      }),
    }),
    upload_limit_bytes: Type.Integer({
      default: 20971520,
      minimum: 1024,
      maximum: 1073741824,
      ...webuiMeta('Largest upload (plugin archive, knowledge file) in one request.', {
        description_zh: '一次请求上传（插件压缩包、知识文件）最大多少字节。',
        requires_restart: true,
      }),
    }),
    event_buffer: Type.Integer({
      default: 200,
      minimum: 10,
      maximum: 10000,
      ...webuiMeta('Agent events kept for SSE clients that reconnect with Last-Event-ID.', {
        description_zh: '为带 Last-Event-ID 重连的 SSE 客户端保留多少个智能体事件。',
        requires_restart: true,
      }),
    }),
    max_event_streams: Type.Integer({
      default: 16,
      minimum: 1,
      maximum: 1000,
      ...webuiMeta('Open event streams (SSE) at most; the oldest is closed when another would exceed it.', {
        description_zh: '最多同时打开几个事件流（SSE）；再开一个会超出时，关闭最早的那个。',
      }),
    }),
    chat_timeout_ms: Type.Integer({
      default: 300000,
      minimum: 1000,
      maximum: 3600000,
      ...webuiMeta("How long a chat request (web page or /v1/chat/completions) waits for the agent's answer.", {
        description_zh: '聊天请求（网页或 /v1/chat/completions）等待智能体回答多久。',
      }),
    }),
    model_name: Type.String({
      default: 'homeagent',
      minLength: 1,
      maxLength: 64,
      pattern: '^[A-Za-z0-9._:-]+$',
      ...webuiMeta('The model id /v1/models lists and /v1/chat/completions answers as.', {
        description_zh: '/v1/models 列出、/v1/chat/completions 回答时使用的模型 id。',
      }),
    }),
  },
  { additionalProperties: false, default: {} },
);

export type WebuiSettings = Static<typeof settingsSchema>;

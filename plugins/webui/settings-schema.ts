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
        { requires_restart: true },
      ),
    }),
    port: Type.Integer({
      default: 8080,
      minimum: 0,
      maximum: 65535,
      ...webuiMeta('Port of the web server; 0 picks a free one (tests), shown by `homeagentctl webui credentials`.', {
        requires_restart: true,
      }),
    }),
    allowed_hosts: Type.Array(Type.String({ minLength: 1, maxLength: 255, pattern: '^[A-Za-z0-9._:\\[\\]-]+$' }), {
      default: [],
      maxItems: 64,
      ...webuiMeta(
        "Host names the web server answers besides localhost, 127.0.0.1, [::1], this machine's host name (and .local) and its own addresses; any other Host header gets 403 (DNS rebinding).",
      ),
    }),
    session_ttl_ms: Type.Integer({
      default: 86400000,
      minimum: 60000,
      maximum: 2592000000,
      ...webuiMeta('A login lasts this long (the session cookie expires with it).'),
    }),
    max_sessions: Type.Integer({
      default: 32,
      minimum: 1,
      maximum: 1000,
      ...webuiMeta('Logged-in sessions kept at once; the oldest is ended when a new login would exceed it.'),
    }),
    login_max_failures: Type.Integer({
      default: 5,
      minimum: 1,
      maximum: 1000,
      ...webuiMeta(
        'Failed logins (and, counted apart, requests with a wrong API key) from one address that cost no wait; after them each further attempt waits login_delay_ms after the last failure, doubling up to login_max_delay_ms (429 while waiting). The right password after the wait always works.',
      ),
    }),
    login_window_ms: Type.Integer({
      default: 300000,
      minimum: 1000,
      maximum: 86400000,
      ...webuiMeta("An address's failed logins (or wrong API keys) are forgotten when it has had none for this long after its wait."),
    }),
    login_delay_ms: Type.Integer({
      default: 1000,
      minimum: 100,
      maximum: 60000,
      ...webuiMeta('The wait after the first failure beyond login_max_failures; it doubles with each further failure.'),
    }),
    login_max_delay_ms: Type.Integer({
      default: 60000,
      minimum: 1000,
      maximum: 3600000,
      ...webuiMeta('The longest wait between two attempts from an address that keeps failing: at most one guess per this time.'),
    }),
    header_timeout_ms: Type.Integer({
      default: 10000,
      minimum: 100,
      maximum: 600000,
      ...webuiMeta('A client must send its request headers within this time (slow clients are cut off).', { requires_restart: true }),
    }),
    request_timeout_ms: Type.Integer({
      default: 30000,
      minimum: 100,
      maximum: 600000,
      ...webuiMeta('A whole request must arrive within this time.', { requires_restart: true }),
    }),
    idle_timeout_ms: Type.Integer({
      default: 5000,
      minimum: 100,
      maximum: 3600000,
      ...webuiMeta('An idle keep-alive connection is closed after this time.', { requires_restart: true }),
    }),
    max_connections: Type.Integer({
      default: 512,
      minimum: 1,
      maximum: 10000,
      ...webuiMeta(
        "Open connections at most; more are refused. High enough that a crowd of slow clients (each cut off after header_timeout_ms) leaves room for the household; keep it under the service's open-file limit (1024).",
        { requires_restart: true },
      ),
    }),
    body_limit_bytes: Type.Integer({
      default: 1048576,
      minimum: 1024,
      maximum: 104857600,
      ...webuiMeta('Largest request body of an API call (413 above it).', { requires_restart: true }),
    }),
    upload_limit_bytes: Type.Integer({
      default: 20971520,
      minimum: 1024,
      maximum: 1073741824,
      ...webuiMeta('Largest upload (plugin archive, knowledge file) in one request.', { requires_restart: true }),
    }),
    event_buffer: Type.Integer({
      default: 200,
      minimum: 10,
      maximum: 10000,
      ...webuiMeta('Agent events kept for SSE clients that reconnect with Last-Event-ID.', { requires_restart: true }),
    }),
    max_event_streams: Type.Integer({
      default: 16,
      minimum: 1,
      maximum: 1000,
      ...webuiMeta('Open event streams (SSE) at most; the oldest is closed when another would exceed it.'),
    }),
    chat_timeout_ms: Type.Integer({
      default: 300000,
      minimum: 1000,
      maximum: 3600000,
      ...webuiMeta("How long a chat request (web page or /v1/chat/completions) waits for the agent's answer."),
    }),
    model_name: Type.String({
      default: 'homeagent',
      minLength: 1,
      maxLength: 64,
      pattern: '^[A-Za-z0-9._:-]+$',
      ...webuiMeta('The model id /v1/models lists and /v1/chat/completions answers as.'),
    }),
  },
  { additionalProperties: false, default: {} },
);

export type WebuiSettings = Static<typeof settingsSchema>;

/** plugin.onebot.* as the unit tests run the plugin (the schema's defaults, with a token, owners and one group). */
export const TOKEN = 'onebot-test-token-0123456789';

export const DEFAULTS = {
  enabled: true,
  mode: 'reverse',
  host: '127.0.0.1',
  port: 0,
  path: '/onebot/v11/ws',
  url: '',
  access_token: TOKEN,
  owners: [10001001],
  allow_users: [],
  allow_groups: ['20002002'],
  require_at_in_groups: true,
  refuse_reply: true,
  action_timeout_ms: 10000,
  max_message_chars: 4000,
  max_sends_per_turn: 3,
  reconnect_min_ms: 1000,
  reconnect_max_ms: 30000,
};

/**
 * Every built-in setting brings its description in both languages: the settings page and
 * `homeagentctl config` speak Chinese where the reader does, so a setting added with an English
 * description only fails here. The Chinese one keeps what a reader types or looks up in ASCII:
 * key names, commands in backticks, paths and units stay as they are in the English one.
 */
import t from 'tap';
import { BUILTIN_DEFINITIONS } from '../../../src/config/definitions.js';
import { SettingsRegistry } from '../../../src/config/settings-registry.js';
import { pluginSettingDefinitions } from '../../../src/plugin/plugin-settings.js';
import { textLanguage } from '../../../src/shared/language.js';

/** `homeagentctl kb token`, `logs.recent`: what is quoted as code. */
const CODE_SPAN = /`[^`]+`/g;
/** Setting keys and other snake_case or dotted names (login_delay_ms, core.supervisor.heartbeat_interval_ms). */
const KEY_NAME = /\b[a-z][a-z0-9]*(?:[_.][a-z0-9*]+)+\b/g;

function asciiTokens(english: string): string[] {
  const tokens = [...(english.match(CODE_SPAN) ?? []), ...(english.replace(CODE_SPAN, ' ').match(KEY_NAME) ?? [])];
  // "e.g." is English prose, not a name.
  return [...new Set(tokens)].filter((token) => token !== 'e.g');
}

t.test('every built-in setting has a Chinese description', async (t) => {
  t.ok(BUILTIN_DEFINITIONS.length > 300, 'the built-in definitions are all there');
  const missing = BUILTIN_DEFINITIONS.filter((d) => d.description_zh === undefined || d.description_zh.trim() === '').map((d) => d.key);
  t.same(missing, [], 'settings without description_zh');
  const notChinese = BUILTIN_DEFINITIONS.filter((d) => d.description_zh !== undefined && textLanguage(d.description_zh) !== 'zh').map(
    (d) => d.key,
  );
  t.same(notChinese, [], 'description_zh that holds no Chinese');
});

t.test('the Chinese description keeps the names, commands and keys of the English one', async (t) => {
  const lost: string[] = [];
  for (const d of BUILTIN_DEFINITIONS) {
    const zh = d.description_zh ?? '';
    for (const token of asciiTokens(d.description)) if (!zh.includes(token)) lost.push(`${d.key}: ${token}`);
  }
  t.same(lost, [], 'ASCII tokens of the English description missing from the Chinese one');
});

t.test('a setting view carries both descriptions; an external plugin may bring a Chinese one or not', async (t) => {
  const [withZh, withoutZh] = pluginSettingDefinitions({
    name: 'weather',
    version: '1.0.0',
    description: 'Weather',
    config: {
      city: { type: 'string', default: 'Berlin', description: 'City the forecast is for.', description_zh: '预报所针对的城市。' },
      units: { type: 'string', default: 'metric', description: 'Units of the forecast.' },
    },
  } as unknown as Parameters<typeof pluginSettingDefinitions>[0]);
  t.equal(withZh?.description_zh, '预报所针对的城市。');
  t.equal(withoutZh?.description_zh, undefined, 'no Chinese description: the page shows the English one');
  t.equal(withoutZh?.description, 'Units of the forecast.');
  // The registry's view (what config.get/config.list answer, and the page reads) passes it on.
  const registry = new SettingsRegistry({
    database: () => {
      throw new Error('not opened in this test');
    },
    definitions: BUILTIN_DEFINITIONS,
    loaded: { config: {}, sources: new Map(), file: undefined, pluginSections: [] } as never,
    events: { emit: () => undefined } as never,
    logs: { child: () => ({}), audit: () => undefined } as never,
    clock: { now: () => 0 } as never,
  });
  const view = registry.get('core.agent.max_tool_turns');
  t.match(view.description_zh, /LLM/);
  t.equal(view.description, BUILTIN_DEFINITIONS.find((d) => d.key === 'core.agent.max_tool_turns')?.description);
});

import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import t from 'tap';
import {
  BUILTIN_DEFINITIONS,
  checkValue,
  coerceText,
  definitionFromLeaf,
  definitionsFromSchema,
  describeExpected,
  describeFound,
  ENV_PREFIX,
  envNameForKey,
  NON_SETTING_ENV,
  type SettingDefinition,
} from '../../../src/config/definitions.js';
import { expectError } from '../fixtures/support.js';

function def(key: string): SettingDefinition {
  const found = BUILTIN_DEFINITIONS.find((d) => d.key === key);
  if (!found) throw new Error(`no definition ${key}`);
  return found;
}

t.test('environment names', async (t) => {
  t.equal(envNameForKey('core.llm.base_url'), 'HOMEAGENT_LLM_BASE_URL');
  t.equal(envNameForKey('core.data_dir'), 'HOMEAGENT_DATA_DIR');
  t.equal(envNameForKey('plugin.cli.socket_path'), 'HOMEAGENT_PLUGIN_CLI_SOCKET_PATH');
  t.equal(envNameForKey('plugin.my-plugin.x'), 'HOMEAGENT_PLUGIN_MY_PLUGIN_X');
});

t.test('no two settings map to the same environment variable', async (t) => {
  const byEnv = new Map<string, string>();
  for (const d of BUILTIN_DEFINITIONS) {
    const other = byEnv.get(d.env);
    t.notOk(other, `${d.key} and ${other ?? '-'} share ${d.env}`);
    byEnv.set(d.env, d.key);
    t.equal(d.env, envNameForKey(d.key));
    t.ok(d.env.startsWith(ENV_PREFIX));
    t.notOk(NON_SETTING_ENV.has(d.env), `${d.env} does not clash with a non-setting variable`);
  }
  t.equal(byEnv.size, BUILTIN_DEFINITIONS.length);
});

t.test('every definition is complete and its default fits its own schema', async (t) => {
  t.ok(BUILTIN_DEFINITIONS.length > 10);
  const keys = new Set<string>();
  for (const d of BUILTIN_DEFINITIONS) {
    t.notOk(keys.has(d.key), `${d.key} is unique`);
    keys.add(d.key);
    t.match(d.key, /^(core|plugin)\.[a-z0-9_.-]+$/, `${d.key} lives under core. or plugin.`);
    t.type(d.description, 'string');
    t.ok(d.description.length > 10, `${d.key} has a description`);
    t.type(d.requires_restart, 'boolean', `${d.key} says whether it requires a restart`);
    t.ok('default' in d && d.default !== undefined, `${d.key} has a default`);
    t.ok(Value.Check(d.schema, d.default), `${d.key}: default ${JSON.stringify(d.default)} passes its own schema`);
    t.equal(checkValue(d, d.default), undefined);
    t.ok(d.category.length > 0, `${d.key} has a category`);
    if (d.type === 'integer' || d.type === 'number') {
      t.ok(d.minimum !== undefined && d.maximum !== undefined, `${d.key} is bounded`);
    }
    if (d.type === 'string') t.ok(d.max_length !== undefined || d.pattern !== undefined, `${d.key} is bounded in length`);
    if (d.file_only) t.ok(d.requires_restart, `${d.key}: a file-only setting is read at boot, so it requires a restart`);
  }
});

t.test('describeExpected', async (t) => {
  t.equal(describeExpected(def('core.daemon.stop_timeout_ms')), 'an integer from 1000 to 120000');
  t.equal(describeExpected(def('core.store.startup_check')), 'one of full, quick, off');
  t.equal(describeExpected(def('plugin.cli.enabled')), 'true or false');
  t.equal(describeExpected(def('core.log.levels')), 'a mapping (key: value)');
  t.match(describeExpected(def('plugin.cli.socket_mode')), 'an octal file mode within 0660');
  t.match(describeExpected(def('core.llm.model')), 'a string of at most 256 characters');
});

t.test('describeFound', async (t) => {
  t.equal(describeFound('x'), '"x"');
  t.equal(describeFound(5), '5');
  t.equal(describeFound(undefined), 'nothing');
  t.equal(describeFound(null), 'null');
  t.equal(describeFound({ a: 1 }), '{"a":1}');
  const long = describeFound('y'.repeat(500));
  t.equal(long.length, 80, 'long values are shortened');
  t.ok(long.endsWith('...'));
  t.equal(describeFound('hunter2', true), 'a value (hidden: secret)');
  t.notMatch(describeFound({ password: 'hunter2' }, true), 'hunter2');
});

t.test('checkValue hides secrets', async (t) => {
  const apiKey = def('core.llm.api_key');
  t.equal(apiKey.secret, true);
  const problem = checkValue(apiKey, 42);
  t.match(problem, 'found a value (hidden: secret)');
  t.notMatch(problem, '42');
  t.equal(checkValue(apiKey, 'sk-ok'), undefined);
});

t.test('coerceText', async (t) => {
  const int = def('core.daemon.stop_timeout_ms');
  const bool = def('plugin.cli.enabled');
  const obj = def('core.log.levels');
  const str = def('core.name');
  t.equal(coerceText(int, '1e3'), 1000);
  t.equal(coerceText(int, ' 12 '), 12);
  t.equal(coerceText(int, '0x10'), 16, 'Number() accepts hex');
  t.equal(coerceText(int, 'twelve'), 'twelve', 'unconvertible text is returned for checkValue to report');
  t.equal(coerceText(int, ''), '', 'empty text is not zero');
  t.equal(coerceText(int, '   '), '   ');
  t.equal(coerceText(int, 'Infinity'), 'Infinity');
  for (const yes of ['yes', 'YES', 'true', '1', 'on', ' On ']) t.equal(coerceText(bool, yes), true, `${yes} → true`);
  for (const no of ['no', 'false', '0', 'off', 'OFF']) t.equal(coerceText(bool, no), false, `${no} → false`);
  t.equal(coerceText(bool, 'maybe'), 'maybe');
  t.same(coerceText(obj, ' {"store": "debug"} '), { store: 'debug' });
  t.equal(coerceText(obj, '{not json'), '{not json');
  t.equal(coerceText(str, ' 12 '), ' 12 ', 'strings are kept exactly');
});

t.test('definitionFromLeaf', async (t) => {
  const d = definitionFromLeaf(
    'plugin.x.count',
    Type.Integer({ default: 3, minimum: 1, maximum: 9, description: 'How many.', requires_restart: false, category: 'plugin.x' }),
  );
  t.equal(d.type, 'integer');
  t.equal(d.env, 'HOMEAGENT_PLUGIN_X_COUNT');
  t.equal(d.minimum, 1);
  t.equal(d.maximum, 9);
  t.equal(d.secret, false);
  t.equal(d.file_only, false);

  const e = definitionFromLeaf(
    'plugin.x.mode',
    Type.Union([Type.Literal('a'), Type.Literal('b')], {
      default: 'a',
      description: 'Mode.',
      requires_restart: true,
      category: 'plugin.x',
    }),
  );
  t.equal(e.type, 'enum');
  t.same(e.enum, ['a', 'b']);

  expectError(t, () => definitionFromLeaf('plugin.x.bad', Type.Integer({ default: 1 })), 'HA_ERR_SETTINGS_DEFINITION');
  expectError(
    t,
    () => definitionFromLeaf('plugin.x.nodefault', Type.Integer({ description: 'No default.', requires_restart: false, category: 'x' })),
    'HA_ERR_SETTINGS_DEFINITION',
  );
  const misfit = expectError(
    t,
    () =>
      definitionFromLeaf(
        'plugin.x.misfit',
        Type.Integer({ default: 50, maximum: 10, description: 'Misfit.', requires_restart: false, category: 'x' }),
      ),
    'HA_ERR_SETTINGS_DEFINITION',
  );
  t.match(misfit.message, 'does not fit its own schema');
  expectError(
    t,
    () => definitionFromLeaf('plugin.x.null', Type.Null({ default: null, description: 'Null.', requires_restart: false, category: 'x' })),
    'HA_ERR_SETTINGS_DEFINITION',
  );
});

t.test('definitionsFromSchema walks sections in order', async (t) => {
  const schema = Type.Object({
    a: Type.Object({
      one: Type.Boolean({ default: true, description: 'One.', requires_restart: false, category: 'x' }),
      two: Type.String({ default: '', description: 'Two.', requires_restart: false, category: 'x' }),
    }),
    b: Type.Number({ default: 1.5, description: 'Bee.', requires_restart: true, category: 'x' }),
  });
  t.same(
    definitionsFromSchema(schema, 'plugin.y').map((d) => [d.key, d.type]),
    [
      ['plugin.y.a.one', 'boolean'],
      ['plugin.y.a.two', 'string'],
      ['plugin.y.b', 'number'],
    ],
  );
  expectError(t, () => definitionsFromSchema(Type.String()), 'HA_ERR_SETTINGS_DEFINITION');
});

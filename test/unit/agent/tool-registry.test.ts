import t from 'tap';
import { GET_PLUGIN_TOOLS, ToolRegistry } from '../../../src/agent/tool-registry.js';
import type { ToolProvider } from '../../../src/agent/types.js';
import { type ToolDefinition, ToolError, type ToolErrorInfo } from '../../../src/shared/tool.js';
import { type Asserts, captureLogs, expectError, silentLogs } from '../fixtures/support.js';
import { tool } from './fixtures/helpers.js';

const newRegistry = () => new ToolRegistry({ log: silentLogs().child('tools') });

const lamp = tool('set_lamp', () => 'ok', {
  owner: 'device:lamp',
  parameters: {
    type: 'object',
    properties: {
      on: { type: 'boolean', description: 'Switch the lamp on or off.' },
      brightness: { type: 'integer', minimum: 0, maximum: 100 },
      colour: { type: 'string', enum: ['warm', 'cold', 'red'] },
      label: { type: 'string' },
      tags: { type: 'array', items: { type: 'string' } },
      when: { type: 'string', format: 'date-time' },
    },
    required: ['on'],
    additionalProperties: false,
  },
});

function rejected(t: Pick<Asserts, 'fail'>, check: ReturnType<ToolRegistry['validate']>): ToolErrorInfo {
  if (check.ok) {
    t.fail(`expected a validation error, got args ${JSON.stringify(check.args)}`);
    return { reason: 'failed', detail: '' };
  }
  return check.error;
}

t.test('valid arguments pass through unchanged', async (t) => {
  const tools = newRegistry();
  const check = tools.validate(lamp, '{"on":true,"brightness":40,"colour":"warm","tags":["a"]}');
  t.same(check, { ok: true, args: { on: true, brightness: 40, colour: 'warm', tags: ['a'] } });
});

t.test('a missing required argument names the field and says what to add', async (t) => {
  const error = rejected(t, newRegistry().validate(lamp, '{"brightness":10}'));
  t.equal(error.reason, 'required');
  t.equal(error.field, 'on');
  t.match(error.detail, 'missing required argument "on"');
  t.match(error.hint, /add "on" \(boolean: Switch the lamp on or off\.\)/);
});

t.test('a wrong type names the field, the expected and the actual type', async (t) => {
  const error = rejected(t, newRegistry().validate(lamp, '{"on":true,"brightness":"bright"}'));
  t.equal(error.reason, 'type');
  t.equal(error.field, 'brightness');
  t.match(error.detail, '"brightness" must be integer, got string "bright"');
});

t.test('an enum violation lists the allowed values in the hint', async (t) => {
  const error = rejected(t, newRegistry().validate(lamp, '{"on":true,"colour":"blue"}'));
  t.equal(error.reason, 'enum');
  t.equal(error.field, 'colour');
  t.match(error.detail, '"blue"');
  t.equal(error.hint, 'allowed values: "warm", "cold", "red"');
});

t.test('range and format problems get their own reasons', async (t) => {
  const tools = newRegistry();
  const range = rejected(t, tools.validate(lamp, '{"on":true,"brightness":150}'));
  t.equal(range.reason, 'range');
  t.equal(range.field, 'brightness');
  t.match(range.detail, /must be <= 100, got 150/);
  const format = rejected(t, tools.validate(lamp, '{"on":true,"when":"tomorrow-ish"}'));
  t.equal(format.reason, 'format');
  t.equal(format.field, 'when');
  t.ok(tools.validate(lamp, '{"on":true,"when":"2026-05-01T08:30:00Z"}').ok, 'a real date-time passes');
});

t.test('invalid JSON and non-object arguments say how to send them', async (t) => {
  const tools = newRegistry();
  const bad = rejected(t, tools.validate(lamp, '{"on": tru'));
  t.equal(bad.reason, 'type');
  t.equal(bad.field, '(arguments)');
  t.match(bad.detail, /not valid JSON: .+/);
  t.match(bad.hint, 'JSON object');
  const array = rejected(t, tools.validate(lamp, '[true]'));
  t.equal(array.field, '(arguments)');
  t.match(array.detail, 'must be a JSON object, got array');
});

t.test('empty arguments mean no arguments; a twice-encoded object is unwrapped', async (t) => {
  const tools = newRegistry();
  const noArgs = tool('ping', () => 'pong');
  t.same(tools.validate(noArgs, ''), { ok: true, args: {} });
  t.same(tools.validate(lamp, JSON.stringify('{"on":false}')), { ok: true, args: { on: false } });
});

t.test('quoted booleans and numbers are accepted where the schema wants them, and only there', async (t) => {
  const tools = newRegistry();
  t.same(tools.validate(lamp, '{"on":"true","brightness":"12"}'), { ok: true, args: { on: true, brightness: 12 } }, '"true" and "12"');
  t.same(tools.validate(lamp, '{"on":"false"}'), { ok: true, args: { on: false } }, '"false"');
  t.same(tools.validate(lamp, '{"on":true,"label":"12"}'), { ok: true, args: { on: true, label: '12' } }, 'a string property keeps "12"');
  const notBool = rejected(t, tools.validate(lamp, '{"on":"yes"}'));
  t.equal(notBool.reason, 'type', '"yes" is not a boolean');
  t.equal(notBool.hint, 'use true or false');
  const fraction = rejected(t, tools.validate(lamp, '{"on":true,"brightness":"12.5"}'));
  t.equal(fraction.reason, 'type', '"12.5" is a number but not an integer');
  const scalarForArray = rejected(t, tools.validate(lamp, '{"on":true,"tags":"a"}'));
  t.equal(scalarForArray.reason, 'type', 'a string is not wrapped into an array');
  t.equal(scalarForArray.field, 'tags');
});

t.test('several problems: the first few are spelled out, the rest counted', async (t) => {
  const error = rejected(t, newRegistry().validate(lamp, '{"brightness":"x","colour":"blue","label":5,"tags":[1],"extra":1}'));
  t.equal(error.reason, 'required', 'the first problem sets reason and field');
  const parts = error.detail.split('; ');
  t.equal(parts.length, 4, 'three problems and a count');
  t.match(parts[3], /and \d+ more problems/);
});

t.test('unknown arguments are named with the known ones as hint', async (t) => {
  const error = rejected(t, newRegistry().validate(lamp, '{"on":true,"dim":3}'));
  t.equal(error.field, 'dim');
  t.match(error.detail, 'unknown argument "dim"');
  t.match(error.hint, 'on, brightness, colour');
});

t.test('nested fields are reported by path', async (t) => {
  const scene = tool('set_scene', () => 'ok', {
    parameters: {
      type: 'object',
      properties: {
        lights: { type: 'array', items: { type: 'object', properties: { level: { type: 'integer' } }, required: ['level'] } },
      },
    },
  });
  const tools = newRegistry();
  const error = rejected(t, tools.validate(scene, '{"lights":[{"level":1},{"level":"high"}]}'));
  t.equal(error.field, 'lights[1].level');
  t.same(
    tools.validate(scene, '{"lights":[{"level":"3"}]}'),
    { ok: true, args: { lights: [{ level: 3 }] } },
    'coercion reaches nested items',
  );
});

t.test('registration refuses bad names, duplicates and schemas that do not compile', async (t) => {
  const tools = newRegistry();
  tools.register(lamp);
  expectError(t, () => tools.register({ ...lamp }), 'HA_ERR_TOOL_DEFINITION');
  expectError(t, () => tools.register(tool('has space', () => 1)), 'HA_ERR_TOOL_DEFINITION');
  expectError(t, () => tools.register(tool('x'.repeat(65), () => 1)), 'HA_ERR_TOOL_DEFINITION');
  expectError(
    t,
    () => tools.register(tool('bad_schema', () => 1, { parameters: { type: 'object', properties: { a: { type: 'nonsense' } } } })),
    'HA_ERR_TOOL_DEFINITION',
  );
  expectError(t, () => tools.register(tool('not_object', () => 1, { parameters: { type: 'string' } })), 'HA_ERR_TOOL_DEFINITION');
  expectError(t, () => tools.register(tool(GET_PLUGIN_TOOLS, () => 1)), 'HA_ERR_TOOL_DEFINITION');
  tools.register(tool('x'.repeat(64), () => 1));
  tools.register(tool('drafted', () => 1, { parameters: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' } }));
  t.ok(tools.get('drafted'), 'an unknown $schema draft does not block a tool');
  const dangling = tool('dangling_ref', () => 1, { parameters: { type: 'object', properties: { a: { $ref: '#/definitions/none' } } } });
  tools.register(dangling);
  t.match(
    tools.validate(dangling, '{"a": 1}'),
    { ok: false, error: { reason: 'failed', detail: /argument schema is invalid/ } },
    'a schema that passes the meta-schema but cannot compile fails its calls with a reason, not the loop',
  );
});

t.test('unregister and removeOwner remove static tools', async (t) => {
  const tools = newRegistry();
  const off = tools.register(tool('a', () => 1, { owner: 'plugin:one' }));
  tools.register(tool('b', () => 1, { owner: 'plugin:one' }));
  tools.register(tool('c', () => 1, { owner: 'plugin:two' }));
  off();
  t.equal(tools.get('a'), undefined);
  tools.removeOwner('plugin:one');
  t.same(
    tools.list().map((l) => l.name),
    [GET_PLUGIN_TOOLS, 'c'],
  );
  t.equal(tools.unregister('c'), true);
  t.equal(tools.unregister('c'), false);
});

t.test('provider tools appear and disappear with the provider’s set', async (t) => {
  const captured = captureLogs();
  const tools = new ToolRegistry({ log: captured.logs.child('tools') });
  const channels: ToolDefinition[] = [tool('output_send__qq', () => 'ok', { owner: 'io' })];
  const provider: ToolProvider = { owner: 'io', tools: () => channels };
  const remove = tools.addProvider(provider);
  t.ok(tools.get('output_send__qq'), 'a provider tool is found');
  channels.push(tool('output_send__speaker', () => 'ok', { owner: 'io' }));
  t.same(
    tools
      .list()
      .filter((l) => l.owner === 'io')
      .map((l) => l.name),
    ['output_send__qq', 'output_send__speaker'],
    'a new channel shows on the next listing',
  );
  channels.shift();
  t.equal(tools.get('output_send__qq'), undefined, 'a removed channel is gone');
  channels.push(
    tool('output_send__speaker', () => 'dup', { owner: 'io' }),
    tool('bad name', () => 1, { owner: 'io' }),
  );
  t.same(
    tools
      .list()
      .filter((l) => l.owner === 'io')
      .map((l) => l.name),
    ['output_send__speaker'],
    'duplicates and bad names from a provider are left out',
  );
  tools.list();
  t.equal(captured.records().filter((r) => r.level === 'warn').length, 2, 'each problem is logged once');
  expectError(t, () => tools.register(tool('output_send__speaker', () => 1)), 'HA_ERR_TOOL_DEFINITION');
  remove();
  t.same(
    tools.list().map((l) => l.name),
    [GET_PLUGIN_TOOLS],
  );
});

t.test('a throwing provider is logged and left out', async (t) => {
  const captured = captureLogs();
  const tools = new ToolRegistry({ log: captured.logs.child('tools') });
  tools.addProvider({
    owner: 'plugin:broken',
    tools: () => {
      throw new Error('provider exploded');
    },
  });
  t.same(
    tools.list().map((l) => l.name),
    [GET_PLUGIN_TOOLS],
  );
  t.ok(captured.records().some((r) => r.level === 'error' && r.owner === 'plugin:broken'));
});

t.test('list and specs are sorted by owner, then name; specs carry no owner', async (t) => {
  const tools = newRegistry();
  tools.register(tool('zeta', () => 1, { owner: 'plugin:a' }));
  tools.register(tool('alpha', () => 1, { owner: 'plugin:b' }));
  tools.register(tool('beta', () => 1, { owner: 'plugin:a' }));
  t.same(
    tools.list().map((l) => `${l.owner}/${l.name}`),
    ['core/get_plugin_tools', 'plugin:a/beta', 'plugin:a/zeta', 'plugin:b/alpha'],
  );
  const spec = tools.specs()[1];
  t.same(spec, { name: 'beta', description: 'the beta tool', parameters: { type: 'object', properties: {} } });
});

t.test('the summary groups by owner with counts and descriptions cut to 60 characters', async (t) => {
  const tools = newRegistry();
  const long = `Turns the living room lamp on or off and sets its brightness, colour and timer. ${'x'.repeat(40)}`;
  tools.register(tool('lamp', () => 1, { owner: 'device:lamp', description: long }));
  tools.register(tool('lamp_status', () => 1, { owner: 'device:lamp', description: 'Reads the lamp.\n  Cheap.' }));
  const summary = tools.summaryByOwner();
  t.same(
    summary.map((g) => [g.owner, g.count]),
    [
      ['core', 1],
      ['device:lamp', 2],
    ],
  );
  const [cut, short] = summary[1]?.tools ?? [];
  t.equal(Array.from(cut?.description ?? '').length, 60, 'cut to 60 characters');
  t.ok(cut?.description.endsWith('…'), 'with a visible ellipsis');
  t.ok(long.startsWith(cut?.description.slice(0, -1) ?? '-'), 'the start of the description');
  t.equal(short?.description, 'Reads the lamp. Cheap.', 'one line');
});

t.test('get_plugin_tools returns full schemas by owner or by name', async (t) => {
  const tools = newRegistry();
  tools.register(lamp);
  tools.register(tool('timer_set', () => 1, { owner: 'plugin:timer' }));
  const def = tools.get(GET_PLUGIN_TOOLS);
  if (!def) throw new Error('get_plugin_tools is missing');
  t.equal(def.owner, 'core');
  t.equal(def.parallel_safe, true);
  const context = {
    signal: new AbortController().signal,
    task_id: 't',
    call_id: 'c',
    source: 'cli',
    channel: 'cli',
    trust: 'owner' as const,
  };

  const byOwner = (await def.execute({ owner: 'device:lamp' }, context)) as { tools: Array<Record<string, unknown>> };
  t.same(byOwner.tools, [
    { name: 'set_lamp', description: lamp.description, parameters: lamp.parameters, owner: 'device:lamp', tier: 'act' },
  ]);

  const byName = (await def.execute({ names: ['timer_set', 'nope'] }, context)) as { tools: Array<{ name: string }>; unknown: string[] };
  t.same(
    byName.tools.map((x) => x.name),
    ['timer_set'],
  );
  t.same(byName.unknown, ['nope']);

  t.throws(() => def.execute({ owner: 'plugin:ghost' }, context), ToolError);
  try {
    await def.execute({}, context);
    t.fail('expected a ToolError');
  } catch (error) {
    t.ok(error instanceof ToolError);
    t.match((error as ToolError).info, { reason: 'required', hint: /core, device:lamp, plugin:timer/ });
  }
  t.ok(tools.validate(def, '{"names":"set_lamp"}').ok === false, 'names must be an array');
});

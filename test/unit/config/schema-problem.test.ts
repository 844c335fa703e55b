/**
 * Configuration problems inside a union name what is allowed: a union of literals or an enum lists
 * its values (with the near misses), a union of objects told apart by a literal field is judged
 * against the alternative the field names (or lists the field's values), other unions name their
 * kinds. The last subtests go through the real loader with a real file: the lines a person reads.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import t from 'tap';
import { loadConfig } from '../../../src/config/loader.js';
import { firstSchemaProblem } from '../../../src/config/schema-problem.js';
import type { HomeAgentError } from '../../../src/shared/errors.js';
import { tempDir } from '../fixtures/support.js';

const Driver = Type.Union(['bme280', 'aht20', 'sht3x'].map((d) => Type.Literal(d)));
const Shape = Type.Union([
  Type.Object({ kind: Type.Literal('circle'), radius: Type.Number() }, { additionalProperties: false }),
  Type.Object(
    { kind: Type.Literal('square'), side: Type.Number(), colour: Type.String({ default: 'red' }) },
    { additionalProperties: false },
  ),
  Type.Object({ kind: Type.Union([Type.Literal('and'), Type.Literal('or')]), items: Type.Array(Type.String()) }),
]);

t.test('a union of literals lists its values and the near misses', async (t) => {
  const schema = Type.Object({ sensors: Type.Array(Type.Object({ driver: Driver })) });
  t.same(firstSchemaProblem(schema, { sensors: [{ driver: 'bme280' }, { driver: 'bme281' }] }), {
    path: '/sensors/1/driver',
    text: 'expected one of bme280, aht20, sht3x, found "bme281" (did you mean bme280?)',
  });
  t.same(firstSchemaProblem(schema, { sensors: [{ driver: 7 }] }), {
    path: '/sensors/0/driver',
    text: 'expected one of bme280, aht20, sht3x, found 7',
  });
  t.equal(firstSchemaProblem(schema, { sensors: [{ driver: 'aht20' }] }), undefined, 'a fitting value has no problem');
});

t.test('an enum lists its values', async (t) => {
  const schema = Type.Object({ level: Type.Enum({ Low: 'low', High: 'high' }) });
  t.same(firstSchemaProblem(schema, { level: 'hgh' }), {
    path: '/level',
    text: 'expected one of low, high, found "hgh" (did you mean high?)',
  });
  t.same(firstSchemaProblem(schema, { level: 'medium' }), { path: '/level', text: 'expected one of low, high, found "medium"' });
});

t.test('a union of objects with a literal field: judged against the alternative the field names', async (t) => {
  const schema = Type.Array(Shape);
  t.same(
    firstSchemaProblem(schema, [{ kind: 'circle', radius: 'big' }]),
    { path: '/0/radius', text: 'expected number, found "big"' },
    "the circle's own field is named, not the union",
  );
  t.same(
    firstSchemaProblem(schema, [{ kind: 'square', side: 2, colur: 'blue' }]),
    { path: '/0/colur', text: 'unknown key (did you mean colour?), expected one of: kind, side, colour' },
    'an unknown key of the matching alternative (its defaults filled in first)',
  );
  t.same(firstSchemaProblem(schema, [{ kind: 'or', items: [1] }]), { path: '/0/items/0', text: 'expected string, found 1' });
  t.same(
    firstSchemaProblem(schema, [{ kind: 'cirle', radius: 1 }]),
    { path: '/0/kind', text: 'expected one of circle, square, and, or, found "cirle" (did you mean circle?)' },
    'no alternative matches: the field and its allowed values',
  );
  t.same(firstSchemaProblem(schema, [{ radius: 1 }]), { path: '/0/kind', text: 'expected one of circle, square, and, or, found nothing' });
});

t.test('nested unions are flattened; other unions name their kinds', async (t) => {
  const nested = Type.Union([Type.Union([Type.Literal('on'), Type.Literal('off')]), Type.Literal('toggle')]);
  t.same(firstSchemaProblem(Type.Object({ x: nested }), { x: 'dim' }), {
    path: '/x',
    text: 'expected one of on, off, toggle, found "dim"',
  });
  const value = Type.Union([Type.String(), Type.Number()]);
  const match = Type.Union([value, Type.Array(value)]);
  t.same(firstSchemaProblem(Type.Object({ to: match }), { to: { a: 1 } }), {
    path: '/to',
    text: 'expected a string, a number or a list, found {"a":1}',
  });
  t.same(
    firstSchemaProblem(Type.Object({ to: match }), { to: ['on', true] }),
    { path: '/to/1', text: 'expected a string or a number, found true' },
    'a list where a list is allowed: the wrong item is named',
  );
});

t.test('hidden values are not repeated', async (t) => {
  const problem = firstSchemaProblem(Type.Object({ mode: Driver }), { mode: 'bme281' }, true);
  t.same(problem, { path: '/mode', text: 'expected one of bme280, aht20, sht3x' });
});

function problemsOf(text: string): string[] {
  const file = join(tempDir(t), 'config.yaml');
  writeFileSync(file, text);
  try {
    loadConfig({ file, env: {}, systemFile: '/nonexistent/homeagent/config.yaml' });
  } catch (error) {
    return (((error as HomeAgentError).details?.problems as string[] | undefined) ?? [String(error)]).map((p) =>
      p.replace(` (in ${file})`, ''),
    );
  }
  return [];
}

t.test('through the loader: an i2c driver and an automation trigger type that do not exist', async (t) => {
  const problems = problemsOf(
    [
      'plugin:',
      '  i2c:',
      '    sensors:',
      '      - { id: living_room, driver: bme281 }',
      'core:',
      '  automations:',
      '    rules:',
      '      - id: hall',
      '        triggers: [{ type: edge, pin: hall_button, edge: up }]',
      '        actions: [{ type: service, entity_id: switch.hall, service: turn_on }]',
      '  log:',
      '    levels: { store: verbose }',
    ].join('\n'),
  );
  t.same(
    problems.sort(),
    [
      'core.automations.rules[0].triggers[0].edge: expected one of rising, falling, both, found "up"',
      'core.log.levels.store: expected one of fatal, error, warn, info, debug, trace, silent, found "verbose"',
      'plugin.i2c.sensors[0].driver: expected one of bme280, aht20, sht3x, bh1750, found "bme281" (did you mean bme280?)',
    ],
    problems.join('\n'),
  );
});

t.test('through the loader: a condition type, and a field of the action its type names', async (t) => {
  const rule = (extra: string[]) =>
    ['core:', '  automations:', '    rules:', '      - id: r', '        triggers: [{ type: state, entity_id: x }]', ...extra].join('\n');
  t.same(problemsOf(rule(['        conditions: [{ type: nand, conditions: [] }]', '        actions: [{ type: delay, seconds: 1 }]'])), [
    'core.automations.rules[0].conditions[0].type: expected one of state, numeric, time, and, or, not, found "nand" (did you mean and?)',
  ]);
  t.same(
    problemsOf(rule(['        actions: [{ type: delay, secs: 1 }]'])),
    ['core.automations.rules[0].actions[0].secs: unknown key, expected one of: type, seconds'],
    'the misspelt key, not the required one it leaves missing',
  );
  t.same(problemsOf(rule(['        actions: [{ type: delay }]'])), ['core.automations.rules[0].actions[0].seconds: required, but missing']);
});

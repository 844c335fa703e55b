import t from 'tap';
import { type OptionTable, parseArgs, resolveLong } from '../../../../plugins/cmd/getopt.js';

const TABLE: OptionTable = {
  short: { n: 'none', o: 'required', i: 'optional' },
  long: {
    output: { arg: 'required', short: 'o' },
    'in-place': { arg: 'optional', short: 'i' },
    quiet: { arg: 'none', short: 'n' },
    silent: { arg: 'none', short: 'n' },
    debug: { arg: 'none' },
    'debug-level': { arg: 'required' },
  },
};

t.test('short options, clusters and attached values', async (t) => {
  const parsed = parseArgs(['-nofile', '-i.bak', '-i', 'x', '-o', 'y', '-'], TABLE);
  t.same(
    parsed.options.map((o) => [o.name, o.value ?? null, o.separate]),
    [
      ['-n', null, false],
      ['-o', 'file', false],
      ['-i', '.bak', false],
      ['-i', null, false],
      ['-o', 'y', true],
    ],
  );
  t.same(parsed.operands, ['x', '-']);
});

t.test('long options, abbreviations and --', async (t) => {
  const parsed = parseArgs(['--out=a', '--output', 'b', '--in-place', '--qu', 'op', '--', '--output=c', '-n'], TABLE);
  t.same(
    parsed.options.map((o) => [o.name, o.value ?? null]),
    [
      ['-o', 'a'],
      ['-o', 'b'],
      ['-i', null],
      ['-n', null],
    ],
  );
  t.same(parsed.operands, ['op', '--output=c', '-n']);
  t.same(parseArgs(['--x', '-z'], TABLE).unknown, ['--x', '-z']);
});

t.test('ambiguous abbreviations', async (t) => {
  t.equal(resolveLong(TABLE, 'debug')?.[0], 'debug', 'an exact name wins over longer ones');
  t.equal(resolveLong(TABLE, 'deb'), undefined, 'debug or debug-level');
  t.equal(resolveLong(TABLE, 's')?.[0], 'silent');
  t.equal(resolveLong({ ...TABLE, long: { ...TABLE.long, sandbox: { arg: 'none' } } }, 's'), undefined);
  t.equal(
    resolveLong({ ...TABLE, long: { quiet: { arg: 'none', short: 'n' }, quieter: { arg: 'none', short: 'n' } } }, 'qui')?.[1].short,
    'n',
    'synonyms are not ambiguous',
  );
});

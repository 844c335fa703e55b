import { spawnSync } from 'node:child_process';
import t from 'tap';
import { scanSedScript } from '../../../../plugins/cmd/sed-script.js';

function effects(script: string): string[] {
  return [...scanSedScript(script).effects].sort();
}

t.test('finds commands that run, write or read', async (t) => {
  t.same(effects('1e id'), ['e']);
  t.same(effects('e'), ['e']);
  t.same(effects('s/a/b/e'), ['e']);
  t.same(effects('s/a/b/gpe'), ['e']);
  t.same(effects('s/a/b/ e'), ['e']);
  t.same(effects('w /tmp/x'), ['w']);
  t.same(effects('W /tmp/x'), ['w']);
  t.same(effects('s/a/b/w /tmp/x'), ['w']);
  t.same(effects('s/a/b/3w x'), ['w']);
  t.same(effects('r /etc/passwd'), ['r']);
  t.same(effects('$R /etc/passwd'), ['r']);
  t.same(effects('/x/{p;w f\n}'), ['w']);
  t.same(effects('y/abc/xyz/;e'), ['e']);
  t.same(effects('s|a|b|;w x'), ['w']);
  t.same(effects('s/a\\/b/c/e'), ['e']);
  t.same(effects('\\%x%w f'), ['w']);
  t.same(effects('0,/x/e'), ['e']);
  t.same(effects('1~2w f'), ['w']);
  t.same(effects('2,+3!e'), ['e']);
  t.same(effects('#n\nw f'), ['w']);
  t.same(effects(':a w f'), ['w']);
  t.same(effects('b end;w f'), ['w']);
  t.same(effects('a\\\ntext\ne id'), ['e']);
});

t.test('harmless scripts', async (t) => {
  for (const script of [
    'p',
    's/a/b/g',
    's/e/w/g',
    's/w/e/;s/r/R/',
    'y/ewr/rwe/',
    '/error/d',
    '/w/!p',
    'a write e text',
    'i\\\ninsert w text',
    'c change',
    ':a;N;$!ba;s/\\n/ /g',
    '1~3{p;=}',
    '$!N;P;D',
    's|[^/]*$||',
    '# a comment with w and e',
    'q5',
    'l 40',
    '\\,x,p',
    's/x/\\\n/',
  ]) {
    t.same(scanSedScript(script), { effects: new Set() }, JSON.stringify(script));
  }
});

t.test('scripts it cannot read are errors', async (t) => {
  for (const script of ['s/a/b', 's/a/b/x', 'p;}', '{p', 'k', 's\nabc\n', 'y/a/b', '1,', ':', 's/[[:al/]/x/', 'p q']) {
    t.type(scanSedScript(script).error, 'string', JSON.stringify(script));
  }
  t.match(scanSedScript('/[/]/p').error, /read differently by older sed versions/);
});

/** GNU sed --sandbox refuses e/r/w at compile time: every script it refuses that way must be caught. */
const sandbox = spawnSync('sed', ['--sandbox', '-n', 'p', '/dev/null'], { encoding: 'utf8' });
t.test('agrees with GNU sed --sandbox', { skip: sandbox.status === 0 ? false : 'GNU sed with --sandbox is not installed' }, async (t) => {
  let seed = 20240611;
  const random = () => {
    seed = (seed * 48271) % 2147483647;
    return seed / 2147483647;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const piece = () =>
    pick(['a', '/', '[', ']', '[/]', '[^]/]', '[[:alpha:]/]', '\\/', '\\n', '|', ';', '\n', ' ', 'e', 'w x', '}', '{', '#', '%']);
  const text = () => Array.from({ length: Math.floor(random() * 4) }, piece).join('');
  const address = () => pick(['', '1', '$', `/${text()}/`, `\\%${text()}%`, '1~2', `0,/${text()}/`, '2,+3', '$!']);
  const command = () =>
    pick([
      'p',
      'd',
      '=',
      'N',
      'l 3',
      'q5',
      '{p}',
      '{',
      '}',
      `s/${text()}/${text()}/${pick(['', 'g', 'e', 'w f', ' g', 'I', '3', ';p', 'e;p'])}`,
      `s|${text()}|${text()}|${pick(['', 'e', 'w /tmp/q'])}`,
      `y/${text()}/${text()}/`,
      `a ${text()}`,
      `a\\\n${text()}`,
      `i\\${text()}`,
      `:${pick(['a', 'a;w x', ' b'])}`,
      `b${pick(['', ' a', 'a;w x', ' e'])}`,
      'T x',
      'e',
      'e ls',
      'w f',
      'W f',
      'r f',
      'R f',
      `#${text()}`,
      'v 4.2',
    ]);
  const scripts = Array.from({ length: 150 }, () =>
    Array.from({ length: 1 + Math.floor(random() * 3) }, (_, i) => (i ? pick([';', '\n', ' ; ']) : '') + address() + command()).join(''),
  );
  let missed = 0;
  let checked = 0;
  for (const script of scripts) {
    const gnu = spawnSync('sed', ['--sandbox', '-n', '-e', script, '/dev/null'], { encoding: 'utf8' });
    if (!/sandbox/.test(gnu.stderr)) continue;
    checked++;
    const scan = scanSedScript(script);
    if (scan.effects.size === 0 && scan.error === undefined) {
      missed++;
      t.fail(`GNU sed finds e/r/w in ${JSON.stringify(script)} but the scanner does not`);
    }
  }
  t.ok(checked > 20, `${checked} scripts GNU sed refuses in sandbox mode were compared`);
  t.equal(missed, 0, 'none of them passes the scanner');
});

// `homeagentctl sequences …` (src/cli/sequences.ts): argument parsing and the readable output in
// English and Chinese; the commands against a real daemon are in test/integration/seq-daemon.test.ts.
import t from 'tap';
import { formatRun, formatSequences, parseSequencesCommand } from '../../../src/cli/sequences.js';

t.test('parseSequencesCommand reads each command and refuses what does not fit', async (t) => {
  t.same(parseSequencesCommand([], {}), { command: 'list' });
  t.same(parseSequencesCommand(['list'], {}), { command: 'list' });
  t.same(
    parseSequencesCommand(['run', 'good', 'night'], {}),
    { command: 'run', name: 'good night', args: {} },
    'the rest of the words are the name',
  );
  t.same(parseSequencesCommand(['run', '晚安'], { args: '{"minutes": 20}' }), { command: 'run', name: '晚安', args: { minutes: 20 } });
  t.same(parseSequencesCommand(['delete', 'good', 'night'], {}), { command: 'delete', name: 'good night' });
  t.throws(() => parseSequencesCommand(['run'], {}), /sequences run needs a NAME/);
  t.throws(() => parseSequencesCommand(['run', 'x'], { args: '[1]' }), /--args must be a JSON object/);
  t.throws(() => parseSequencesCommand(['run', 'x'], { args: '{oops' }), /--args must be a JSON object/);
  t.throws(() => parseSequencesCommand(['list'], { args: '{}' }), /--args belongs to sequences run/);
  t.throws(() => parseSequencesCommand(['list', 'x'], {}), /takes no arguments/);
  t.throws(() => parseSequencesCommand(['start', 'x'], {}), /unknown sequences command start/);
});

t.test('the list and a run read well in both languages', async (t) => {
  const listing = {
    sequences: [
      { name: 'good night', description: 'lights off', tier: 'act', groups: [{ name: 'lights' }, { name: 'report' }] },
      { name: 'old', broken: 'no groups' },
    ],
  };
  const en = formatSequences(listing, 'en');
  t.match(en, /NAME\s+TIER\s+GROUPS\s+DESCRIPTION/);
  t.match(en, /good night\s+act\s+lights, report\s+lights off/);
  t.match(en, /old\s+does not read: no groups/);
  t.match(formatSequences(listing, 'zh'), /good night\s+操作\s+lights, report/);
  t.match(formatSequences({ sequences: [] }, 'zh'), /还没有序列/);
  const run = {
    sequence: 'good night',
    tier: 'act',
    groups: [
      { name: 'lights', mode: 'parallel' as const, calls: [{}, {}] },
      { name: 'late', mode: 'skipped' as const, calls: [] },
    ],
    results: { first: { state: 'off' }, note: 'done' },
  };
  t.equal(
    formatRun(run, 'en'),
    'ran good night:\n  lights: side by side, 2 calls\n  late: skipped (condition false)\nresults:\n  first = {"state":"off"}\n  note = done',
  );
  t.equal(
    formatRun(run, 'zh'),
    '已运行 good night：\n  lights：同时，2 个调用\n  late：已跳过（条件不成立）\n结果：\n  first = {"state":"off"}\n  note = done',
  );
});

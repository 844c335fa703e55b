import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { EVAL_ERROR_CODE } from '../../../../src/eval/memory/eval-error.js';
import { loadLocomo, TURN_SPACING_MS } from '../../../../src/eval/memory/locomo.js';
import { parseLocomoDateTime } from '../../../../src/eval/memory/locomo-date.js';
import { expectError, expectErrorAsync, tempDir } from '../../fixtures/support.js';
import { syntheticConversation, writeConversation } from './fixtures/synthetic-locomo.js';

t.test('session dates are read as UTC on a 12-hour clock', async (t) => {
  t.equal(parseLocomoDateTime('1:47 pm on 18 May, 2023'), Date.UTC(2023, 4, 18, 13, 47));
  t.equal(parseLocomoDateTime('12:09 am on 13 September, 2023'), Date.UTC(2023, 8, 13, 0, 9), '12 am is midnight');
  t.equal(parseLocomoDateTime('12:30 pm on 1 January, 2024'), Date.UTC(2024, 0, 1, 12, 30), '12 pm is noon');
  t.equal(parseLocomoDateTime('11:59 PM on 31 December, 1999'), Date.UTC(1999, 11, 31, 23, 59), 'upper-case meridiem');
  t.equal(parseLocomoDateTime('9:05 a.m. on 29 February, 2024'), Date.UTC(2024, 1, 29, 9, 5), 'leap day, dotted meridiem');
  t.equal(parseLocomoDateTime('  7:00pm on 3 Sept 2023 '), Date.UTC(2023, 8, 3, 19, 0), 'abbreviated month, no comma, spaces');
  t.equal(parseLocomoDateTime('7:00 pm on 3 Jan., 0099'), new Date('0099-01-03T19:00:00Z').getTime(), 'years below 100 stay as written');
});

t.test('impossible or unknown dates are refused with the text quoted', async (t) => {
  for (const [text, reason] of [
    ['1:47 pm on 29 February, 2023', /has no day 29/],
    ['1:47 pm on 31 April, 2023', /has no day 31/],
    ['1:47 pm on 0 May, 2023', /has no day 0/],
    ['13:00 pm on 18 May, 2023', /hour 13/],
    ['0:30 am on 18 May, 2023', /hour 0/],
    ['1:60 pm on 18 May, 2023', /minute 60/],
    ['1:47 pm on 18 Smarch, 2023', /"Smarch" is not a month/],
    ['1:47 pm on 18 Ma, 2023', /"Ma" is not a month/],
    ['1:47 on 18 May, 2023', /is not a date like/],
    ['2023-05-18T13:47:00Z', /is not a date like/],
    ['', /is not a date like/],
  ] as const) {
    const error = expectError(t, () => parseLocomoDateTime(text), EVAL_ERROR_CODE);
    t.match(error.message, reason, text);
    t.ok(error.message.includes(JSON.stringify(text)), `names ${JSON.stringify(text)}`);
  }
});

t.test('turns become events with qualified ids, spaced timestamps, speakers and captions', async (t) => {
  const dir = writeConversation(tempDir(t), 'conv-a', syntheticConversation());
  const dataset = await loadLocomo(dir);
  t.equal(dataset.conversations.length, 1);
  const conversation = dataset.conversations[0];
  if (conversation === undefined) throw new Error('no conversation');
  t.equal(conversation.id, 'conv-a', 'a flat file is named after its file');
  t.same(conversation.speakers, ['Alice', 'Bob']);
  t.equal(conversation.sessions, 2, 'a date without turns is no session');
  const s1 = Date.UTC(2023, 4, 18, 13, 47);
  const s2 = Date.UTC(2023, 5, 3, 0, 5);
  t.same(conversation.events, [
    {
      source_id: 'conv-a/D1:1',
      dia_id: 'D1:1',
      conversation_id: 'conv-a',
      session: 1,
      timestamp: s1,
      speaker: 'Alice',
      text: 'I adopted a kitten called Miso yesterday.',
    },
    {
      source_id: 'conv-a/D1:2',
      dia_id: 'D1:2',
      conversation_id: 'conv-a',
      session: 1,
      timestamp: s1 + TURN_SPACING_MS,
      speaker: 'Bob',
      text: 'Cute! Look at my pottery. [image: a photo of a blue clay bowl]',
    },
    {
      source_id: 'conv-a/D1:3',
      dia_id: 'D1:3',
      conversation_id: 'conv-a',
      session: 1,
      timestamp: s1 + 2 * TURN_SPACING_MS,
      speaker: 'Alice',
      text: 'Wow, lovely glaze.',
    },
    {
      source_id: 'conv-a/D2:1',
      dia_id: 'D2:1',
      conversation_id: 'conv-a',
      session: 2,
      timestamp: s2,
      speaker: 'Bob',
      text: 'I moved to Lisbon for a new job.',
    },
    {
      source_id: 'conv-a/D2:2',
      dia_id: 'D2:2',
      conversation_id: 'conv-a',
      session: 2,
      timestamp: s2 + TURN_SPACING_MS,
      speaker: 'Alice',
      text: 'Lisbon sounds sunny. Is the job at a bakery?',
    },
    {
      source_id: 'conv-a/D2:3',
      dia_id: 'D2:3',
      conversation_id: 'conv-a',
      session: 2,
      timestamp: s2 + 2 * TURN_SPACING_MS,
      speaker: 'Bob',
      text: 'Yes, I bake bread at dawn.',
    },
  ]);
  t.ok(TURN_SPACING_MS > 0 && TURN_SPACING_MS <= 10_000, 'turns are a few seconds apart');
});

t.test('questions of categories 1–4 keep their split, qualified evidence; the rest is counted', async (t) => {
  const dir = writeConversation(tempDir(t), 'conv-a', syntheticConversation());
  const dataset = await loadLocomo(dir);
  const conversation = dataset.conversations[0];
  if (conversation === undefined) throw new Error('no conversation');
  t.same(
    conversation.questions.map((q) => [q.id, q.category, q.evidence, q.answer]),
    [
      ['conv-a/q0', 4, ['conv-a/D1:1'], 'Miso'],
      ['conv-a/q1', 1, ['conv-a/D1:2', 'conv-a/D2:1'], 'Lisbon'],
      ['conv-a/q2', 2, ['conv-a/D2:3'], '2023'],
      ['conv-a/q3', 3, ['conv-a/D1:3'], 'No'],
    ],
    '"D1:2; D2:1" is split and trimmed; "D:2:03" is read as D2:3 and not counted twice',
  );
  t.same(conversation.skipped, { adversarial: 1, no_evidence: 2 });
  t.equal(dataset.warnings.length, 2);
  t.match(dataset.warnings[0], /conv-a\.json: qa\[2\]\.evidence\[1\]: "D:2:03" read as D2:3/);
  t.match(dataset.warnings[1], /conv-a\.json: qa\[6\]\.evidence\[0\]: "D9:9" is not a turn of this conversation; ignored/);
});

t.test('the published locomo10.json shape (a list of {sample_id, conversation, qa}) loads, and so does a single file', async (t) => {
  const dir = tempDir(t);
  const { qa, ...body } = syntheticConversation();
  const file = join(dir, 'locomo10.json');
  writeFileSync(
    file,
    JSON.stringify([
      { sample_id: 'conv-1', conversation: body, qa },
      { conversation: body, qa },
    ]),
  );
  const dataset = await loadLocomo(file);
  t.same(
    dataset.conversations.map((c) => [c.id, c.events.length, c.questions.length, c.events[0]?.source_id]),
    [
      ['conv-1', 6, 4, 'conv-1/D1:1'],
      ['locomo10-1', 6, 4, 'locomo10-1/D1:1'],
    ],
  );
});

t.test('files load in numeric name order and other files are ignored', async (t) => {
  const dir = tempDir(t);
  for (const name of ['10', '2', '1']) writeConversation(dir, name, syntheticConversation());
  writeFileSync(join(dir, 'README.md'), '# not a conversation');
  const dataset = await loadLocomo(dir);
  t.same(
    dataset.conversations.map((c) => c.id),
    ['1', '2', '10'],
  );
});

/** Writes `data` as bad.json in a fresh directory and expects loading to fail naming `place`. */
async function expectBadFile(t: Test, data: unknown, place: RegExp): Promise<void> {
  const dir = tempDir(t);
  const file = join(dir, 'bad.json');
  writeFileSync(file, typeof data === 'string' ? data : JSON.stringify(data));
  const error = await expectErrorAsync(t, () => loadLocomo(dir), EVAL_ERROR_CODE);
  t.match(error.message, place);
  t.ok(error.message.startsWith(file), `names the file: ${error.message}`);
}

type Mutation = (data: Record<string, unknown>) => void;

function mutated(change: Mutation): Record<string, unknown> {
  const data = syntheticConversation();
  change(data);
  return data;
}

const turn = (data: Record<string, unknown>, session: number, index: number) =>
  (data[`session_${session}`] as Array<Record<string, unknown>>)[index] as Record<string, unknown>;
const question = (data: Record<string, unknown>, index: number) =>
  (data.qa as Array<Record<string, unknown>>)[index] as Record<string, unknown>;

t.test('bad files are refused with the file and field named', async (t) => {
  await expectBadFile(t, '{"speaker_a": "Alice",', /bad\.json: not readable as JSON/);
  await expectBadFile(t, '"just text"', /bad\.json: expected a conversation object .*got string "just text"/);
  await expectBadFile(t, [], /bad\.json: the list holds no conversations/);
  await expectBadFile(
    t,
    mutated((d) => delete d.speaker_b),
    /bad\.json: speaker_b: missing \(expected a string\)/,
  );
  await expectBadFile(
    t,
    mutated((d) => {
      delete d.session_1;
      delete d.session_2;
    }),
    /bad\.json: no session_N turn lists/,
  );
  await expectBadFile(
    t,
    mutated((d) => {
      d.session_2 = { turns: [] };
    }),
    /bad\.json: session_2: expected a list of turns, got an object/,
  );
  await expectBadFile(
    t,
    mutated((d) => delete d.session_2_date_time),
    /bad\.json: session_2_date_time: missing/,
  );
  await expectBadFile(
    t,
    mutated((d) => {
      d.session_1_date_time = 'yesterday';
    }),
    /bad\.json: session_1_date_time: "yesterday" is not a date like "1:47 pm on 18 May, 2023"/,
  );
  await expectBadFile(
    t,
    mutated((d) => delete turn(d, 2, 1).dia_id),
    /bad\.json: session_2\[1\]\.dia_id: missing/,
  );
  await expectBadFile(
    t,
    mutated((d) => {
      turn(d, 2, 1).dia_id = 'D1:1';
    }),
    /bad\.json: session_2\[1\]\.dia_id: "D1:1" is also the id of session_1\[0\]/,
  );
  await expectBadFile(
    t,
    mutated((d) => {
      turn(d, 1, 0).text = 42;
    }),
    /bad\.json: session_1\[0\]\.text: expected a string, got number 42/,
  );
  await expectBadFile(
    t,
    mutated((d) => {
      turn(d, 1, 1).blip_caption = ['bowl'];
    }),
    /bad\.json: session_1\[1\]\.blip_caption: expected a string, got a list/,
  );
  await expectBadFile(
    t,
    mutated((d) => delete d.qa),
    /bad\.json: qa: missing \(expected a list of questions\)/,
  );
  await expectBadFile(
    t,
    mutated((d) => {
      question(d, 1).category = 7;
    }),
    /bad\.json: qa\[1\]\.category: expected a category 1–5, got number 7/,
  );
  await expectBadFile(
    t,
    mutated((d) => {
      question(d, 0).evidence = 'D1:1';
    }),
    /bad\.json: qa\[0\]\.evidence: expected a list of dia_ids, got string "D1:1"/,
  );
  await expectBadFile(
    t,
    mutated((d) => {
      question(d, 0).evidence = ['D1:1', 3];
    }),
    /bad\.json: qa\[0\]\.evidence\[1\]: expected a dia_id string, got number 3/,
  );
  await expectBadFile(
    t,
    mutated((d) => delete question(d, 3).question),
    /bad\.json: qa\[3\]\.question: missing/,
  );
  const { qa, ...body } = syntheticConversation();
  await expectBadFile(
    t,
    [{ sample_id: 'x', conversation: { ...body, session_1: [{ speaker: 'Alice', dia_id: 'D1:1' }] }, qa }],
    /bad\.json: \[0\]\.conversation\.session_1\[0\]\.text: missing/,
  );
  await expectBadFile(
    t,
    [
      { sample_id: 'x', conversation: body, qa },
      { sample_id: 'x', conversation: body, qa },
    ],
    /bad\.json: conversation id "x" is also used by .*bad\.json/,
  );
});

t.test('a missing path or a directory without conversation files is refused', async (t) => {
  const dir = tempDir(t);
  const missing = join(dir, 'nowhere');
  t.match((await expectErrorAsync(t, () => loadLocomo(missing), EVAL_ERROR_CODE)).message, `${missing}: no such file or directory`);
  const empty = join(dir, 'empty');
  mkdirSync(empty);
  writeFileSync(join(empty, 'notes.txt'), 'x');
  t.match((await expectErrorAsync(t, () => loadLocomo(empty), EVAL_ERROR_CODE)).message, `${empty}: no .json conversation files`);
});

import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ACTIVATION_LOG_FILE, ActivationLog, MAX_HEARD_CHARS } from '../../../../plugins/voice/activation/activation-log.js';

function fileLines(file: string): string[] {
  return readFileSync(file, 'utf8').split('\n').filter(Boolean);
}

/** A clock that moves one second per reading, so entries are told apart by `at`. */
function steppingClock(): () => Date {
  let ms = Date.parse('2025-03-01T08:00:00.000Z');
  return () => {
    ms += 1000;
    return new Date(ms);
  };
}

t.test('entries are appended as JSON lines and read back newest first', async (t) => {
  const dir = join(t.testdir(), 'plugin-data', 'voice');
  const log = new ActivationLog({ dir, maxEntries: () => 500, now: steppingClock() });
  t.equal(log.file, join(dir, ACTIVATION_LOG_FILE));
  t.equal(await log.append({ method: 'wake_phrase', accepted: true, phrase: '小宅', heard: '小宅，开灯', score: 1 }), undefined);
  await log.append({ method: 'wake_word', accepted: false, reason: 'below threshold', model: 'hey_home', score: 0.41234567 });
  await log.append({ method: 'push_to_talk', accepted: false, reason: 'refractory' });
  t.equal(fileLines(log.file).length, 3);
  const recent = await log.recent(10);
  t.same(
    recent.map((e) => e.method),
    ['push_to_talk', 'wake_word', 'wake_phrase'],
  );
  t.same(recent[1], {
    at: '2025-03-01T08:00:02.000Z',
    method: 'wake_word',
    accepted: false,
    reason: 'below threshold',
    score: 0.4123,
    model: 'hey_home',
  });
  t.same(
    (await log.recent(2)).map((e) => e.method),
    ['push_to_talk', 'wake_word'],
  );
  t.same(await log.recent(0), []);
});

t.test('the transcript start is clipped to 200 characters', async (t) => {
  const log = new ActivationLog({ dir: t.testdir(), maxEntries: () => 10 });
  await log.append({ method: 'wake_phrase', accepted: false, reason: 'no command', heard: '啊'.repeat(500) });
  const [entry] = await log.recent(1);
  t.equal(entry?.heard?.length, MAX_HEARD_CHARS);
  t.match(entry?.at, /^\d{4}-\d\d-\d\dT/);
});

t.test('the file stays bounded and compaction keeps the newest entries', async (t) => {
  const dir = t.testdir();
  const log = new ActivationLog({ dir, maxEntries: () => 5, now: steppingClock() });
  let most = 0;
  for (let i = 0; i < 23; i++) {
    await log.append({ method: 'wake_word', accepted: false, reason: `n${i}`, score: i / 100 });
    most = Math.max(most, fileLines(log.file).length);
  }
  t.equal(most, 10, 'never more than twice the limit');
  t.ok(fileLines(log.file).length <= 10);
  const recent = await log.recent(100);
  t.ok(recent.length >= 5, `${recent.length} entries kept`);
  t.same(
    recent.slice(0, 5).map((e) => e.reason),
    ['n22', 'n21', 'n20', 'n19', 'n18'],
  );
  t.same(
    readdirSync(dir).filter((f) => f !== ACTIVATION_LOG_FILE),
    [],
    'no temp file left behind',
  );

  // A new log over an existing file counts what is there before it decides to compact.
  const reopened = new ActivationLog({ dir, maxEntries: () => 3 });
  await reopened.append({ method: 'push_to_talk', accepted: true });
  t.ok(fileLines(reopened.file).length <= 6);
  t.same(
    (await reopened.recent(3)).map((e) => e.reason ?? e.method),
    ['push_to_talk', 'n22', 'n21'],
  );
});

t.test('corrupt lines are skipped, never fatal, and dropped by compaction', async (t) => {
  const dir = t.testdir();
  const good = (n: number) => JSON.stringify({ at: `2025-01-01T00:00:0${n}.000Z`, method: 'wake_phrase', accepted: true, phrase: `p${n}` });
  writeFileSync(
    join(dir, ACTIVATION_LOG_FILE),
    [good(1), '{"at": "cut off', 'not json', JSON.stringify({ at: 'x', method: 'shout', accepted: true }), '[]', good(2), '{"at":'].join(
      '\n',
    ),
  );
  const log = new ActivationLog({ dir, maxEntries: () => 2 });
  t.same(
    (await log.recent(10)).map((e) => e.phrase),
    ['p2', 'p1'],
  );
  // The unterminated last line does not swallow the next entry; compaction keeps the newest 2, then p4 is added.
  await log.append({ method: 'wake_phrase', accepted: true, phrase: 'p3' });
  await log.append({ method: 'wake_phrase', accepted: true, phrase: 'p4' });
  t.same(
    (await log.recent(10)).map((e) => e.phrase),
    ['p4', 'p3', 'p2'],
  );
  t.equal(fileLines(log.file).length, 3, 'compacted, then one appended');
});

t.test('0 entries: nothing is written; the limit is read on every append', async (t) => {
  const dir = join(t.testdir(), 'voice');
  let max = 0;
  const log = new ActivationLog({ dir, maxEntries: () => max });
  await log.append({ method: 'push_to_talk', accepted: true });
  t.notOk(existsSync(dir), 'not even the directory');
  t.same(await log.recent(5), []);
  max = 4;
  await log.append({ method: 'push_to_talk', accepted: true, reason: 'on' });
  t.same(
    (await log.recent(5)).map((e) => e.reason),
    ['on'],
  );
});

t.test('a failed write is returned, not thrown', async (t) => {
  const dir = t.testdir();
  // The data "directory" is a file: mkdir fails.
  writeFileSync(join(dir, 'blocked'), '');
  const log = new ActivationLog({ dir: join(dir, 'blocked'), maxEntries: () => 5 });
  const error = await log.append({ method: 'wake_word', accepted: true });
  t.ok(error instanceof Error, String(error));
});

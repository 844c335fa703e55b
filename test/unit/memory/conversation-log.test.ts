import { appendFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ConversationLog } from '../../../src/memory/conversation-log.js';
import { captureLogs, expectError, silentLogs, tempDir } from '../fixtures/support.js';
import { HOUR, ManualClock, T0 } from './fixtures/memory-fixture.js';

const DAY = 24 * HOUR;

function lines(dir: string, name: string): Array<Record<string, unknown>> {
  return readFileSync(join(dir, name), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

t.test('records are JSON lines with an ISO time; a stopped log writes nothing', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const log = new ConversationLog({ directory: join(dir, 'raw'), clock, log: silentLogs().child('memory') });
  t.notOk(log.append({ role: 'user', content: 'before start' }));
  await log.start();
  t.ok(log.append({ role: 'user', content: '你好\nsecond line', session: 's1', channel: 'cli', event_id: 'e1' }));
  t.ok(log.append({ role: 'assistant', content: 'hi', timestamp: T0 + 5 }));
  const files = log.files();
  t.equal(files.length, 1);
  t.same(lines(join(dir, 'raw'), files[0]?.name as string), [
    { role: 'user', content: '你好\nsecond line', session: 's1', channel: 'cli', event_id: 'e1', timestamp: new Date(T0).toISOString() },
    { role: 'assistant', content: 'hi', timestamp: new Date(T0 + 5).toISOString() },
  ]);
  await log.stop();
  t.notOk(log.append({ role: 'user', content: 'after stop' }));
});

t.test('rotation by size and by age; a restart continues the newest file', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const options = { directory: dir, clock, log: silentLogs().child('memory'), maxFileBytes: 250, maxFileAgeMs: HOUR };
  const log = new ConversationLog(options);
  await log.start();
  const record = { role: 'user', content: 'x'.repeat(40) }; // 108 bytes a line
  log.append(record);
  log.append(record);
  t.equal(log.files().length, 1, 'two 108-byte lines fit in 250 bytes');
  log.append(record);
  t.equal(log.files().length, 2, 'the third would pass 250 bytes: a new file');
  t.ok(
    log.files().every((f) => f.bytes <= 250),
    'no file is larger than the limit',
  );
  clock.advance(HOUR - 1);
  log.append({ role: 'user', content: 'a' });
  t.equal(log.files().length, 2);
  clock.advance(1);
  log.append({ role: 'user', content: 'b' });
  t.equal(log.files().length, 3, 'a file an hour old is closed');
  await log.stop();

  const again = new ConversationLog(options);
  await again.start();
  again.append({ role: 'user', content: 'c' });
  t.equal(again.files().length, 3, 'after a restart the young, small newest file is reused');
  const newest = again.files().at(-1)?.name as string;
  t.same(
    lines(dir, newest).map((l) => l.content),
    ['b', 'c'],
  );
  await again.stop();

  // A single record larger than the limit still gets written, alone in its file.
  const big = new ConversationLog({ ...options, maxFileBytes: 10 });
  await big.start();
  t.ok(big.append({ role: 'user', content: 'y'.repeat(50) }));
  t.ok(big.append({ role: 'user', content: 'z' }));
  await big.stop();
});

t.test('files whose last record is older than 7 days are deleted', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const log = new ConversationLog({ directory: dir, clock, log: silentLogs().child('memory') });
  await log.start();
  for (let day = 0; day < 10; day++) {
    log.append({ role: 'user', content: `day ${day}` });
    clock.advance(DAY);
  }
  // Now T0 + 10 days. The file started on day d ends when day d+1's file starts.
  log.append({ role: 'user', content: 'day 10' });
  const starts = log.files().map((f) => (f.started_at - T0) / DAY);
  t.same(starts, [3, 4, 5, 6, 7, 8, 9, 10], 'the files of days 0-2 ended 7 days ago or earlier');
  clock.advance(7 * DAY);
  t.same(log.removeExpired().length, 7, 'everything but the file being written');
  t.equal(log.files().length, 1);
  await log.stop();
});

t.test('a write failure is logged and the turn goes on', async (t) => {
  const dir = tempDir(t);
  const captured = captureLogs();
  const clock = new ManualClock();
  const log = new ConversationLog({ directory: join(dir, 'raw'), clock, log: captured.logs.child('memory') });
  await log.start();
  t.ok(log.append({ role: 'user', content: 'ok' }));
  t.teardown(() => log.stop());
  // Replace the directory by a file: the next rotation cannot create its file.
  const { rmSync, writeFileSync } = await import('node:fs');
  rmSync(join(dir, 'raw'), { recursive: true });
  writeFileSync(join(dir, 'raw'), '');
  clock.advance(25 * HOUR);
  t.notOk(log.append({ role: 'user', content: 'lost' }));
  t.match(captured.text(), /cannot write the conversation log/);
});

/** The log's files and their exact bytes, by name. */
function snapshot(log: ConversationLog): Map<string, Buffer> {
  return new Map(log.files().map((f) => [f.name, readFileSync(join(log.directory, f.name))]));
}

t.test('forgetEvent removes every record of the event from every file, and nothing else', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const captured = captureLogs();
  const log = new ConversationLog({ directory: dir, clock, log: captured.logs.child('memory'), maxFileAgeMs: HOUR });
  await log.start();
  t.teardown(() => log.stop());
  const turn = (id: string, words: string) => {
    log.append({ role: 'user', content: words, event_id: id, channel: 'cli', peer: 'Bo' });
    log.append({ role: 'tool', tool: 'note', content: `noted: ${words}`, event_id: id });
    log.append({ role: 'assistant', content: `You said ${words}`, event_id: id });
  };
  turn('ev-secret', 'my pin is 4711');
  turn('ev-keep', 'the boiler is serviced in May ✓');
  // A record of another event that mentions the id in its words is not the event's.
  log.append({ role: 'user', content: 'what was "ev-secret" about?', event_id: 'ev-other' });
  clock.advance(HOUR);
  turn('ev-late', 'nothing secret here');
  clock.advance(HOUR);
  turn('ev-secret', 'and my pin is still 4711');
  const [first, untouched, last] = log.files().map((f) => f.name) as [string, string, string];
  t.equal(log.files().length, 3);
  const before = snapshot(log);
  const untouchedInode = statSync(join(dir, untouched)).ino;

  t.same(log.forgetEvent('ev-secret'), { files_rewritten: 2, records_removed: 6 });
  const after = snapshot(log);
  for (const [name, bytes] of after) t.notOk(bytes.includes('4711'), `${name} no longer holds the words`);
  const withoutSecret = (bytes: Buffer | undefined) =>
    String(bytes)
      .split(/(?<=\n)/)
      .filter((line) => !line.includes('"event_id":"ev-secret"'))
      .join('');
  t.equal(String(after.get(first)), withoutSecret(before.get(first)), 'the other lines of a rewritten file keep their bytes');
  t.match(String(after.get(first)), /what was \\"ev-secret\\" about\?/, 'a record merely mentioning the id stays');
  t.equal(after.get(last)?.length, 0, 'a file that only held the event is left empty');
  t.same(after.get(untouched), before.get(untouched));
  t.equal(statSync(join(dir, untouched)).ino, untouchedInode, 'a file without the event is not rewritten');
  t.same(
    readdirSync(dir).filter((n) => !n.endsWith('.jsonl')),
    [],
    'no temp file is left',
  );
  t.same(log.forgetEvent('ev-secret'), { files_rewritten: 0, records_removed: 0 }, 'a second forget finds nothing');
  t.same(snapshot(log), after);
  t.same(log.forgetEvent('never-said'), { files_rewritten: 0, records_removed: 0 });
  t.equal(captured.text(), '', 'nothing to warn about');
});

t.test('appends after a forget go to the rewritten file by name, not to the replaced one', async (t) => {
  const dir = tempDir(t);
  const log = new ConversationLog({ directory: dir, clock: new ManualClock(), log: silentLogs().child('memory') });
  await log.start();
  t.teardown(() => log.stop());
  log.append({ role: 'user', content: 'forget me', event_id: 'ev-1' });
  log.append({ role: 'user', content: 'keep me', event_id: 'ev-2' });
  const [file] = log.files();
  t.same(log.forgetEvent('ev-1'), { files_rewritten: 1, records_removed: 1 });
  t.ok(log.append({ role: 'user', content: 'said after the forget', event_id: 'ev-3' }));
  t.same(log.files(), [{ ...file, bytes: statSync(join(dir, file?.name as string)).size }], 'the same file is continued');
  t.same(
    lines(dir, file?.name as string).map((l) => l.content),
    ['keep me', 'said after the forget'],
  );
  t.same(log.forgetEvent('ev-3'), { files_rewritten: 1, records_removed: 1 }, 'and a later forget finds the new record');
  t.ok(log.append({ role: 'user', content: 'and again', event_id: 'ev-4' }));
  t.same(
    lines(dir, file?.name as string).map((l) => l.content),
    ['keep me', 'and again'],
  );
});

t.test('malformed lines are kept as they are, also when they mention the event', async (t) => {
  const dir = tempDir(t);
  const captured = captureLogs();
  const log = new ConversationLog({ directory: dir, clock: new ManualClock(), log: captured.logs.child('memory') });
  await log.start();
  t.teardown(() => log.stop());
  log.append({ role: 'user', content: 'first', event_id: 'ev-1' });
  const name = log.files()[0]?.name as string;
  const torn = '{"role":"user","content":"half a line of "ev-1"';
  const foreign = Buffer.from([0xff, 0xfe, 0x0a]); // not UTF-8, kept byte for byte
  appendFileSync(join(dir, name), `not json at all\n${torn}\n[1,2]\n`);
  appendFileSync(join(dir, name), foreign);
  log.append({ role: 'user', content: 'second', event_id: 'ev-1' });
  log.append({ role: 'user', content: 'other', event_id: 'ev-2' });

  t.same(log.forgetEvent('ev-1'), { files_rewritten: 1, records_removed: 2 });
  const expected = Buffer.concat([
    Buffer.from(`not json at all\n${torn}\n[1,2]\n`),
    foreign,
    Buffer.from(`${JSON.stringify({ role: 'user', content: 'other', event_id: 'ev-2', timestamp: new Date(T0).toISOString() })}\n`),
  ]);
  t.same(readFileSync(join(dir, name)), expected);
  t.match(captured.records(), [{ msg: /malformed lines .* mention a forgotten event/, file: name, event_id: 'ev-1', lines: 1 }]);
});

t.test('a file that cannot be rewritten stays as it was; the others are done and the error names it', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  const captured = captureLogs();
  const log = new ConversationLog({ directory: dir, clock, log: captured.logs.child('memory'), maxFileAgeMs: HOUR });
  await log.start();
  t.teardown(() => log.stop());
  log.append({ role: 'user', content: 'secret one', event_id: 'ev-1' });
  clock.advance(HOUR);
  log.append({ role: 'user', content: 'secret two', event_id: 'ev-1' });
  log.append({ role: 'user', content: 'kept', event_id: 'ev-2' });
  const [blocked, open] = log.files().map((f) => f.name) as [string, string];
  const original = readFileSync(join(dir, blocked));
  // Where the copy of the first file would go there is a directory: the copy cannot be made.
  mkdirSync(join(dir, `${blocked}.forget-tmp`));

  const error = expectError(t, () => log.forgetEvent('ev-1'), 'HA_ERR_MEMORY_RAW_LOG');
  t.match(error.message, blocked);
  t.match(error.message, /"ev-1"/);
  t.match(error.details, { files_rewritten: 1, records_removed: 1, failed_files: [blocked] });
  t.same(readFileSync(join(dir, blocked)), original, 'the file that failed is intact');
  t.same(
    lines(dir, open).map((l) => l.content),
    ['kept'],
    'the other file was rewritten',
  );
  t.match(captured.records(), [{ level: 'error', file: blocked, event_id: 'ev-1', msg: /cannot remove a forgotten event/ }]);
  t.ok(log.append({ role: 'user', content: 'the log goes on', event_id: 'ev-3' }));

  rmSync(join(dir, `${blocked}.forget-tmp`), { recursive: true });
  t.same(log.forgetEvent('ev-1'), { files_rewritten: 1, records_removed: 1 }, 'forgetting again finishes the job');
  t.equal(readFileSync(join(dir, blocked), 'utf8'), '');
  t.same(
    lines(dir, open).map((l) => l.content),
    ['kept', 'the log goes on'],
  );
});

t.test('a stopped log can be forgotten from; a copy left by a crash is deleted at start', async (t) => {
  const dir = tempDir(t);
  const options = { directory: dir, clock: new ManualClock(), log: silentLogs().child('memory') };
  const log = new ConversationLog(options);
  t.same(log.forgetEvent('ev-1'), { files_rewritten: 0, records_removed: 0 }, 'no directory yet: nothing to do');
  await log.start();
  log.append({ role: 'user', content: 'forget me', event_id: 'ev-1' });
  await log.stop();
  const name = log.files()[0]?.name as string;
  t.same(new ConversationLog(options).forgetEvent('ev-1'), { files_rewritten: 1, records_removed: 1 }, 'never started');
  t.equal(readFileSync(join(dir, name), 'utf8'), '');

  writeFileSync(join(dir, `${name}.forget-tmp`), 'half a copy');
  t.same(
    log.files().map((f) => f.name),
    [name],
    'a copy is not a log file',
  );
  await log.start();
  t.same(readdirSync(dir), [name], 'the leftover copy is gone');
  await log.stop();
});

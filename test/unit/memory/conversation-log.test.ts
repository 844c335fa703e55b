import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ConversationLog } from '../../../src/memory/conversation-log.js';
import { captureLogs, silentLogs, tempDir } from '../fixtures/support.js';
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

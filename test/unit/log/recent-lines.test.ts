// The in-memory ring behind logs.recent (src/log/recent-lines.ts) and its tee in LogManager: what
// the destination gets is unchanged, secrets are redacted before the ring sees them, filters and
// limits work, over-long lines stay valid JSON.
import t from 'tap';
import { LogManager } from '../../../src/log/logger.js';
import { RecentLines, shorten, teeDestination } from '../../../src/log/recent-lines.js';
import { expectError } from '../fixtures/support.js';

function managed(recent: { lines: number; lineBytes: number } | undefined, level: 'info' | 'debug' = 'debug') {
  const written: string[] = [];
  const logs = new LogManager({
    level,
    levels: {},
    destination: { write: (line: string) => void written.push(line) },
    ...(recent && { recent }),
  });
  return { logs, written };
}

t.test('the destination gets every line exactly as before; the ring keeps the last ones', async (t) => {
  const plain = managed(undefined);
  const teed = managed({ lines: 3, lineBytes: 4096 });
  for (const { logs } of [plain, teed]) {
    for (let i = 0; i < 5; i++) logs.child('store').info({ i }, `line ${i}`);
  }
  const strip = (line: string) => line.replace(/"time":"[^"]+"/, '');
  t.same(teed.written.map(strip), plain.written.map(strip), 'the same lines reach the destination');
  t.equal(teed.written.length, 5);

  const recent = teed.logs.recent({ limit: 10 });
  t.same(
    recent.lines.map((l) => l.msg),
    ['line 2', 'line 3', 'line 4'],
    'the newest three, newest last',
  );
  t.equal(recent.dropped, 2, 'two lines were pushed out');
  t.match(recent.lines[2], { level: 'info', subsystem: 'store', i: 4, pid: process.pid });
  t.same(
    teed.logs.recent({ limit: 1 }).lines.map((l) => l.msg),
    ['line 4'],
    'a limit keeps the newest',
  );
});

t.test('secrets are redacted by pino before the ring sees them', async (t) => {
  const { logs, written } = managed({ lines: 10, lineBytes: 4096 });
  logs.child('webui').info({ password: 'hunter2-secret', user: { api_key: 'sk-live-123', name: 'admin' } }, 'login attempt');
  const [line] = logs.recent({ limit: 5 }).lines;
  t.equal(line?.password, '[redacted]');
  t.same(line?.user, { api_key: '[redacted]', name: 'admin' });
  t.notOk(JSON.stringify(logs.recent({ limit: 5 })).includes('hunter2'), 'the secret is nowhere in the answer');
  t.notOk(JSON.stringify(logs.recent({ q: 'hunter2', limit: 5 }).lines).includes('hunter2'), 'nor can it be searched for');
  t.same(logs.recent({ q: 'hunter2', limit: 5 }).lines, []);
  t.notOk(written.join('').includes('hunter2'), 'nor in the journal');
});

t.test('filters: minimum level, subsystem prefix, text, audit records', async (t) => {
  const { logs } = managed({ lines: 100, lineBytes: 4096 });
  logs.child('store').debug('store debug');
  logs.child('store').warn('store warning');
  logs.child('plugin.cli').info('cli started');
  logs.child('plugin.webui').error({ port: 8080 }, 'webui Failed to listen');
  logs.child('pluginhost').info('not a plugin');
  logs.audit({ actor: 'webui:admin', action: 'config.set', key: 'core.name' });
  logs.root.info('from the root');

  const msgs = (filter: Parameters<LogManager['recent']>[0]) => logs.recent(filter).lines.map((l) => l.msg);
  t.same(msgs({ level: 'warn', limit: 100 }), ['store warning', 'webui Failed to listen']);
  t.same(msgs({ level: 'trace', limit: 100 }).length, 7, 'trace is everything');
  t.same(msgs({ subsystem: 'plugin.', limit: 100 }), ['cli started', 'webui Failed to listen']);
  t.same(msgs({ subsystem: 'store', limit: 100 }), ['store debug', 'store warning']);
  t.same(msgs({ q: 'FAILED', limit: 100 }), ['webui Failed to listen'], 'text ignores case');
  t.same(msgs({ q: '8080', limit: 100 }), ['webui Failed to listen'], 'and finds field values');
  t.same(msgs({ audit: true, limit: 100 }), ['audit: config.set by webui:admin']);
  t.match(logs.recent({ audit: true, limit: 1 }).lines[0], { audit: true, actor: 'webui:admin', action: 'config.set', key: 'core.name' });
  t.same(msgs({ subsystem: 'plugin', level: 'error', q: 'listen', limit: 100 }), ['webui Failed to listen'], 'filters combine');
  t.same(msgs({ q: 'nothing like this', limit: 100 }), []);
});

t.test('lines under a quieter level never reach the ring; the ring follows setLevels', async (t) => {
  const { logs } = managed({ lines: 100, lineBytes: 4096 }, 'info');
  logs.child('store').debug('hidden');
  logs.setLevels('info', { store: 'debug' });
  logs.child('store').debug('shown');
  t.same(
    logs.recent({ limit: 10 }).lines.map((l) => l.msg),
    ['shown'],
  );
});

t.test('a line over the byte limit is kept as a smaller valid record; the journal gets it whole', async (t) => {
  const { logs, written } = managed({ lines: 10, lineBytes: 512 });
  const long = 'x'.repeat(5000);
  logs.child('agent').warn({ tool: 'kb_search', result: long, extra: { deep: long }, small: 7 }, `model said ${long}`);
  t.ok((written[0]?.length ?? 0) > 10000, 'the destination got the whole line');
  const [line] = logs.recent({ limit: 1 }).lines;
  t.match(line, { level: 'warn', subsystem: 'agent', truncated: true, tool: 'kb_search', small: 7 });
  t.ok((line?.line_bytes as number) > 10000, 'the original size is named');
  t.match(line?.msg, /^model said x+…$/, 'the message is cut, not lost');
  t.ok(Buffer.byteLength(`${JSON.stringify(line)}\n`) <= 512, 'within the limit');

  for (const text of ['汉'.repeat(3000), '"\\'.repeat(3000)]) {
    const record = JSON.parse(
      shorten(`${JSON.stringify({ level: 'info', time: 'now', subsystem: text, actor: text, action: text, msg: text })}\n`, 256),
    );
    t.ok(Buffer.byteLength(`${JSON.stringify(record)}\n`) <= 256, `multi-byte or escaped text still fits (${text.slice(0, 2)})`);
    t.match(record, { level: 'info', truncated: true });
  }
  t.match(JSON.parse(shorten(`not json ${'y'.repeat(1000)}`, 256)), { msg: /^not json y+…$/, truncated: true }, 'foreign text too');
});

t.test('no ring: logs.recent says how to get one; lines still reach the destination', async (t) => {
  for (const recent of [undefined, { lines: 0, lineBytes: 4096 }]) {
    const { logs, written } = managed(recent);
    logs.root.info('hello');
    t.equal(written.length, 1);
    const error = expectError(t, () => logs.recent({ limit: 10 }), 'HA_ERR_UNAVAILABLE');
    t.match(error.message, /core\.log\.recent_lines/);
  }
});

t.test('the tee forwards write and flush to the real destination', async (t) => {
  const ring = new RecentLines({ lines: 2, lineBytes: 4096 });
  const calls: string[] = [];
  const tee = teeDestination(ring, {
    write: (line: string) => void calls.push(`write ${line.trim()}`),
    flush: (cb: (error?: Error) => void) => {
      calls.push('flush');
      cb();
    },
  } as never);
  tee.write('{"msg":"a"}\n');
  await new Promise<void>((resolve) => (tee as unknown as { flush(cb: () => void): void }).flush(resolve));
  t.same(calls, ['write {"msg":"a"}', 'flush']);
  t.equal(ring.size, 1);
  const bare = teeDestination(ring, { write: () => undefined });
  t.notOk('flush' in bare, 'no flush when the destination has none');
  tee.write('not json\n');
  t.same(ring.query({ limit: 5 }).lines, [{ msg: 'a' }, { raw: 'not json' }], 'foreign lines come back raw');
  t.same(ring.query({ level: 'info', limit: 5 }).lines, [], 'but not when a structured filter is asked for');
});

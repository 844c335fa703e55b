// The console log (src/log/console-format.ts): which format stdout gets (auto: readable on a
// terminal, JSON otherwise; core.log.format or HOMEAGENT_LOG_FORMAT forces either), and what a
// readable line says, written by the real LogManager (pino, redaction, child loggers) through it.
import t from 'tap';
import { loadConfig } from '../../../src/config/loader.js';
import { chooseLogFormat, consoleDestination, formatLogRecord, prettyDestination } from '../../../src/log/console-format.js';
import { LogManager } from '../../../src/log/logger.js';

const NO_SYSTEM = '/nonexistent/homeagent/config.yaml';
const ESC = '\x1b[';

t.test('auto is readable on a terminal and JSON anywhere else; json and pretty are forced', async (t) => {
  t.equal(chooseLogFormat('auto', { isTTY: true }), 'pretty', 'a terminal');
  t.equal(chooseLogFormat('auto', { isTTY: false }), 'json', 'a pipe or the journal');
  t.equal(chooseLogFormat('auto', {}), 'json', 'a stream that says nothing');
  t.equal(chooseLogFormat('json', { isTTY: true }), 'json', 'json on a terminal');
  t.equal(chooseLogFormat('pretty', { isTTY: false }), 'pretty', 'pretty into a pipe');
  t.equal(consoleDestination('auto', { isTTY: false, write: () => true }), undefined, "JSON: LogManager's own stdout writer");
  t.ok(consoleDestination('auto', { isTTY: true, write: () => true }), 'a terminal gets the readable destination');
});

t.test('core.log.format comes from the file or HOMEAGENT_LOG_FORMAT, default auto, and is checked', async (t) => {
  t.equal(loadConfig({ env: {}, systemFile: NO_SYSTEM }).config.core.log.format, 'auto');
  const forced = loadConfig({ env: { HOMEAGENT_LOG_FORMAT: 'json' }, systemFile: NO_SYSTEM });
  t.equal(forced.config.core.log.format, 'json');
  t.equal(forced.sources.get('core.log.format'), 'env:HOMEAGENT_LOG_FORMAT');
  t.throws(() => loadConfig({ env: { HOMEAGENT_LOG_FORMAT: 'colour' }, systemFile: NO_SYSTEM }), {
    code: 'HA_ERR_CONFIG_INVALID',
    message: /core\.log\.format: expected one of auto, json, pretty, found "colour" \(from environment variable HOMEAGENT_LOG_FORMAT\)/,
  });
});

t.test('a readable line: local time, level, component, message, the other fields as key=value', async (t) => {
  const at = new Date(2025, 2, 4, 14, 3, 7, 412);
  const line = formatLogRecord(
    {
      level: 'info',
      time: at.toISOString(),
      pid: 42,
      subsystem: 'daemon',
      msg: 'HomeAgent ready; CLI socket: /run/homeagent/homeagent.sock',
      socket: '/run/homeagent/homeagent.sock',
      notify: 'none',
      rules: 3,
      text: 'two words',
      detail: { a: 1 },
    },
    { colour: false },
  );
  t.equal(
    line,
    '14:03:07.412 INFO  daemon: HomeAgent ready; CLI socket: /run/homeagent/homeagent.sock  socket=/run/homeagent/homeagent.sock notify=none rules=3 text="two words" detail={"a":1}',
  );
  t.equal(
    formatLogRecord({ level: 'warn', time: at.toISOString(), msg: 'no component' }, { colour: false }),
    '14:03:07.412 WARN  no component',
  );
  const long = formatLogRecord({ level: 'debug', time: at.toISOString(), msg: 'm', blob: 'x'.repeat(1000) }, { colour: false });
  t.ok(long.length < 400 && long.endsWith('...'), 'a very long field is cut');
});

t.test('an error: its message as err=, its stack indented below for error and fatal', async (t) => {
  const record = {
    level: 'error',
    time: new Date(2025, 0, 1, 9, 0, 0, 5).toISOString(),
    subsystem: 'store',
    msg: 'cannot write',
    err: { type: 'Error', message: 'disk full', stack: 'Error: disk full\n    at write (store.js:1:2)\n    at main (main.js:3:4)' },
  };
  t.equal(
    formatLogRecord(record, { colour: false }),
    '09:00:00.005 ERROR store: cannot write  err="disk full"\n    at write (store.js:1:2)\n    at main (main.js:3:4)',
  );
  t.equal(
    formatLogRecord({ ...record, level: 'warn' }, { colour: false }),
    '09:00:00.005 WARN  store: cannot write  err="disk full"',
    'a warning keeps to one line',
  );
});

t.test('colour only when asked for; plain text otherwise', async (t) => {
  const record = { level: 'error', time: new Date().toISOString(), subsystem: 'x', msg: 'm', k: 1 };
  const coloured = formatLogRecord(record, { colour: true });
  t.ok(coloured.includes(`${ESC}31mERROR`), 'the level in red');
  t.ok(coloured.includes(`${ESC}1;36mx`), 'the component in cyan');
  t.notOk(formatLogRecord(record, { colour: false }).includes(ESC), 'no escape codes without colour');
  const written: string[] = [];
  prettyDestination({ isTTY: true, hasColors: () => false, write: (text: string) => written.push(text) }).write(
    `${JSON.stringify(record)}\n`,
  );
  t.notOk(written.join('').includes(ESC), 'a terminal without colours (NO_COLOR, TERM=dumb) gets none');
  prettyDestination({ isTTY: true, hasColors: () => true, write: (text: string) => written.push(text) }).write(
    `${JSON.stringify(record)}\n`,
  );
  t.ok(written[1]?.includes(ESC), 'a terminal with colours gets them');
});

t.test('the real logger through the readable destination: children, redaction, audit', async (t) => {
  const written: string[] = [];
  const logs = new LogManager({
    level: 'info',
    levels: {},
    destination: prettyDestination({ write: (text: string) => written.push(text) }, { colour: false }),
    recent: { lines: 10, lineBytes: 4096 },
  });
  logs.child('plugin.cli').info({ socket: '/tmp/s.sock', api_key: 'sk-secret' }, 'listening');
  logs.child('store').debug('not at info');
  logs.audit({ actor: 'cli', action: 'settings.set', key: 'core.log.level' });
  const text = written.join('');
  t.equal(text.split('\n').filter(Boolean).length, 2, 'one readable line per record at the level');
  t.match(text, /^\d\d:\d\d:\d\d\.\d{3} INFO {2}plugin\.cli: listening {2}socket=\/tmp\/s\.sock api_key=\[redacted\]$/m);
  t.notOk(text.includes('sk-secret'), 'secrets are redacted before formatting');
  t.match(text, /INFO {2}audit: settings\.set by cli {2}audit=true actor=cli action=settings\.set key=core\.log\.level/);
  t.notOk(text.includes('{"level"'), 'no JSON reaches the terminal');
  t.equal(logs.recent({ limit: 10 }).lines.length, 2, 'the kept lines (logs.recent) are still the JSON records');
  const passed: string[] = [];
  prettyDestination({ write: (s: string) => passed.push(s) }).write('not json\n');
  t.same(passed, ['not json\n'], 'a chunk that is not a record passes through');
});

t.test('a message that names its part itself says the part once', async (t) => {
  const record = {
    level: 'info',
    time: new Date(2025, 0, 1, 9, 0, 0, 0).toISOString(),
    subsystem: 'tracker',
    msg: 'tracker: first good state',
  };
  t.equal(formatLogRecord(record, { colour: false }), '09:00:00.000 INFO  tracker: first good state');
  t.equal(
    formatLogRecord({ ...record, msg: 'trackers: two' }, { colour: false }),
    '09:00:00.000 INFO  tracker: trackers: two',
    'another word is kept',
  );
});

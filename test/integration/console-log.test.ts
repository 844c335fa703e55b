/**
 * The built `homeagent run` writing its log to a terminal and to a pipe: on a terminal (a pty from
 * script(1)) the lines are readable (`HH:MM:SS.mmm INFO  daemon: HomeAgent ready ...`), in a pipe
 * they stay JSON, and HOMEAGENT_LOG_FORMAT forces either way. The process boundary is the point:
 * the choice is made from the real stdout of the real process (src/main.ts).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { cleanEnv, emptyConfig, type HelperTest, MAIN_JS, nodeCommand, tempDir } from '../helpers/daemon.js';
import { requireTool } from '../helpers/tools.js';
import { until } from '../helpers/until.js';

const READABLE_READY = /^\d\d:\d\d:\d\d\.\d{3} INFO {2}daemon: HomeAgent ready; CLI socket: /m;

interface Run {
  output: () => string;
  /** SIGTERM to the daemon (its pid file: under script(1) the child is not the daemon), then its exit. */
  stop: () => Promise<number | null>;
}

function start(t: HelperTest, options: { terminal: boolean; format?: string }): Run {
  const dataDir = tempDir(t);
  const env = cleanEnv({
    HOMEAGENT_CONFIG: emptyConfig(),
    HOMEAGENT_DATA_DIR: dataDir,
    HOMEAGENT_PLUGIN_WEBUI_PORT: '0',
    HOMEAGENT_LOG_FORMAT: options.format,
    // A terminal that has colours (whatever the test runner set): the lines are checked without their escape codes.
    TERM: 'xterm-256color',
    NO_COLOR: undefined,
    FORCE_COLOR: undefined,
    NODE_DISABLE_COLORS: undefined,
    // Node counts a terminal under a CI runner it does not know (CI set) as having two colours.
    CI: undefined,
    TEAMCITY_VERSION: undefined,
  });
  const node = nodeCommand([MAIN_JS, 'run'], env);
  const quoted = [node.command, ...node.args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
  // script -q: no banner; -f: flush at once; -e: its exit code is the daemon's; -c: the command.
  const child: ChildProcess = options.terminal
    ? spawn('script', ['-qfec', quoted, '/dev/null'], { cwd: dataDir, env, stdio: ['pipe', 'pipe', 'pipe'] })
    : spawn(node.command, node.args, { cwd: dataDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  return {
    output: () => output,
    async stop() {
      const pid = Number(readFileSync(join(dataDir, 'homeagent.pid'), 'utf8').trim());
      process.kill(pid, 'SIGTERM');
      return exited;
    },
  };
}

// Escape codes and the carriage returns a pty adds, so the lines can be matched as text.
const ESCAPE_CODE = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');
const plain = (text: string) => text.replace(ESCAPE_CODE, '').replace(/\r/g, '');

t.test('on a terminal: readable lines, in colour, no JSON', async (t) => {
  if (!requireTool(t, 'script', 'util-linux (script)')) return;
  const run = start(t, { terminal: true });
  await until('the readable ready line', () => (READABLE_READY.test(plain(run.output())) ? true : undefined), 30_000).catch((error) =>
    t.fail(String(error), { output: run.output().slice(-3000) }),
  );
  t.match(
    plain(run.output()),
    /^\d\d:\d\d:\d\d\.\d{3} INFO {2}daemon: HomeAgent starting {2}version=/m,
    'the first line, its fields as key=value',
  );
  t.ok(run.output().includes('\x1b['), 'in colour');
  t.notMatch(run.output(), /^\{"level"/m, 'no JSON line');
  t.equal(await run.stop(), 0, 'stops cleanly');
  t.match(plain(run.output()), /INFO {2}daemon: stopped cleanly/, 'the last line too');
});

t.test('on a terminal with HOMEAGENT_LOG_FORMAT=json: JSON lines', async (t) => {
  if (!requireTool(t, 'script', 'util-linux (script)')) return;
  const run = start(t, { terminal: true, format: 'json' });
  await until('the JSON ready line', () => (/"msg":"HomeAgent ready/.test(run.output()) ? true : undefined), 30_000);
  // The web page's first-run credentials are printed to the terminal, not logged: only log lines count.
  const text = plain(run.output());
  t.notMatch(text, /^\d\d:\d\d:\d\d\.\d{3} /m, 'no readable log line');
  t.ok(text.split('\n').filter((l) => l.startsWith('{"level"')).length > 5, 'the log lines are JSON records');
  t.equal(await run.stop(), 0);
});

t.test('in a pipe: JSON lines; with HOMEAGENT_LOG_FORMAT=pretty: readable ones without colour', async (t) => {
  const json = start(t, { terminal: false });
  await until('the JSON ready line', () => (/"msg":"HomeAgent ready/.test(json.output()) ? true : undefined), 30_000);
  t.notMatch(json.output(), READABLE_READY, 'no readable lines in a pipe by default');
  t.equal(await json.stop(), 0);

  const pretty = start(t, { terminal: false, format: 'pretty' });
  await until('the readable ready line', () => (READABLE_READY.test(pretty.output()) ? true : undefined), 30_000);
  t.notOk(pretty.output().includes('\x1b['), 'no colour into a pipe');
  t.notMatch(pretty.output(), /^\{"level"/m);
  t.equal(await pretty.stop(), 0);
});

/**
 * The isolated runner program (dist/plugins/cmd/runner-service.js, `npm run build` first) on a
 * real Unix socket, spoken to frame by frame: commands run with a fixed environment, timeouts
 * and cancels end the whole process group, output is capped, a client that leaves ends its
 * command, and garbage of every kind gets an error frame while the runner keeps serving. Also
 * started the way systemd starts it (socket activation, through systemd-socket-activate).
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { existsSync, mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { systemProgramLookup } from '../../../../plugins/cmd/program-lookup.js';
import { nodeCommand } from '../../../helpers/daemon.js';
import { alive, ended } from '../../../helpers/processes.js';
import { findTool } from '../../../helpers/tools.js';
import { until } from '../../../helpers/until.js';
import { tempDir } from '../../fixtures/support.js';

const SERVICE = fileURLToPath(new URL('../../../../dist/plugins/cmd/runner-service.js', import.meta.url));
const BUILT = existsSync(SERVICE) ? false : 'dist/ is not built (npm run build)';

interface Runner {
  socket: string;
  home: string;
  child: ChildProcessByStdio<null, Readable, Readable>;
  log: () => string;
  exited: Promise<number | null>;
}

async function startRunner(t: Test, options: string[] = []): Promise<Runner> {
  const home = realpathSync(tempDir(t, 'ha-runner-home-'));
  const socket = join(tempDir(t, 'ha-runner-run-'), 'cmd.sock');
  const command = nodeCommand([SERVICE, '--socket', socket, ...options]);
  // A secret in the runner's own environment: commands must never see it.
  const child = spawn(command.command, command.args, {
    cwd: home,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', RUNNER_SECRET: 'never-shown' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout.on('data', (chunk: Buffer) => {
    log += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    log += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  t.teardown(async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
    await exited;
  });
  await until('the runner to listen', () => (log.includes('listening') ? true : undefined), 20_000);
  return { socket, home, child, log: () => log, exited };
}

/** One client connection: frames as they arrive, and whether the runner closed it. */
class Connection {
  readonly socket: Socket;
  readonly frames: Array<Record<string, unknown>> = [];
  readonly closed: Promise<void>;
  /** The connection's error code (ECONNREFUSED before the listener's listen()), if it had one. */
  error: string | undefined;
  #buffer = '';

  constructor(path: string) {
    this.socket = createConnection(path);
    this.socket.on('data', (chunk: Buffer) => {
      this.#buffer += chunk.toString();
      for (let nl = this.#buffer.indexOf('\n'); nl >= 0; nl = this.#buffer.indexOf('\n')) {
        this.frames.push(JSON.parse(this.#buffer.slice(0, nl)));
        this.#buffer = this.#buffer.slice(nl + 1);
      }
    });
    this.socket.on('error', (error: NodeJS.ErrnoException) => {
      this.error = error.code;
    });
    this.closed = new Promise((resolve) => this.socket.on('close', () => resolve()));
  }

  send(frame: unknown): void {
    this.socket.write(typeof frame === 'string' ? frame : `${JSON.stringify(frame)}\n`);
  }

  frame(type: string): Promise<Record<string, unknown>> {
    return until(`a ${type} frame`, () => this.frames.find((f) => f.type === type), 30_000);
  }
}

function bin(name: string): string {
  const path = systemProgramLookup.resolveName(name);
  if (path === undefined) throw new Error(`${name} is not installed`);
  return path;
}

function run(executable: string, args: string[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'run',
    v: 1,
    executable,
    argv0: executable.split('/').at(-1),
    args,
    base: '',
    workdir: '',
    timeout_ms: 10_000,
    max_output_bytes: 32_000,
    kill_grace_ms: 200,
    ...extra,
  };
}

async function runOnce(runner: Runner, frame: unknown): Promise<Record<string, unknown>> {
  let connection = new Connection(runner.socket);
  // The socket's file exists from bind(), a moment before listen(): a connection in between is
  // refused, and is tried again (systemd-socket-activate binds and listens in two steps).
  for (const started = Date.now(); ; ) {
    connection.send(frame);
    await connection.closed;
    if (connection.error !== 'ECONNREFUSED' || Date.now() - started > 20_000) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
    connection = new Connection(runner.socket);
  }
  const last = connection.frames.at(-1);
  if (last === undefined) throw new Error('the runner closed without a frame');
  return last;
}

t.test('runner service', { skip: BUILT }, async (t) => {
  t.test('a command runs in the runner home with only PATH, LANG and HOME', async (t) => {
    const runner = await startRunner(t);
    const connection = new Connection(runner.socket);
    connection.send(run(bin('env'), []));
    const started = await connection.frame('started');
    t.match(started, { pid: Number, workdir: runner.home });
    const result = await connection.frame('result');
    await connection.closed;
    t.match(result, { workdir: runner.home, result: { exit_code: 0, timed_out: false, cancelled: false } });
    const lines = String((result.result as { stdout: string }).stdout)
      .split('\n')
      .filter((line) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(line));
    t.same(
      lines.sort(),
      [`HOME=${runner.home}`, 'LANG=C.UTF-8', 'PATH=/usr/local/bin:/usr/bin:/bin'],
      "the runner's own environment stays out",
    );
  });

  t.test('timeouts, output caps and the process group', async (t) => {
    const runner = await startRunner(t);
    t.match(await runOnce(runner, run(bin('sleep'), ['30'], { timeout_ms: 200 })), {
      type: 'result',
      result: { timed_out: true, exit_code: null, signal: 'SIGTERM' },
    });

    writeFileSync(join(runner.home, 'big.txt'), 'x'.repeat(10_000));
    const big = await runOnce(runner, run(bin('cat'), ['big.txt'], { max_output_bytes: 256 }));
    t.match(big, { result: { truncated: true, stdout: `${'x'.repeat(256)}\n[… 9744 bytes cut]` } });

    // Ignores SIGTERM and leaves a child behind: SIGKILL for the whole group after the grace.
    const stubborn = await runOnce(
      runner,
      run(
        process.execPath,
        [
          '-e',
          "const c = require('child_process').spawn('sleep', ['60'], { stdio: 'ignore' }); process.on('SIGTERM', () => {}); console.log(c.pid); setInterval(() => {}, 1000);",
        ],
        { timeout_ms: 1500 },
      ),
    );
    t.match(stubborn, { result: { timed_out: true, signal: 'SIGKILL' } });
    const grandchild = Number((stubborn.result as { stdout: string }).stdout.trim());
    t.ok(grandchild > 0, 'the grandchild pid was printed');
    await ended(grandchild);
    t.pass('the grandchild is gone too');
  });

  t.test('cancel, and a client that goes away mid-run', async (t) => {
    const runner = await startRunner(t);
    const cancelled = new Connection(runner.socket);
    cancelled.send(run(bin('sleep'), ['30']));
    await cancelled.frame('started');
    cancelled.send({ type: 'cancel' });
    t.match(await cancelled.frame('result'), { result: { cancelled: true, signal: 'SIGTERM' } });

    const leaving = new Connection(runner.socket);
    leaving.send(run(bin('sleep'), ['30']));
    const { pid } = (await leaving.frame('started')) as { pid: number };
    t.ok(alive(pid), 'the command runs');
    leaving.socket.destroy();
    await ended(pid, 20_000);
    t.pass('the command of a client that left was ended');
    t.match(await runOnce(runner, run(bin('echo'), ['still here'])), { result: { stdout: 'still here\n' } });
  });

  t.test('the working directory is checked on the runner side', async (t) => {
    const runner = await startRunner(t);
    mkdirSync(join(runner.home, 'sub'));
    const outside = realpathSync(tempDir(t));
    t.match(await runOnce(runner, run(bin('pwd'), [], { workdir: 'sub' })), { result: { stdout: `${join(runner.home, 'sub')}\n` } });
    t.match(await runOnce(runner, run(bin('pwd'), [], { base: outside })), { workdir: outside, result: { stdout: `${outside}\n` } });
    for (const workdir of ['..', outside, '/']) {
      t.match(
        await runOnce(runner, run(bin('pwd'), [], { workdir })),
        { type: 'error', error: { reason: 'rejected', field: 'workdir', detail: /outside/ } },
        `workdir ${workdir} refused`,
      );
    }
    t.match(await runOnce(runner, run(bin('pwd'), [], { base: '/nonexistent' })), { type: 'error', error: { reason: 'unavailable' } });
    t.match(await runOnce(runner, run('/nonexistent/program', [])), {
      type: 'error',
      error: { reason: 'failed', detail: /could not be started: ENOENT/ },
    });
  });

  t.test('garbage frames get an error and a closed connection; the runner keeps serving', async (t) => {
    const runner = await startRunner(t);
    const garbage: Array<[string, unknown, RegExp]> = [
      ['not JSON', 'hello\n', /not JSON/],
      ['binary', '\u0000\u00ff\u0001garbage\n', /not JSON/],
      ['an array', '[1,2]\n', /not a JSON object/],
      ['unknown type', { type: 'exec', cmd: 'sh' }, /unknown frame type/],
      ['another version', { ...run(bin('echo'), []), v: 2 }, /protocol version/],
      ['no executable', { ...run(bin('echo'), []), executable: undefined }, /executable/],
      ['a relative executable', run('echo', []), /executable must be an absolute path/],
      ['args not strings', run(bin('echo'), [1 as unknown as string]), /args\[0\]/],
      ['NUL in an argument', run(bin('echo'), ['a\u0000b']), /args\[0\]/],
      [
        'too many arguments',
        run(
          bin('echo'),
          Array.from({ length: 200 }, () => 'x'),
        ),
        /at most 128/,
      ],
      ['a zero timeout', run(bin('echo'), [], { timeout_ms: 0 }), /timeout_ms/],
      ['a huge timeout', run(bin('echo'), [], { timeout_ms: 10 ** 9 }), /timeout_ms/],
      ['a huge output cap', run(bin('echo'), [], { max_output_bytes: 10 ** 9 }), /max_output_bytes/],
      ['a relative base', run(bin('echo'), [], { base: 'tmp' }), /base/],
      ['a cancel before any run', { type: 'cancel' }, /cancel before any run/],
      ['an oversized frame', `${'x'.repeat(5 * 1024 * 1024)}\n`, /a frame of more than/],
    ];
    for (const [what, frame, why] of garbage) {
      t.match(
        await runOnce(runner, frame),
        { type: 'error', error: { detail: new RegExp(`HA_ERR_CMD_RUNNER_PROTOCOL: .*${why.source}`) } },
        what,
      );
    }
    const twice = new Connection(runner.socket);
    twice.send(run(bin('sleep'), ['30']));
    await twice.frame('started');
    twice.send(run(bin('echo'), ['second']));
    t.match(await twice.frame('error'), { error: { detail: /one run per connection/ } }, 'a second run on one connection');
    await twice.closed;

    t.equal(runner.child.exitCode, null, 'the runner is still running');
    t.match(await runOnce(runner, run(bin('echo'), ['ok'])), { type: 'result', result: { stdout: 'ok\n' } }, 'and serves the next client');
  });

  t.test('a connection that sends nothing, and more commands than the runner takes', async (t) => {
    const runner = await startRunner(t, ['--request-timeout-ms', '300', '--max-runs', '1']);
    const idle = new Connection(runner.socket);
    await idle.closed;
    t.match(idle.frames, [{ type: 'error', error: { detail: /no run frame within 300 ms/ } }]);

    const first = new Connection(runner.socket);
    first.send(run(bin('sleep'), ['30']));
    await first.frame('started');
    t.match(await runOnce(runner, run(bin('echo'), ['x'])), {
      type: 'error',
      error: { reason: 'unavailable', detail: /the most the runner takes/ },
    });
    first.send({ type: 'cancel' });
    await first.frame('result');
    await first.closed;
    t.match(await runOnce(runner, run(bin('echo'), ['after'])), { result: { stdout: 'after\n' } });
  });

  t.test('SIGTERM ends the running commands and the runner', async (t) => {
    const runner = await startRunner(t);
    const connection = new Connection(runner.socket);
    connection.send(run(bin('sleep'), ['30']));
    const { pid } = (await connection.frame('started')) as { pid: number };
    runner.child.kill('SIGTERM');
    t.equal(await runner.exited, 0, 'the runner exits 0');
    await ended(pid);
    t.pass('its command is gone');
  });

  t.test('usage errors', async (t) => {
    const command = nodeCommand([SERVICE]);
    const child = spawn(command.command, command.args, { env: { PATH: '/usr/bin:/bin' }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise((resolve) => child.on('exit', resolve));
    t.equal(code, 64, 'no socket: EX_USAGE');
    t.match(stderr, /run it from homeagent-cmd\.socket, or pass --socket PATH/);
  });
});

const activate = findTool('systemd-socket-activate');
t.test(
  'socket-activated, as systemd starts it',
  { skip: BUILT || (activate ? false : 'systemd-socket-activate is not installed') },
  async (t) => {
    const home = realpathSync(tempDir(t, 'ha-runner-home-'));
    const socket = join(tempDir(t, 'ha-runner-run-'), 'cmd.sock');
    const command = nodeCommand([SERVICE]);
    // systemd-socket-activate listens on the path and execs the service with LISTEN_FDS=1 on fd 3.
    const child = spawn(activate as string, ['-l', socket, command.command, ...command.args], {
      cwd: home,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    child.stdout.on('data', (chunk: Buffer) => {
      log += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      log += chunk.toString();
    });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    t.teardown(async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    });
    await until('the socket to exist', () => (existsSync(socket) ? true : undefined), 20_000);
    const runner = { socket, home, child, log: () => log, exited } as unknown as Runner;
    t.match(await runOnce(runner, run(bin('pwd'), [])), { type: 'result', result: { exit_code: 0, stdout: `${home}\n` } });
    t.match(log, /listening on the socket systemd passed/);
    t.match(await runOnce(runner, run(bin('echo'), ['again'])), { result: { stdout: 'again\n' } }, 'one service for every connection');
  },
);

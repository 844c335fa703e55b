/**
 * cmd_run through the isolated runner: the plugin keeps the policy, the audit and the history and
 * hands approved commands to the real runner program (dist/plugins/cmd/runner-service.js, `npm
 * run build` first) over its socket. plugin.cmd.isolation decides: auto uses the runner while its
 * socket is there and falls back to in-process (with the "not isolated" notice) when it is not;
 * runner refuses to run anything without it. Here the runner runs as the test's own user; that
 * it is another user who cannot see the daemon's secrets is the VM system test's part.
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { CmdPlugin } from '../../../../plugins/cmd/index.js';
import type { RunResult } from '../../../../plugins/cmd/runner.js';
import type { EventMap } from '../../../../src/events/event-bus.js';
import { ToolError } from '../../../../src/shared/tool.js';
import { nodeCommand } from '../../../helpers/daemon.js';
import { until } from '../../../helpers/until.js';
import { tempDir } from '../../fixtures/support.js';
import { type DaemonFixture, daemonFixture } from './daemon-fixture.js';

const SERVICE = fileURLToPath(new URL('../../../../dist/plugins/cmd/runner-service.js', import.meta.url));
const BUILT = existsSync(SERVICE) ? false : 'dist/ is not built (npm run build)';
const ALLOW = ['cat', 'echo', 'ls', 'pwd', 'sed', 'sleep'].map((program) => ({ program }));

interface Runner {
  socket: string;
  home: string;
  child: ChildProcessByStdio<null, Readable, Readable>;
  stop(): Promise<void>;
}

async function startRunner(t: Test, socket = join(tempDir(t, 'ha-runner-run-'), 'cmd.sock')): Promise<Runner> {
  const home = realpathSync(tempDir(t, 'ha-runner-home-'));
  const command = nodeCommand([SERVICE, '--socket', socket]);
  const child = spawn(command.command, command.args, { cwd: home, env: { PATH: '/usr/bin:/bin' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (chunk: Buffer) => {
    log += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  t.teardown(stop);
  await until('the runner to listen', () => (log.includes('listening') ? true : undefined), 20_000);
  return { socket, home, child, stop };
}

interface Started extends DaemonFixture {
  plugin: CmdPlugin;
  notices: Array<EventMap['daemon.notice']>;
  run(args: Record<string, unknown>, signal?: AbortSignal): Promise<RunResult>;
}

async function started(t: Test, settings: Record<string, unknown>): Promise<Started> {
  const fx = await daemonFixture(t, { allow: ALLOW, ...settings });
  const notices: Array<EventMap['daemon.notice']> = [];
  fx.tc.events.on('test', 'daemon.notice', (notice) => void notices.push(notice));
  const plugin = new CmdPlugin(fx.tc.context, { killGraceMs: 200 });
  await plugin.start();
  t.teardown(() => plugin.stop());
  return { ...fx, plugin, notices, run: (args, signal) => fx.tc.call('cmd_run', args, signal ? { signal } : {}) as Promise<RunResult> };
}

async function failure(promise: Promise<unknown>): Promise<ToolError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ToolError) return error;
    throw error;
  }
  throw new Error('the call succeeded');
}

t.test('cmd_run through the runner', { skip: BUILT }, async (t) => {
  t.test('auto with the runner socket there: commands run in the runner, policy and audit stay here', async (t) => {
    const runner = await startRunner(t);
    const fx = await started(t, { isolation: 'auto', runner_socket: runner.socket });
    t.same(fx.notices, [], 'isolated: no notice');
    t.match(fx.plugin.health(), { detail: new RegExp(`isolated in the runner at ${runner.socket}`) });

    const pwd = await fx.run({ argv: ['pwd'] });
    t.match(pwd, { exit_code: 0, stdout: `${runner.home}\n` }, "in the runner's own folder, not the plugin's");
    t.match(fx.tc.audits.at(-1), {
      action: 'cmd.run',
      details: { argv: ['pwd'], isolation: 'runner', workdir: runner.home, exit_code: 0 },
    });

    // Not the in-process guard's business here: the runner's user sees what it may see.
    t.match(await fx.run({ argv: ['ls', '..'] }), { exit_code: 0 });

    const sed = await failure(fx.run({ argv: ['sed', '-i', 's/a/b/', 'x'] }));
    t.match(sed.info, { reason: 'rejected', detail: /edits files in place/ }, 'the argument rules still apply');
    t.match(fx.tc.audits.at(-1), { action: 'cmd.denied' });

    mkdirSync(join(runner.home, 'sub'));
    t.match(await fx.run({ argv: ['pwd'], workdir: 'sub' }), { stdout: `${join(runner.home, 'sub')}\n` });
    const outside = await failure(fx.run({ argv: ['pwd'], workdir: '/' }));
    t.match(outside.info, { reason: 'rejected', field: 'workdir', detail: /outside/ }, 'the runner checks the workdir');
    t.match(fx.tc.audits.at(-1), { action: 'cmd.denied', details: { field: 'workdir' } });

    t.match(await fx.run({ argv: ['sleep', '30'], timeout_ms: 200 }), { timed_out: true, signal: 'SIGTERM' });
    const controller = new AbortController();
    const pending = fx.run({ argv: ['sleep', '30'] }, controller.signal);
    await until('the command to start', () => (fx.plugin.health().detail.startsWith('1 running') ? true : undefined));
    controller.abort();
    t.match(await pending, { cancelled: true }, 'a cancelled tool call cancels the command in the runner');

    const history = (await fx.tc.call('cmd_history', { limit: 1 })) as { runs: Array<Record<string, unknown>> };
    t.match(history.runs[0], { isolation: 'runner' });
    const owner = (await fx.tc.control.call('cmd.run', { argv: ['echo', 'via', 'cli'] }, { actor: 'cli', owner: true })) as RunResult;
    t.match(owner, { stdout: 'via cli\n' }, 'cmd.run goes through the runner too');
  });

  t.test('a runner that dies mid-run is a tool error, and nothing hangs', async (t) => {
    const runner = await startRunner(t);
    const fx = await started(t, { isolation: 'runner', runner_socket: runner.socket });
    const pending = failure(fx.run({ argv: ['sleep', '30'] }));
    await until('the command to start', () => (fx.plugin.health().detail.startsWith('1 running') ? true : undefined));
    await until('the runner to have a child', () => (childrenOf(runner.child.pid as number).length > 0 ? true : undefined));
    runner.child.kill('SIGKILL');
    t.match((await pending).info, {
      reason: 'failed',
      detail: /HA_ERR_CMD_RUNNER_PROTOCOL: the runner closed the connection before the command finished/,
    });
    t.match(fx.tc.audits.at(-1), { action: 'cmd.run', details: { isolation: 'runner', error: /closed the connection/ } });
  });

  t.test('runner mode without the socket runs nothing; the runner coming back is used at once', async (t) => {
    const socket = join(tempDir(t, 'ha-runner-run-'), 'cmd.sock');
    const fx = await started(t, { isolation: 'runner', runner_socket: socket });
    t.match(fx.notices, [
      {
        key: 'plugin.cmd.isolation',
        level: 'error',
        message: /^cmd_run cannot run commands: plugin\.cmd\.isolation is runner and there is no runner socket/,
      },
    ]);
    const refused = await failure(fx.run({ argv: ['echo', 'hi'] }));
    t.match(refused.info, { reason: 'unavailable', detail: /^HA_ERR_CMD_RUNNER_UNAVAILABLE: .*so no command runs/ });
    t.equal(fx.tc.audits.filter((a) => a.action === 'cmd.run').length, 0, 'nothing ran');

    await startRunner(t, socket);
    t.match(await fx.run({ argv: ['echo', 'hi'] }), { stdout: 'hi\n' });
    t.match(fx.notices.at(-1), { key: 'plugin.cmd.isolation', message: null }, 'the notice is cleared');
  });

  t.test('auto falls back to in-process when the socket goes away, and says so', async (t) => {
    const runner = await startRunner(t);
    const fx = await started(t, { isolation: 'auto', runner_socket: runner.socket });
    t.match(await fx.run({ argv: ['pwd'] }), { stdout: `${runner.home}\n` });
    await runner.stop();
    // A killed runner leaves its socket file behind: connecting to it fails.
    const gone = await failure(fx.run({ argv: ['pwd'] }));
    t.match(gone.info, { reason: 'unavailable', detail: /HA_ERR_CMD_RUNNER_UNAVAILABLE: .*cannot be reached \(ECONNREFUSED\)/ });
    fx.tc.context.settings.set('runner_socket', join(tempDir(t), 'none.sock'));
    t.match(await fx.run({ argv: ['pwd'] }), { stdout: `${fx.cwd}\n` }, 'no socket: in-process, in the plugin folder');
    t.match(fx.notices.at(-1), { level: 'warning', message: /^cmd_run not isolated/ });
    t.match(fx.tc.audits.at(-1), { action: 'cmd.run', details: { isolation: 'in_process' } });
  });
});

/** The pids whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  try {
    return readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .filter((name) => {
        try {
          return readFileSync(`/proc/${name}/stat`, 'utf8').split(') ')[1]?.split(' ')[1] === String(pid);
        } catch {
          return false;
        }
      })
      .map(Number);
  } catch {
    return [];
  }
}

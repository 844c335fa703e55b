/**
 * The built daemon with cmd_run's isolated runner (docs/security.md, "cmd_run isolation"): with
 * the runner program listening on plugin.cmd.runner_socket, `homeagentctl status` has no "not
 * isolated" notice and the owner's cmd.run (over the real CLI socket) runs in the runner's
 * folder; a runner that died is a coded error; with its socket gone, plugin.cmd.isolation auto
 * falls back to in-process and the status says "cmd_run not isolated" (the daemon-lifecycle test
 * covers a daemon that never had one). Here the runner runs as the test's user; the VM system
 * test runs it as homeagent-cmd.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { realpathSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { nodeCommand, REPO_ROOT, spawnDaemon, tempDir } from '../helpers/daemon.js';
import { RpcConnection } from '../helpers/rpc.js';
import { until } from '../helpers/until.js';

const SERVICE = join(REPO_ROOT, 'dist', 'plugins', 'cmd', 'runner-service.js');

interface Status {
  state: string;
  notices: Array<{ level: string; key: string; message: string }>;
}

t.test('the daemon uses the runner while its socket is there, and says when it is not', async (t) => {
  const home = realpathSync(tempDir(t, 'ha-runner-home-'));
  writeFileSync(join(home, 'runner-home.txt'), '');
  const socket = join(tempDir(t, 'ha-runner-run-'), 'cmd.sock');
  const command = nodeCommand([SERVICE, '--socket', socket]);
  const runner: ChildProcess = spawn(command.command, command.args, {
    cwd: home,
    env: { PATH: '/usr/bin:/bin' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let runnerLog = '';
  runner.stdout?.on('data', (chunk: Buffer) => {
    runnerLog += chunk.toString();
  });
  const runnerExited = new Promise((resolve) => runner.on('exit', resolve));
  t.teardown(async () => {
    if (runner.exitCode === null && runner.signalCode === null) runner.kill('SIGKILL');
    await runnerExited;
  });
  await until('the runner to listen', () => (runnerLog.includes('listening') ? true : undefined), 20_000);

  const daemon = spawnDaemon(t, { env: { HOMEAGENT_PLUGIN_CMD_RUNNER_SOCKET: socket } });
  await daemon.waitForReady();
  const status = async () => (await daemon.ctl(['status', '--json'])).json() as Status;
  t.same(
    (await status()).notices.filter((n) => n.key === 'plugin.cmd.isolation'),
    [],
    'isolated: no cmd notice',
  );

  const rpc = await RpcConnection.connect(daemon.socketPath);
  t.teardown(() => rpc.socket.destroy());
  const ls = await rpc.request('cmd.run', { argv: ['ls'] });
  t.match(ls, { ok: true, result: { exit_code: 0, stdout: 'runner-home.txt\n' } }, "cmd.run runs in the runner's folder");
  const denied = await rpc.request('cmd.run', { argv: ['sh', '-c', 'id'] });
  t.match(
    denied,
    { ok: false, error: { code: 'HA_ERR_CMD_DENIED', message: /not in the cmd allowlist/ } },
    'the policy is still the daemon’s',
  );
  t.ok(
    await daemon.sawLog((line) => line.json?.action === 'cmd.run' && line.json?.isolation === 'runner', 10_000),
    'the run is audited with isolation runner',
  );

  // A runner killed outright leaves its socket file behind: the daemon cannot connect, and says so
  // (under systemd the socket is systemd's, and the next connection starts the runner again).
  runner.kill('SIGKILL');
  await runnerExited;
  const gone = await rpc.request('cmd.run', { argv: ['ls'] });
  t.match(
    gone,
    { ok: false, error: { code: 'HA_ERR_CMD_RUNNER_UNAVAILABLE', message: /ECONNREFUSED/ } },
    'a coded error, not an in-process run',
  );

  // No socket at all (as after systemctl stop homeagent-cmd.socket): auto runs in-process, and says so.
  unlinkSync(socket);
  const fallback = await rpc.request('cmd.run', { argv: ['ls'] });
  t.match(fallback, { ok: true, result: { exit_code: 0, stdout: '' } }, "in-process, in the plugin's own (empty) folder");
  const after = await status();
  t.match(after.notices, [{ level: 'warning', key: 'plugin.cmd.isolation', message: /^cmd_run not isolated/ }]);
  t.equal(after.state, 'running', 'a warning: the daemon is not degraded');
  const text = await daemon.ctl(['status']);
  t.match(text.stdout, /- cmd_run not isolated/, 'homeagentctl status says it');
  const leak = await rpc.request('cmd.run', { argv: ['cat', `/proc/${daemon.pid}/./environ`] });
  t.match(leak, { ok: false, error: { code: 'HA_ERR_CMD_DENIED', message: new RegExp(`resolves to /proc/${daemon.pid}/environ`) } });
});

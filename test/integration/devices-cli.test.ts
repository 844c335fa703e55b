/**
 * `homeagentctl devices` against an in-process daemon with the remotedevice gateway on (port 0)
 * and the real companion client (tools/companion/companion.mjs, spawned as a user would run it):
 * the owner adds a device and gets its token and the companion line once, the companion binds with
 * exactly that line's --url/--id/--token and the list shows it online with what it may do now;
 * rotate disconnects it (the companion exits 4, revoked) and the old token is refused (exit 3);
 * revoke removes it. Usage errors exit 64 naming the problem; with the plugin off the answer says
 * how to enable it. Both languages' output is read.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import t, { type Test } from 'tap';
import { runHomeagentctl } from '../../src/cli/run-homeagentctl.js';
import { REPO_ROOT } from '../helpers/daemon.js';
import { startDaemon } from '../helpers/in-process-daemon.js';

const COMPANION = join(REPO_ROOT, 'tools', 'companion', 'companion.mjs');

async function ctl(socket: string, args: string[], lang = 'C', cwd = '/'): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runHomeagentctl(['--socket', socket, ...args], {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    stdin: Readable.from([]),
    cwd,
    env: { LANG: lang },
  });
  return { code, stdout, stderr };
}

/** Runs the companion with the words the CLI printed after `node companion/companion.mjs`; resolves its exit code. */
function companion(t: Test, args: string[]) {
  const child = spawn(process.execPath, [COMPANION, ...args, '--allow', 'uptime', '--reconnect-min-ms', '100'], {
    env: { ...process.env, LANG: 'C' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  });
  return { exited, output: () => out };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, deadlineMs = 20_000): Promise<T> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

t.test('devices add, list, rotate and revoke with the real companion client', async (t) => {
  const daemon = await startDaemon(t, {
    env: { HOMEAGENT_PLUGIN_REMOTEDEVICE_ENABLED: 'true', HOMEAGENT_PLUGIN_REMOTEDEVICE_PORT: '0' },
  });
  await daemon.waitForReady();
  const socket = daemon.socketPath;

  const empty = await ctl(socket, ['devices']);
  t.equal(empty.code, 0, empty.stderr);
  t.match(empty.stdout, /device gateway: ws:\/\/127\.0\.0\.1:\d+\/device\nno devices yet/);

  const added = await ctl(socket, ['devices', 'add', 'laptop', '--name', "Anna's laptop", '--grant', 'cmdrun,notify']);
  t.equal(added.code, 0, added.stderr);
  const line = /node companion\/companion\.mjs (--url \S+ --id laptop --token (\S+))$/m.exec(added.stdout);
  t.ok(line, `the companion line is printed:\n${added.stdout}`);
  const [, words = '', token = ''] = line ?? [];
  t.match(added.stdout, `token: ${token}`, 'the token is printed');

  const first = companion(t, words.split(' '));
  const online = await until('the device online', async () => {
    const listed = await ctl(socket, ['devices']);
    return /laptop\s+Anna's laptop\s+online/.test(listed.stdout) ? listed.stdout : undefined;
  });
  t.match(online, /online(?: \([^)]*\))?\s+cmdrun,notify\s+cmdrun,notify\s+\d{4}-/, 'granted and offered: what it may do now');
  const zh = await ctl(socket, ['devices'], 'zh_CN.UTF-8');
  t.match(zh.stdout, /设备网关：ws:\/\/[\s\S]*laptop\s+Anna's laptop\s+在线/);
  const json = JSON.parse((await ctl(socket, ['--json', 'devices'])).stdout) as { devices: Array<{ id: string; online: boolean }> };
  t.same(
    json.devices.map((d) => [d.id, d.online]),
    [['laptop', true]],
  );

  const rotated = await ctl(socket, ['devices', 'rotate', 'laptop']);
  t.equal(rotated.code, 0, rotated.stderr);
  const newToken = /^token: (\S+)$/m.exec(rotated.stdout)?.[1];
  t.ok(newToken && newToken !== token, 'rotate prints a new token');
  t.equal(await first.exited, 4, `the connected companion is told it was revoked:\n${first.output()}`);
  const stale = companion(t, words.split(' '));
  t.equal(await stale.exited, 3, 'the old token is refused');

  const revoked = await ctl(socket, ['devices', 'revoke', 'laptop']);
  t.equal(revoked.code, 0, revoked.stderr);
  t.match(revoked.stdout, /^revoked laptop/);
  t.match((await ctl(socket, ['devices'])).stdout, /no devices yet/);
  const again = await ctl(socket, ['devices', 'revoke', 'laptop']);
  t.not(again.code, 0);
  t.match(again.stderr, /HA_ERR_REMOTEDEVICE_UNKNOWN|no device laptop/);

  for (const [args, why] of [
    [['devices', 'add'], /devices add needs an ID/],
    [['devices', 'add', 'Laptop'], /must be a lower-case letter/],
    [['devices', 'add', 'laptop', 'two'], /takes one ID/],
    [['devices', 'add', 'pc', '--grant', 'cmdrun,teleport'], /unknown capability teleport/],
    [['devices', 'list', '--name', 'x'], /--name and --grant belong to devices add/],
    [['devices', 'frob'], /unknown devices command frob/],
  ] as const) {
    const refused = await ctl(socket, [...args]);
    t.equal(refused.code, 64, `${args.join(' ')} is a usage error`);
    t.match(refused.stderr, why);
  }
});

t.test('with the gateway off the answer says how to turn it on', async (t) => {
  const daemon = await startDaemon(t);
  await daemon.waitForReady();
  const off = await ctl(daemon.socketPath, ['devices']);
  t.not(off.code, 0);
  t.match(off.stderr, /remotedevice plugin is not running: enable it with plugin\.remotedevice\.enabled: true/);
});

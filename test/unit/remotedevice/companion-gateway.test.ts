/**
 * The real gateway and the real companion client (tools/companion/companion.mjs, a child process)
 * over a real loopback socket: bind and the entity and output channel it brings, every capability
 * through the model's tools and the channel (a command, a command refused by the device's
 * allowlist, a long command fetched with device_ctl_cmdresult, a screenshot shown to the model, the
 * clipboard both ways, a notification, a sound), a wrong token, a device that stops answering
 * pings going offline, a device revoked while connected, and the devices kept across a restart.
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import t from 'tap';
import { join, OWNER, PNG, startRig, toolError, until, wav } from './rig.js';

t.test('a companion binds and serves every capability', async (t) => {
  const rig = await startRig(t, { cmd_wait_ms: 3000 });
  const token = await rig.add('laptop', { name: 'Study laptop' });
  t.match(token, /^[A-Za-z0-9_-]{32}$/, 'a random token is answered once');
  t.equal(await rig.state('laptop'), 'off', 'a registered device is an entity, off until it connects');

  const clipboard = join(rig.dataDir, 'clipboard.txt');
  writeFileSync(clipboard, 'shopping: milk, eggs');
  const screen = join(rig.dataDir, 'screen.png');
  writeFileSync(screen, PNG);
  const sound = join(rig.dataDir, 'sound.wav');
  // A program the allowlist offers that takes a while: a script named like an allowed command.
  const bin = join(rig.dataDir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'slowjob'), '#!/bin/sh\nsleep 1\necho finished "$@"\n');
  chmodSync(join(bin, 'slowjob'), 0o755);

  process.env.PATH = `${bin}:${process.env.PATH}`;
  t.teardown(() => {
    process.env.PATH = String(process.env.PATH).replace(`${bin}:`, '');
  });
  const companion = rig.companion([
    '--id',
    'laptop',
    '--token',
    token,
    '--allow',
    'echo,slowjob',
    '--clipboard-file',
    clipboard,
    '--screenshot-file',
    screen,
    '--sound-file',
    sound,
  ]);
  await companion.waitFor(/^bound as laptop; offering: cmdrun, screenshot, clipboard_read, clipboard_write, sound, notify$/);
  await until('the entity on', async () => ((await rig.state('laptop')) === 'on' ? true : undefined));
  const entity = await rig.tc.entities.resolve('binary_sensor.device_laptop');
  t.equal(entity.name, 'Study laptop');
  t.match(entity.attributes, { device_class: undefined });
  t.same(entity.attributes.capabilities, ['cmdrun', 'screenshot', 'clipboard_read', 'clipboard_write', 'sound', 'notify']);

  const list = (await rig.tc.call('list_devices', {})) as { devices: Array<Record<string, unknown>> };
  t.match(list.devices, [{ id: 'laptop', name: 'Study laptop', online: true, channel: 'output_send__device_laptop' }]);
  const status = (await rig.tc.call('device_ctl_status', { device: 'laptop' })) as Record<string, unknown>;
  t.match(status, { online: true, capability_bits: 63, client: /^homeagent-companion\//, pending: 0 });

  // cmdrun: the device runs what its allowlist names, without a shell.
  const ran = (await rig.tc.call('device_ctl_cmdrun', { device: 'laptop', command: 'echo', args: ['hello', '$HOME; rm -rf /'] })) as Record<
    string,
    unknown
  >;
  t.match(ran, { status: 'done', exit_code: 0, stdout: 'hello $HOME; rm -rf /\n', stderr: '', truncated: false });
  t.match(rig.tc.audits.find((a) => a.action === 'remotedevice.cmdrun')?.details, { device: 'laptop', command: 'echo' });

  const refused = await toolError(rig.tc.call('device_ctl_cmdrun', { device: 'laptop', command: 'rm', args: ['-rf', '/tmp/x'] }));
  t.equal(refused.info.reason, 'rejected');
  t.match(refused.info.detail, /HA_ERR_REMOTEDEVICE_REFUSED.*not_allowed.*rm is not on this device's allowlist/);
  const jobs = (await rig.tc.call('device_ctl_status', { device: 'laptop' })) as { recent_commands: Array<Record<string, unknown>> };
  t.match(jobs.recent_commands.at(-1), { command: 'rm -rf /tmp/x', status: 'failed', error: { code: 'HA_ERR_REMOTEDEVICE_REFUSED' } });

  // A command longer than cmd_wait_ms: its job id first, the result later.
  rig.tc.settings.set('cmd_wait_ms', 0);
  const started = (await rig.tc.call('device_ctl_cmdrun', { device: 'laptop', command: 'slowjob', args: ['ok'] })) as {
    job_id: string;
    status: string;
  };
  t.equal(started.status, 'running');
  const result = (await rig.tc.call('device_ctl_cmdresult', { job_id: started.job_id, wait_s: 30 })) as Record<string, unknown>;
  t.match(result, { job_id: started.job_id, status: 'done', exit_code: 0, stdout: 'finished ok\n' });
  const noJob = await toolError(rig.tc.call('device_ctl_cmdresult', { job_id: 'job_000000000000' }));
  t.equal(noJob.info.reason, 'not_found');

  // screensee: the picture is stored and shown to the model in the turn.
  const shot = (await rig.tc.call('screensee', { device: 'laptop' })) as Record<string, unknown>;
  t.match(shot, { device: 'laptop', mime: 'image/png', bytes: PNG.length, width: 2, height: 1 });
  t.same(rig.tc.attached, [{ tool: 'screensee', digest: shot.media_id, mime: 'image/png' }]);
  t.same(rig.tc.media.read(String(shot.media_id)), PNG, 'the media store holds the screenshot');

  // The clipboard, both ways.
  t.match(await rig.tc.call('device_clipboard', { device: 'laptop', action: 'read' }), { text: 'shopping: milk, eggs', truncated: false });
  t.match(await rig.tc.call('device_clipboard', { device: 'laptop', action: 'write', text: '门锁密码不在这里' }), { written: 8 });
  t.equal(readFileSync(clipboard, 'utf8'), '门锁密码不在这里');

  // The output channel: a notification (text) and a sound (audio, a media id).
  const channel = rig.tc.channels.get('device_laptop');
  t.ok(channel, 'an online device is an output channel');
  t.equal(channel?.capabilities, 1 | 8, 'text and audio');
  const from = companion.lines.length;
  await channel?.send({ id: 'o1', channel: 'device_laptop', type: 'text', payload: 'Dinner is ready', meta: {}, created_at: Date.now() });
  await companion.waitFor(/^\[notification\] HomeAgent: Dinner is ready$/, from);
  const stored = rig.tc.media.put(wav());
  await channel?.send({ id: 'o2', channel: 'device_laptop', type: 'audio', payload: stored.digest, meta: {}, created_at: Date.now() });
  t.same(readFileSync(sound), wav(), 'the device received the sound it plays');
  const notSound = rig.tc.media.put(PNG);
  await t.rejects(
    channel?.send({
      id: 'o3',
      channel: 'device_laptop',
      type: 'audio',
      payload: notSound.digest,
      meta: {},
      created_at: Date.now(),
    }) as Promise<void>,
    { code: 'HA_ERR_REMOTEDEVICE_CAPABILITY' },
  );
});

t.test('capabilities the owner did not grant are not asked for, whatever the device offers', async (t) => {
  const rig = await startRig(t);
  const token = await rig.add('phone', { capabilities: ['notify'] });
  const companion = rig.companion(['--id', 'phone', '--token', token, '--allow', 'echo', '--clipboard-file', join(rig.dataDir, 'c.txt')]);
  await companion.waitFor(/^bound as phone; offering: notify$/);
  const denied = await toolError(rig.tc.call('device_ctl_cmdrun', { device: 'phone', command: 'echo' }));
  t.equal(denied.info.reason, 'capability');
  t.match(denied.info.detail, /the owner granted notify/);
  const clip = await toolError(rig.tc.call('device_clipboard', { device: 'phone', action: 'read' }));
  t.equal(clip.info.reason, 'capability');
  t.equal(rig.tc.channels.get('device_phone')?.capabilities, 1, 'text only');
});

t.test('a wrong token is refused and the companion exits saying so', async (t) => {
  const rig = await startRig(t);
  await rig.add('laptop');
  const wrong = rig.companion(['--id', 'laptop', '--token', 'not-the-token']);
  t.equal(await wrong.exited, 3);
  t.match(
    wrong.lines.join('\n'),
    /gateway error HA_ERR_REMOTEDEVICE_AUTH: unknown device id or wrong token[\s\S]*refused the device id or token/,
  );
  const unknown = rig.companion(['--id', 'nobody', '--token', 'x']);
  t.equal(await unknown.exited, 3, 'an unknown id gets the same answer');
  t.equal(await rig.state('laptop'), 'off');
  t.match(rig.plugin.health().detail, /2 binds refused/);
  t.match(rig.plugin.health().detail_zh, /2 次绑定被拒/);
});

t.test('a device that stops answering pings goes offline', async (t) => {
  const rig = await startRig(t, { ping_interval_ms: 200, ping_timeout_ms: 300 });
  const token = await rig.add('board');
  const companion = rig.companion(['--id', 'board', '--token', token]);
  await companion.waitFor(/^bound as board/);
  await until('board online', async () => ((await rig.state('board')) === 'on' ? true : undefined));
  // Two pings answered (each pong moves last_seen): still online.
  const seen = new Set<unknown>();
  await until('two pongs', async () => {
    seen.add(((await rig.tc.call('device_ctl_status', { device: 'board' })) as { last_seen?: string }).last_seen);
    return seen.size >= 3 ? true : undefined;
  });
  t.equal(await rig.state('board'), 'on', 'answered pings keep it online');
  companion.child.kill('SIGSTOP');
  await until('board offline', async () => ((await rig.state('board')) === 'off' ? true : undefined), 20_000);
  const status = (await rig.tc.call('device_ctl_status', { device: 'board' })) as Record<string, unknown>;
  t.match(status, { online: false, last_offline: { code: 'HA_ERR_REMOTEDEVICE_PING_TIMEOUT' } });
  t.notOk(rig.tc.channels.has('device_board'), 'its output channel is gone');
  const offline = await toolError(rig.tc.call('device_ctl_cmdrun', { device: 'board', command: 'uptime' }));
  t.equal(offline.info.reason, 'unavailable');
  // Woken up, it notices the closed connection and binds again.
  const from = companion.lines.length;
  companion.child.kill('SIGCONT');
  await companion.waitFor(/^bound as board/, from);
  await until('board online again', async () => ((await rig.state('board')) === 'on' ? true : undefined));
});

t.test('a device revoked while connected is cut off, and its pending command fails', async (t) => {
  const rig = await startRig(t, { cmd_wait_ms: 0 });
  const token = await rig.add('laptop');
  const companion = rig.companion(['--id', 'laptop', '--token', token, '--allow', 'sleep']);
  await companion.waitFor(/^bound as laptop/);
  const started = (await rig.tc.call('device_ctl_cmdrun', { device: 'laptop', command: 'sleep', args: ['30'] })) as { job_id: string };
  t.same(await rig.tc.control.call('remotedevice.revoke', { id: 'laptop' }, OWNER), { revoked: 'laptop', was_online: true });
  t.equal(await companion.exited, 4, 'the companion exits: revoked');
  t.match(companion.lines.join('\n'), /HA_ERR_REMOTEDEVICE_REVOKED/);
  t.match(await rig.tc.call('device_ctl_cmdresult', { job_id: started.job_id }), {
    status: 'failed',
    error: { code: 'HA_ERR_REMOTEDEVICE_REVOKED' },
  });
  t.throws(() => rig.tc.entities.resolve('binary_sensor.device_laptop'), { code: 'HA_ERR_ENTITY_NOT_FOUND' });
  const gone = await toolError(rig.tc.call('device_ctl_status', { device: 'laptop' }));
  t.equal(gone.info.reason, 'not_found');
  // The old token binds no more.
  const again = rig.companion(['--id', 'laptop', '--token', token]);
  t.equal(await again.exited, 3);
  await t.rejects(rig.tc.control.call('remotedevice.add', { id: 'laptop' }, { actor: 'webui:guest' }), { code: 'HA_ERR_RPC_FORBIDDEN' });
});

t.test('rotating a token disconnects the device; the new token binds', async (t) => {
  const rig = await startRig(t);
  const token = await rig.add('laptop');
  const first = rig.companion(['--id', 'laptop', '--token', token]);
  await first.waitFor(/^bound as laptop/);
  const rotated = (await rig.tc.control.call('remotedevice.rotate', { id: 'laptop' }, OWNER)) as { token: string };
  t.not(rotated.token, token);
  t.equal(await first.exited, 4);
  const second = rig.companion(['--id', 'laptop', '--token', rotated.token]);
  await second.waitFor(/^bound as laptop/);
});

t.test('devices are kept across a restart and bind again with their token', async (t) => {
  const rig = await startRig(t);
  const token = await rig.add('laptop', { name: 'Laptop' });
  await rig.add('phone', { capabilities: ['notify', 'sound'] });
  const companion = rig.companion(['--id', 'laptop', '--token', token]);
  await companion.waitFor(/^bound as laptop/);
  const from = companion.lines.length;
  await rig.restart();
  await companion.waitFor(/^bound as laptop/, from);
  const list = (await rig.tc.control.call('remotedevice.list', {}, OWNER)) as { devices: Array<Record<string, unknown>> };
  t.match(list.devices, [
    { id: 'laptop', name: 'Laptop', online: true },
    { id: 'phone', online: false, granted: ['sound', 'notify'] },
  ]);
  const file = readFileSync(join(rig.dataDir, 'plugin-data', 'remotedevice', 'devices.db'));
  t.notOk(file.includes(Buffer.from(token)), 'the token itself is not stored');
});

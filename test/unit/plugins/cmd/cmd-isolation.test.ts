/**
 * cmd_run in-process (no isolated runner): the outside tester's ten reads of the daemon's
 * environment and stored secrets, and their near variants, are refused through the real tool with
 * the real /proc, a real data folder (state.db, a backup, credentials.json) and a real
 * configuration, while each of them, started directly, really would have read the secret: the
 * refusal is what stops them. Ordinary reads still run. The status says "cmd_run not isolated".
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { CmdPlugin } from '../../../../plugins/cmd/index.js';
import type { CmdAllowEntry } from '../../../../plugins/cmd/policy.js';
import { systemProgramLookup } from '../../../../plugins/cmd/program-lookup.js';
import { type RunResult, runCommand } from '../../../../plugins/cmd/runner.js';
import { defaultConfig } from '../../../../src/config/loader.js';
import type { EventMap } from '../../../../src/events/event-bus.js';
import { HomeAgentError } from '../../../../src/shared/errors.js';
import { ToolError } from '../../../../src/shared/tool.js';
import { asContext } from '../../../helpers/plugin-context.js';
import { type Teardown, tempDir } from '../../fixtures/support.js';
import { type DaemonFixture, daemonFixture, SECRET, tenReads } from './daemon-fixture.js';

/** The shipped allowlist, plus the programs the variants below use. */
const ALLOW: CmdAllowEntry[] = [
  ...defaultConfig().plugin.cmd.allow,
  ...['wc', 'tar', 'sha256sum', 'readlink'].map((program) => ({ program })),
];

async function started(t: Teardown, settings: Record<string, unknown> = {}): Promise<DaemonFixture & { plugin: CmdPlugin }> {
  const fx = await daemonFixture(t, { allow: ALLOW, ...settings });
  const plugin = new CmdPlugin(fx.tc.context, { killGraceMs: 200 });
  await plugin.start();
  t.teardown(() => plugin.stop());
  return { ...fx, plugin };
}

async function refusal(fx: DaemonFixture, argv: string[]): Promise<ToolError | RunResult> {
  try {
    return (await fx.tc.call('cmd_run', { argv })) as RunResult;
  } catch (error) {
    if (error instanceof ToolError) return error;
    throw error;
  }
}

/** The same command started directly (no policy), with the plugin's environment and working directory: what it would have read. */
async function direct(fx: DaemonFixture, argv: string[]): Promise<RunResult> {
  const [program, ...args] = argv as [string, ...string[]];
  const executable = systemProgramLookup.resolveName(program);
  if (executable === undefined) throw new Error(`${program} is not installed`);
  return runCommand({
    executable,
    argv0: program,
    args,
    cwd: fx.cwd,
    env: { PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8', HOME: fx.cwd },
    timeoutMs: 20000,
    maxOutputBytes: 1_000_000,
    killGraceMs: 200,
    signal: new AbortController().signal,
  });
}

t.test("the outside tester's ten reads: 0 succeed in-process, and each one would have", async (t) => {
  const fx = await started(t);
  const reads = tenReads(fx.daemon.pid, fx.data);
  // The repro's glob is not expanded without a shell; the file it meant is the real backup.
  const concrete = ['grep', '-a', SECRET, fx.backup];
  let refused = 0;
  for (const argv of [...reads, concrete]) {
    const outcome = await refusal(fx, argv);
    if (outcome instanceof ToolError && /^HA_ERR_CMD_DENIED: /.test(outcome.info.detail)) refused++;
    else t.fail(`ran: ${JSON.stringify(argv)}`, { outcome });
  }
  t.equal(refused, reads.length + 1, `all ${reads.length + 1} refused`);
  t.equal(fx.tc.audits.filter((a) => a.action === 'cmd.run').length, 0, 'nothing ran');
  t.equal(fx.tc.audits.filter((a) => a.action === 'cmd.denied').length, reads.length + 1, 'every refusal audited');

  // Started directly, they read the daemon's secret (grep -f and du read it without printing all of it).
  for (const argv of [...reads.filter((argv) => !argv.some((arg) => arg.includes('*'))), concrete]) {
    const result = await direct(fx, argv);
    const shown = `${result.stdout}${result.stderr}`.includes(SECRET);
    const read = argv[1] === '-f' ? result.exit_code === 1 : shown;
    t.ok(read, `started directly, ${JSON.stringify(argv)} reads the secret (exit ${result.exit_code})`);
  }
});

t.test("the same reads of the plugin's own daemon process are refused", async (t) => {
  const fx = await started(t);
  for (const argv of tenReads(process.pid, fx.data)) {
    const outcome = await refusal(fx, argv);
    t.ok(outcome instanceof ToolError && outcome.info.detail.startsWith('HA_ERR_CMD_DENIED'), `refused: ${JSON.stringify(argv)}`);
  }
});

t.test('near variants are refused too', async (t) => {
  const fx = await started(t);
  const pid = fx.daemon.pid;
  const outside = tempDir(t);
  symlinkSync(join(fx.data, 'state.db'), join(fx.cwd, 'db-link'));
  symlinkSync(join(fx.data, 'plugin-data'), join(fx.cwd, 'plugins-link'));
  mkdirSync(join(fx.cwd, 'tree'));
  symlinkSync(fx.data, join(fx.cwd, 'tree', 'to-data'));
  writeFileSync(join(fx.cwd, 'list0'), `/etc/hostname\0${fx.credentials}\0`);
  writeFileSync(join(fx.cwd, 'sums'), `${'0'.repeat(64)}  ${fx.credentials}\n`);
  writeFileSync(join(fx.cwd, 'names'), `${fx.keyFile}\n`);
  const variants: string[][] = [
    ['cat', 'db-link'],
    ['cat', 'plugins-link/webui/credentials.json'],
    ['cat', '../webui/credentials.json'],
    ['cat', '../../state.db'],
    ['cat', `${fx.cwd}/../../backups/../plugin-data/webui/credentials.json`],
    ['cat', `/proc/${pid}/task/${pid}/environ`],
    ['cat', '/proc/thread-self/environ'],
    ['cat', `/proc/${pid}/cwd/state.db`],
    ['cat', `/proc/${pid}/root${fx.credentials}`],
    ['cat', `/proc/${pid}/fd/0`],
    ['cat', '/dev/stdin'],
    ['grep', '-a', '-r', '--include=environ', SECRET, '/proc'],
    ['grep', '-a', '-r', SECRET, '/'],
    ['grep', '-a', '-R', SECRET, 'tree'],
    ['grep', `-f/proc/${pid}/environ`, '/etc/hostname'],
    ['grep', '-af', `/proc/${pid}/environ`, '/etc/hostname'],
    ['grep', `--file=/proc/${pid}/environ`, '/etc/hostname'],
    ['du', '--files0-from', `/proc/${pid}/environ`],
    ['du', '-a', '..'],
    ['find', '/', '-name', 'credentials.json'],
    ['ls', '-R', '/tmp'],
    ['wc', '--files0-from=list0'],
    ['sort', '--files0-from=list0'],
    ['sha256sum', '-c', 'sums'],
    ['file', '-f', 'names'],
    ['tar', '-cf', '-', fx.data],
    ['cat', fx.config],
    ['cat', fx.keyFile],
    ['head', `${outside}/../${fx.data.split('/').at(-1)}/state.db`],
    ['ps', 'e'],
    ['ps', `axeww`],
    ['ps', `p${pid}e`],
  ];
  for (const argv of variants) {
    const outcome = await refusal(fx, argv);
    t.ok(
      outcome instanceof ToolError && outcome.info.detail.startsWith('HA_ERR_CMD_DENIED'),
      `refused: ${JSON.stringify(argv)}${outcome instanceof ToolError ? '' : ` (ran: ${JSON.stringify(outcome).slice(0, 300)})`}`,
    );
  }
  t.equal(fx.tc.audits.filter((a) => a.action === 'cmd.run').length, 0, 'nothing ran');
  // The refusal names what the path resolved to.
  t.match(((await refusal(fx, ['cat', `/proc/self/../${pid}/environ`])) as ToolError).info, {
    reason: 'rejected',
    field: 'argv',
    detail: new RegExp(`resolves to /proc/${pid}/environ, the files of process ${pid}`),
    hint: /not isolated/,
  });
});

t.test('ordinary reads still run', async (t) => {
  const fx = await started(t);
  writeFileSync(join(fx.cwd, 'notes.txt'), 'one\ntwo\n');
  mkdirSync(join(fx.cwd, 'tree'));
  symlinkSync(fx.data, join(fx.cwd, 'tree', 'to-data'));
  const ordinary: string[][] = [
    ['ls', '/tmp'],
    ['ls', '-l', '/'],
    ['ls', '-ltr', '/var'],
    ['df', '-h'],
    ['cat', '/etc/os-release'],
    ['uptime'],
    ['free', '-m'],
    ['uname', '-a'],
    ['id'],
    ['ps', 'aux'],
    ['ps', '-eo', 'pid,user,comm'],
    ['cat', '/proc/uptime'],
    ['cat', '/proc/self/status'],
    ['cat', `/proc/${fx.daemon.pid}/status`],
    ['cat', '/proc/net/dev'],
    ['cat', 'notes.txt'],
    ['sort', '-r', 'notes.txt'],
    ['sed', '-n', '1p', 'notes.txt'],
    ['grep', '-rn', 'two', '.'],
    ['find', '.', '-name', '*.txt'],
    ['du', '-sh', '.'],
    ['wc', '-l', '/etc/hostname'],
    ['stat', '/etc/hostname'],
    ['date', '+%s'],
  ];
  for (const argv of ordinary) {
    const outcome = await refusal(fx, argv);
    t.ok(
      !(outcome instanceof ToolError),
      `runs: ${JSON.stringify(argv)}${outcome instanceof ToolError ? ` (${outcome.info.detail})` : ''}`,
    );
  }
  // grep -r does not follow the link it meets on the way, so the secret stays unread.
  const grep = await refusal(fx, ['grep', '-a', '-r', SECRET, 'tree']);
  t.match(grep, { exit_code: 1, stdout: '' }, 'grep -r over a folder with a link into the data folder runs and finds nothing');
});

t.test('a working directory set inside the data folder runs nothing in-process', async (t) => {
  const fx = await started(t);
  fx.tc.context.settings.set('workdir', fx.data);
  const outcome = await refusal(fx, ['ls']);
  t.match(outcome, { info: { reason: 'rejected', detail: /the working directory .* is inside the daemon's data folder/ } });
});

t.test('the status says cmd_run is not isolated', async (t) => {
  const fx = await daemonFixture(t, { allow: ALLOW, isolation: 'auto' });
  const notices: Array<EventMap['daemon.notice']> = [];
  fx.tc.events.on('test', 'daemon.notice', (notice) => void notices.push(notice));
  const plugin = new CmdPlugin(fx.tc.context, { killGraceMs: 200 });
  await plugin.start();
  t.match(notices, [
    { key: 'plugin.cmd.isolation', level: 'warning', message: /^cmd_run not isolated: .*no runner socket at \/nonexistent/ },
  ]);
  t.match(plugin.health(), { ok: true, detail: /not isolated: in-process/ });
  t.equal(notices.length, 1, 'an unchanged placement publishes nothing new');
  await fx.tc.call('cmd_run', { argv: ['echo', 'hi'] });
  t.match(fx.tc.audits.at(-1), { action: 'cmd.run', details: { isolation: 'in_process' } });
  await plugin.stop();
  t.match(notices.at(-1), { key: 'plugin.cmd.isolation', message: null }, 'stop clears the notice');

  const explicit = await daemonFixture(t, { allow: ALLOW, isolation: 'in_process' });
  const seen: Array<EventMap['daemon.notice']> = [];
  explicit.tc.events.on('test', 'daemon.notice', (notice) => void seen.push(notice));
  const second = new CmdPlugin(explicit.tc.context);
  await second.start();
  t.teardown(() => second.stop());
  t.match(seen, [{ level: 'warning', message: /^cmd_run not isolated: .*plugin\.cmd\.isolation is in_process/ }]);
});

t.test('cmd.run: the owner runs a command through the same policy and guard', async (t) => {
  const fx = await started(t);
  const ran = (await fx.tc.control.call('cmd.run', { argv: ['echo', 'hi'] }, { actor: 'cli', owner: true })) as RunResult;
  t.match(ran, { exit_code: 0, stdout: 'hi\n' });
  t.match(fx.tc.audits.at(-1), { action: 'cmd.run', details: { argv: ['echo', 'hi'], source: 'cli' } });

  const expectCode = async (params: Record<string, unknown>, actor: string, code: string, message: RegExp) => {
    try {
      await fx.tc.control.call('cmd.run', params, { actor, owner: actor === 'cli' });
      t.fail(`cmd.run ${JSON.stringify(params)} succeeded`);
    } catch (error) {
      t.ok(error instanceof HomeAgentError, 'a coded error');
      t.match(error, { code, message }, `${JSON.stringify(params)} as ${actor}: ${code}`);
    }
  };
  await expectCode({ argv: ['cat', `/proc/${fx.daemon.pid}/./environ`] }, 'cli', 'HA_ERR_CMD_DENIED', /resolves to \/proc\/\d+\/environ/);
  await expectCode({ argv: ['rm', '-rf', '/'] }, 'cli', 'HA_ERR_CMD_DENIED', /not in the cmd allowlist/);
  await expectCode({ argv: ['ls'], workdir: 'nope' }, 'cli', 'HA_ERR_CMD_FAILED', /does not exist/);
  await expectCode({ argv: ['echo', 'hi'] }, 'plugin:mqtt', 'HA_ERR_RPC_FORBIDDEN', /for the owner only/);
});

t.test('without the daemon saying where its folders are, nothing runs in-process', async (t) => {
  const fx = await started(t);
  // Registering again would clash with the started plugin's tools: stop it first.
  await fx.plugin.stop();
  const control = fx.tc.context.control;
  const failing = asContext({ ...fx.tc.context, control: { ...control, call: () => Promise.reject(new Error('the registry is closed')) } });
  const plugin = new CmdPlugin(failing, { killGraceMs: 200 });
  await plugin.start();
  const error = await refusal(fx, ['echo', 'hi']);
  t.match(error, {
    info: { reason: 'unavailable', detail: /protected folders could not be listed \(config\.list: the registry is closed\)/ },
  });
  await plugin.stop();

  // A host without config.list at all has no settings: the data, runtime and configuration folders still count.
  const unknown = Object.assign(new Error('no method named "config.list"'), { code: 'HA_ERR_RPC_UNKNOWN_METHOD' });
  const bare = asContext({ ...fx.tc.context, control: { ...control, call: () => Promise.reject(unknown) } });
  const second = new CmdPlugin(bare, { killGraceMs: 200 });
  await second.start();
  t.teardown(() => second.stop());
  t.match(await refusal(fx, ['echo', 'hi']), { exit_code: 0, stdout: 'hi\n' });
  t.match(await refusal(fx, ['cat', fx.credentials]), { info: { detail: /inside the daemon's data folder/ } });
  t.match(await refusal(fx, ['cat', `/proc/${fx.daemon.pid}/./environ`]), { info: { detail: /the files of process/ } });
});

import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { expectErrorAsync, tempDir } from '../../fixtures/support.js';
import { processFixture, toolPlugin } from './fixtures/process-fixture.js';

const signal = () => new AbortController().signal;

/** One tool that tries an operation and reports `{ok}` or the error code, so the test sees what Node allowed. */
const PROBE = toolPlugin(`
  const fs = await import('node:fs');
  const attempt = async (fn) => { try { return { ok: true, value: await fn() }; } catch (e) { return { ok: false, code: e.code ?? e.message }; } };
  switch (args.op) {
    case 'read': return attempt(() => fs.readFileSync(args.path, 'utf8'));
    case 'write': return attempt(() => fs.writeFileSync(args.path, 'written by the plugin'));
    case 'spawn': return attempt(async () => (await import('node:child_process')).spawnSync('true').status);
    case 'spawn_async': return attempt(async () => (await import('node:child_process')).spawn('true').pid);
    case 'worker': return attempt(async () => { const { Worker } = await import('node:worker_threads'); new Worker('1', { eval: true }); return 'started'; });
    case 'addon': return attempt(() => process.dlopen({ exports: {} }, '/nonexistent/addon.node'));
    case 'env': return { env: Object.keys(process.env).sort(), cwd: process.cwd(), home: process.env.HOME };
  }
`);

type Probe = { ok: boolean; value?: unknown; code?: string };

t.test('under the permission model the plugin reaches only its own folders and its grants', async (t) => {
  const shared = tempDir(t, 'ha-grant-');
  writeFileSync(join(shared, 'granted.txt'), 'granted content');
  const f = processFixture(t, {
    source: PROBE,
    permissions: {
      fs_paths: [
        { path: `\${data_dir}/shared`, mode: 'ro' },
        { path: shared, mode: 'rw' },
      ],
    },
  });
  const daemonFile = join(f.dataDir, 'state.db');
  writeFileSync(daemonFile, 'daemon secrets');
  mkdirSync(join(f.dataDir, 'shared'));
  writeFileSync(join(f.dataDir, 'shared', 'notes.txt'), 'shared notes');
  await f.plugin.start(signal());
  const probe = (args: Record<string, unknown>) => f.harness.call('demo_run', args) as Promise<Probe>;
  const own = f.harness.context.paths.data;

  t.match(await probe({ op: 'read', path: '/etc/passwd' }), { ok: false, code: 'ERR_ACCESS_DENIED' }, 'system files are out of reach');
  t.match(await probe({ op: 'read', path: daemonFile }), { ok: false, code: 'ERR_ACCESS_DENIED' }, "the daemon's data dir is out of reach");
  t.match(
    await probe({ op: 'write', path: join(f.dataDir, 'evil.txt') }),
    { ok: false, code: 'ERR_ACCESS_DENIED' },
    'no writes outside its data dir',
  );
  t.notOk(existsSync(join(f.dataDir, 'evil.txt')), 'nothing was written');
  t.match(
    await probe({ op: 'write', path: join(f.dir, 'index.mjs') }),
    { ok: false, code: 'ERR_ACCESS_DENIED' },
    'its own code is read-only',
  );

  t.match(await probe({ op: 'write', path: join(own, 'mine.txt') }), { ok: true }, 'its data dir is writable');
  t.equal(readFileSync(join(own, 'mine.txt'), 'utf8'), 'written by the plugin');
  t.match(
    await probe({ op: 'read', path: join(f.dataDir, 'shared', 'notes.txt') }),
    { ok: true, value: 'shared notes' },
    'a ro grant under the data dir reads',
  );
  t.match(
    await probe({ op: 'write', path: join(f.dataDir, 'shared', 'x.txt') }),
    { ok: false, code: 'ERR_ACCESS_DENIED' },
    'but does not write',
  );
  t.match(await probe({ op: 'read', path: join(shared, 'granted.txt') }), { ok: true, value: 'granted content' }, 'an rw grant reads');
  t.match(await probe({ op: 'write', path: join(shared, 'new.txt') }), { ok: true }, 'and writes');

  t.match(await probe({ op: 'spawn' }), { ok: false, code: 'ERR_ACCESS_DENIED' }, 'no child processes (spawnSync)');
  t.match(await probe({ op: 'spawn_async' }), { ok: false, code: 'ERR_ACCESS_DENIED' }, 'no child processes (spawn)');
  t.match(await probe({ op: 'worker' }), { ok: false, code: 'ERR_ACCESS_DENIED' }, 'no worker threads');
  t.match(await probe({ op: 'addon' }), { ok: false, code: 'ERR_DLOPEN_DISABLED' }, 'no native addons');
});

t.test('the child gets a minimal environment, its data dir as cwd and home', async (t) => {
  process.env.HOMEAGENT_LLM_API_KEY = 'sk-must-not-leak';
  t.teardown(() => {
    delete process.env.HOMEAGENT_LLM_API_KEY;
  });
  const f = processFixture(t, { source: PROBE });
  await f.plugin.start(signal());
  const env = (await f.harness.call('demo_run', { op: 'env' })) as { env: string[]; cwd: string; home: string };
  t.ok(
    env.env.every((k) => ['HOME', 'LANG', 'PATH', 'TZ'].includes(k)),
    `only HOME, LANG, PATH, TZ (got ${env.env.join(', ')})`,
  );
  t.equal(env.cwd, f.harness.context.paths.data, 'cwd is the data dir');
  t.equal(env.home, f.harness.context.paths.data, 'HOME is the data dir');
});

t.test('with process_permissions off the same probe reaches the daemon files (the model is what stops it)', async (t) => {
  const f = processFixture(t, { source: PROBE, limits: { process_permissions: false } });
  writeFileSync(join(f.dataDir, 'state.db'), 'daemon secrets');
  await f.plugin.start(signal());
  t.match(await f.harness.call('demo_run', { op: 'read', path: join(f.dataDir, 'state.db') }), { ok: true, value: 'daemon secrets' });
});

t.test('a symbolic link out of the granted folders refuses the start', async (t) => {
  const f = processFixture(t, { source: PROBE });
  symlinkSync('/etc', join(f.dir, 'etc-link'));
  const error = await expectErrorAsync(t, () => f.plugin.start(signal()), 'HA_ERR_PLUGIN_PERMISSION');
  t.match(error.message, /etc-link -> \/etc/, 'names the link');

  const inside = processFixture(t, { name: 'inside', source: PROBE });
  writeFileSync(join(inside.dir, 'real.txt'), 'x');
  symlinkSync(join(inside.dir, 'real.txt'), join(inside.dir, 'alias.txt'));
  await inside.plugin.start(signal());
  t.pass('a link inside the plugin folder is fine');
});

t.test('fs_paths that Node would read as more than they say are refused', async (t) => {
  for (const path of ['/tmp/*', `\${data_dir}/../etc`]) {
    const f = processFixture(t, { source: PROBE, permissions: { fs_paths: [{ path, mode: 'ro' }] } });
    const error = await expectErrorAsync(t, () => f.plugin.start(signal()), 'HA_ERR_PLUGIN_PERMISSION');
    t.match(error.message, /permissions\.fs_paths/, `${path} is refused`);
  }
});

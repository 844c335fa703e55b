import { join } from 'node:path';
import t from 'tap';
import { defaultConfig } from '../../../../src/config/loader.js';
import type { Manifest } from '../../../../src/plugin/manifest.js';
import { childCommand, withParentDeathSignal } from '../../../../src/plugin/process/child-command.js';
import { CHILD_RUNTIME_ENTRY, RUNTIME_READS } from '../../../../src/plugin/process/fs-grants.js';
import { PACKAGE_ROOT } from '../../../../src/shared/version.js';
import { createTestPluginContext } from '../../../helpers/plugin-context.js';
import { tempDir } from '../../fixtures/support.js';

function setup(t: Parameters<typeof tempDir>[0], permissions?: Manifest['permissions']) {
  const dataDir = tempDir(t);
  const manifest: Manifest = {
    name: 'demo',
    version: '1.0.0',
    description: 'd',
    engine: '*',
    kind: 'process',
    entry: 'index.mjs',
    ...(permissions ? { permissions } : {}),
  };
  const { context } = createTestPluginContext({ name: 'demo', dataDir, trust: 'external' });
  return { dc: { manifest, dir: join(dataDir, 'plugins', 'demo'), dataDir, context }, dataDir, context };
}

t.test('flags: heap limit, permission model with grants, nothing else allowed; the compiled runtime from dist', async (t) => {
  const { dc, dataDir, context } = setup(t, {
    fs_paths: [
      { path: `\${data_dir}/media`, mode: 'ro' },
      { path: `\${plugin_data}/cache`, mode: 'rw' },
    ],
  });
  const command = childCommand(dc, { ...defaultConfig().core.plugins, process_heap_mb: 48 });
  const node = command.args.indexOf(process.execPath);
  if (command.file !== process.execPath) {
    t.same(
      command.args.slice(0, node + 1),
      ['--pdeathsig', 'KILL', '--', process.execPath],
      'node is run through setpriv --pdeathsig KILL',
    );
    t.match(command.file, /setpriv$/);
  }
  t.equal(command.args.at(-1), CHILD_RUNTIME_ENTRY);
  t.equal(CHILD_RUNTIME_ENTRY, join(PACKAGE_ROOT, 'dist', 'src', 'plugin', 'process', 'child-runtime.js'));
  t.ok(command.args.includes('--max-old-space-size=48'));
  t.ok(command.args.includes('--experimental-permission') || command.args.includes('--permission'));
  for (const path of [...RUNTIME_READS, dc.dir, context.paths.data, join(dataDir, 'media'), join(context.paths.data, 'cache')]) {
    t.ok(command.args.includes(`--allow-fs-read=${path}`), `reads ${path}`);
  }
  const writes = command.args.filter((a) => a.startsWith('--allow-fs-write='));
  t.same(
    writes.map((a) => a.slice('--allow-fs-write='.length)),
    [context.paths.data, join(context.paths.data, 'cache')],
    'writes only the data dir and rw grants',
  );
  t.notOk(
    command.args.some((a) => /allow-(child-process|worker|addons|wasi)/.test(a)),
    'no child processes, workers, addons or WASI',
  );
  t.equal(command.cwd, context.paths.data);
});

t.test('without process_permissions only the heap limit applies', async (t) => {
  const { dc } = setup(t);
  const command = childCommand(dc, { ...defaultConfig().core.plugins, process_permissions: false });
  t.notOk(command.args.some((a) => a.includes('permission') || a.startsWith('--allow-')));
});

t.test('parent-death signal: through setpriv when it is there, node directly when not', async (t) => {
  t.same(withParentDeathSignal('/usr/bin/node', ['a.js'], '/usr/bin/setpriv'), {
    file: '/usr/bin/setpriv',
    args: ['--pdeathsig', 'KILL', '--', '/usr/bin/node', 'a.js'],
  });
  t.same(withParentDeathSignal('/usr/bin/node', ['a.js'], null), { file: '/usr/bin/node', args: ['a.js'] });
});

import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { FilesPlugin } from '../../../../plugins/files/index.js';
import { ToolError } from '../../../../src/shared/tool.js';
import { createTestPluginContext, type TestPluginContext } from '../../../helpers/plugin-context.js';
import { type Teardown, tempDir } from '../../fixtures/support.js';

/** The info of the ToolError `fn` throws. */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    if (error instanceof ToolError) return error.info;
    throw error;
  }
  return 'nothing was thrown';
}

const DEFAULTS = { roots: [], max_read_bytes: 1048576, max_write_bytes: 1048576 };

interface Setup {
  tc: TestPluginContext;
  /** Real path of the plugin data directory (the rw root). */
  data: string;
  /** A directory outside every root, holding secret.txt. */
  outside: string;
  call(tool: string, args: Record<string, unknown>): Promise<Record<string, unknown>>;
  fails(tool: string, args: Record<string, unknown>): Promise<ToolError['info']>;
}

async function startFiles(t: Teardown, settings: Record<string, unknown> = {}): Promise<Setup> {
  const base = realpathSync(tempDir(t));
  const outside = join(base, 'outside');
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), 'secret');
  const tc = createTestPluginContext({ name: 'files', dataDir: join(base, 'home'), settings: { ...DEFAULTS, ...settings } });
  const plugin = new FilesPlugin(tc.context);
  await plugin.start();
  t.teardown(() => plugin.stop());
  const call = async (tool: string, args: Record<string, unknown>) => (await tc.call(tool, args)) as Record<string, unknown>;
  const fails = async (tool: string, args: Record<string, unknown>) => {
    try {
      await call(tool, args);
    } catch (error) {
      if (error instanceof ToolError) return error.info;
      throw error;
    }
    throw new Error(`${tool} ${JSON.stringify(args)} succeeded`);
  };
  return { tc, data: realpathSync(tc.context.paths.data), outside, call, fails };
}

const DENIED = /^HA_ERR_FILES_DENIED: /;

t.test('tools and tiers', async (t) => {
  const { tc } = await startFiles(t);
  t.same(
    tc.tools
      .list()
      .filter((tool) => tool.owner === 'plugin:files')
      .map((tool) => [tool.name, tool.tier]),
    [
      ['files_list', 'read'],
      ['files_read', 'read'],
      ['files_stat', 'read'],
      ['files_write', 'dangerous'],
    ],
  );
});

t.test('write, read, append, replace', async (t) => {
  const { call, data, tc } = await startFiles(t);
  t.same(await call('files_write', { path: 'notes/today.txt', content: 'hello' }), {
    path: join(data, 'notes', 'today.txt'),
    bytes: 5,
    append: false,
    created: true,
  });
  t.equal(readFileSync(join(data, 'notes', 'today.txt'), 'utf8'), 'hello', 'parent directories are created');
  t.match(await call('files_read', { path: 'notes/today.txt' }), {
    content: 'hello',
    encoding: 'utf8',
    size: 5,
    bytes: 5,
    truncated: false,
  });
  t.match(await call('files_read', { path: join(data, 'notes', 'today.txt') }), { content: 'hello' }, 'absolute paths inside a root');

  t.match(await call('files_write', { path: 'notes/today.txt', content: ' world', append: true }), { created: false, append: true });
  t.equal(readFileSync(join(data, 'notes', 'today.txt'), 'utf8'), 'hello world');
  t.match(await call('files_write', { path: 'notes/new-log.txt', content: 'first', append: true }), { created: true });

  chmodSync(join(data, 'notes', 'today.txt'), 0o600);
  await call('files_write', { path: 'notes/today.txt', content: 'replaced' });
  t.equal(readFileSync(join(data, 'notes', 'today.txt'), 'utf8'), 'replaced');
  t.equal(statSync(join(data, 'notes', 'today.txt')).mode & 0o777, 0o600, 'a replaced file keeps its permissions');
  t.same(readdirSync(join(data, 'notes')).sort(), ['new-log.txt', 'today.txt'], 'no temporary files are left');

  const writes = tc.audits.filter((a) => a.action === 'files.write');
  t.equal(writes.length, 4);
  t.match(writes[0], { details: { path: join(data, 'notes', 'today.txt'), bytes: 5, append: false, created: true, task_id: 'task-1' } });
});

t.test('list and stat', async (t) => {
  const { call, data } = await startFiles(t, { roots: [] });
  mkdirSync(join(data, 'dir'));
  writeFileSync(join(data, 'dir', 'b.txt'), 'bb');
  writeFileSync(join(data, 'dir', 'a.txt'), 'a');
  mkdirSync(join(data, 'dir', 'sub'));
  symlinkSync('a.txt', join(data, 'dir', 'link'));

  t.same(await call('files_list', {}), { roots: [{ path: data, mode: 'rw' }] }, 'without a path: the roots');
  t.same(await call('files_list', { path: 'dir' }), {
    path: join(data, 'dir'),
    mode: 'rw',
    entries: [
      { name: 'a.txt', type: 'file', size: 1 },
      { name: 'b.txt', type: 'file', size: 2 },
      { name: 'link', type: 'symlink' },
      { name: 'sub', type: 'directory' },
    ],
    truncated: false,
  });
  t.match(await call('files_list', { path: '' }), { path: data }, 'an empty path is the data root');
  t.match(await call('files_stat', { path: 'dir/b.txt' }), { type: 'file', size: 2, root: data, writable: true, modified: /^\d{4}-/ });
  t.match(await call('files_stat', { path: 'dir' }), { type: 'directory' });
});

t.test('traversal is refused', async (t) => {
  const { fails, outside, data, tc } = await startFiles(t);
  mkdirSync(join(data, 'notes'));
  for (const path of ['../outside/secret.txt', 'notes/../../outside/secret.txt', '..', `${data}/../outside/secret.txt`, 'notes/..']) {
    t.match(await fails('files_read', { path }), { reason: 'rejected', detail: /contains "\.\."/ }, `read ${path}`);
  }
  for (const path of [
    join(outside, 'secret.txt'),
    '/etc/passwd',
    '/',
    '/proc/self/root/etc/passwd',
    `/proc/self/root${outside}/secret.txt`,
    '/proc/self/cwd',
    '/proc/self/environ',
  ]) {
    t.match(await fails('files_read', { path }), { reason: 'rejected', detail: DENIED }, `read ${path}`);
  }
  t.match(await fails('files_write', { path: join(outside, 'new.txt'), content: 'x' }), {
    reason: 'rejected',
    detail: /outside the allowed roots/,
  });
  t.match(await fails('files_write', { path: `/proc/self/root${outside}/new.txt`, content: 'x' }), { reason: 'rejected' });
  t.match(await fails('files_list', { path: '/proc/self/root/' }), { reason: 'rejected' });
  t.notOk(existsSync(join(outside, 'new.txt')));

  // Names that merely look like traversal are names.
  for (const path of ['%2e%2e/secret.txt', '..%2fsecret.txt', '...', '..txt', '.%2e/x']) {
    t.match(await fails('files_read', { path }), { reason: 'not_found' }, `${path} is just a name`);
  }
  t.match(await fails('files_read', { path: 'a\u0000b' }), { reason: 'rejected', detail: /control characters/ });
  t.match(await fails('files_write', { path: 'line\nbreak', content: 'x' }), { reason: 'rejected', detail: /control characters/ });
  // The schema caps path length; the tool checks it again for calls that skip the schema.
  const execute = tc.tools.get('files_read')?.execute as (args: unknown, context: unknown) => unknown;
  t.match(
    thrown(() => execute({ path: 'x'.repeat(4097) }, {})),
    { reason: 'rejected', detail: /longer than 4096/ },
  );
  t.match(
    thrown(() => execute({ path: 42 }, {})),
    { reason: 'rejected', detail: /must be a string/ },
  );
});

t.test('symlinks that lead out are refused', async (t) => {
  const { fails, call, outside, data, tc } = await startFiles(t);
  symlinkSync(outside, join(data, 'out-dir'));
  symlinkSync(join(outside, 'secret.txt'), join(data, 'out-file'));
  symlinkSync(join(outside, 'planted.txt'), join(data, 'dangling'));
  symlinkSync('/proc/self/root/etc', join(data, 'proc-link'));
  mkdirSync(join(data, 'real'));
  writeFileSync(join(data, 'real', 'inside.txt'), 'inside');
  symlinkSync(join(data, 'real', 'inside.txt'), join(data, 'in-file'));
  symlinkSync('real', join(data, 'in-dir'));

  t.match(await fails('files_read', { path: 'out-dir/secret.txt' }), { reason: 'rejected', detail: /resolves to .*outside\/secret\.txt/ });
  t.match(await fails('files_list', { path: 'out-dir' }), { reason: 'rejected' });
  t.match(await fails('files_write', { path: 'out-dir/new.txt', content: 'x' }), { reason: 'rejected' });
  t.match(await fails('files_read', { path: 'out-file' }), { reason: 'rejected' });
  t.match(await fails('files_write', { path: 'out-file', content: 'pwned' }), { reason: 'rejected' });
  t.match(await fails('files_write', { path: 'out-file', content: 'pwned', append: true }), { reason: 'rejected' });
  t.match(await fails('files_write', { path: 'dangling', content: 'x' }), { reason: 'rejected', detail: /symlink to nothing/ });
  t.match(await fails('files_write', { path: 'dangling', content: 'x', append: true }), { reason: 'rejected' });
  t.match(await fails('files_read', { path: 'dangling' }), { reason: 'rejected' });
  t.match(await fails('files_read', { path: 'proc-link/passwd' }), { reason: 'rejected' });
  t.equal(readFileSync(join(outside, 'secret.txt'), 'utf8'), 'secret', 'the target is untouched');
  t.notOk(existsSync(join(outside, 'planted.txt')), 'nothing was created through the dangling link');
  t.notOk(existsSync(join(outside, 'new.txt')));

  // Links that stay inside a root work, and name the real file.
  t.match(await call('files_read', { path: 'in-file' }), { content: 'inside', path: join(data, 'real', 'inside.txt') });
  t.match(await call('files_list', { path: 'in-dir' }), { path: join(data, 'real') });
  await call('files_write', { path: 'in-dir/new.txt', content: 'n' });
  t.equal(readFileSync(join(data, 'real', 'new.txt'), 'utf8'), 'n');

  t.ok(
    tc.audits.some((a) => a.action === 'files.denied' && a.details.path === 'out-file'),
    'refused writes are audited',
  );
});

t.test('configured roots: ro and rw', async (t) => {
  const base = realpathSync(tempDir(t));
  const ro = join(base, 'ro');
  const rw = join(base, 'rw');
  mkdirSync(join(rw, 'frozen'), { recursive: true });
  mkdirSync(ro);
  writeFileSync(join(ro, 'manual.txt'), 'read me');
  const { call, fails } = await startFiles(t, {
    roots: [
      { path: ro, mode: 'ro' },
      { path: rw, mode: 'rw' },
      { path: join(rw, 'frozen'), mode: 'ro' },
      { path: join(base, 'missing'), mode: 'rw' },
    ],
  });
  t.match(await call('files_list', {}), {
    roots: [{ mode: 'rw' }, { path: ro, mode: 'ro' }, { path: rw, mode: 'rw' }, { path: join(rw, 'frozen'), mode: 'ro' }],
  });
  t.match(await call('files_read', { path: join(ro, 'manual.txt') }), { content: 'read me' });
  t.match(await call('files_stat', { path: join(ro, 'manual.txt') }), { writable: false });
  t.match(await fails('files_write', { path: join(ro, 'manual.txt'), content: 'x' }), { reason: 'rejected', detail: /read-only root/ });
  t.match(await fails('files_write', { path: join(ro, 'manual.txt'), content: 'x', append: true }), {
    reason: 'rejected',
    detail: /read-only/,
  });
  t.match(await fails('files_write', { path: join(ro, 'new', 'file.txt'), content: 'x' }), { reason: 'rejected', detail: /read-only/ });
  t.equal(readFileSync(join(ro, 'manual.txt'), 'utf8'), 'read me');
  t.notOk(existsSync(join(ro, 'new')));
  await call('files_write', { path: join(rw, 'ok.txt'), content: 'ok' });
  t.equal(readFileSync(join(rw, 'ok.txt'), 'utf8'), 'ok');
  t.match(
    await fails('files_write', { path: join(rw, 'frozen', 'x.txt'), content: 'x' }),
    { reason: 'rejected', detail: /read-only/ },
    'the most specific root decides',
  );
});

t.test('size limits and paging', async (t) => {
  const { call, fails, data } = await startFiles(t, { max_read_bytes: 1024, max_write_bytes: 1024 });
  writeFileSync(join(data, 'big.txt'), 'a'.repeat(3000));
  t.match(await call('files_read', { path: 'big.txt' }), { bytes: 1024, size: 3000, truncated: true, next_offset: 1024 });
  t.match(await call('files_read', { path: 'big.txt', offset: 2048 }), { bytes: 952, truncated: false, content: 'a'.repeat(952) });
  t.match(await call('files_read', { path: 'big.txt', max_bytes: 10 }), { content: 'a'.repeat(10), next_offset: 10 });
  t.match(await call('files_read', { path: 'big.txt', max_bytes: 100000 }), { bytes: 1024 }, 'max_bytes never exceeds the setting');
  t.match(await call('files_read', { path: 'big.txt', offset: 5000 }), { bytes: 0, content: '', truncated: false });

  writeFileSync(join(data, 'utf8.txt'), `a${'é'.repeat(600)}`);
  const first = await call('files_read', { path: 'utf8.txt' });
  t.match(first, { bytes: 1023, encoding: 'utf8', next_offset: 1023 }, 'a read never ends inside a character');
  t.match(await call('files_read', { path: 'utf8.txt', offset: 1023 }), { encoding: 'utf8', truncated: false });

  t.match(await fails('files_write', { path: 'w.txt', content: 'x'.repeat(1025) }), { reason: 'range', field: 'content' });
  t.match(await fails('files_write', { path: 'w.txt', content: 'é'.repeat(513) }), { reason: 'range' }, 'counted in bytes');
  t.match(await call('files_write', { path: 'w.txt', content: 'x'.repeat(1024) }), { bytes: 1024 });
});

t.test('what is not a regular file', async (t) => {
  const { call, fails, data } = await startFiles(t);
  mkdirSync(join(data, 'dir'));
  writeFileSync(join(data, 'file.txt'), 'f');
  writeFileSync(join(data, 'binary.bin'), Buffer.from([0, 1, 2, 255]));
  t.match(await fails('files_read', { path: 'dir' }), { reason: 'rejected', detail: /is a directory/ });
  t.match(await fails('files_list', { path: 'file.txt' }), { reason: 'rejected', detail: /not a directory/ });
  t.match(await fails('files_write', { path: 'dir', content: 'x' }), { reason: 'rejected', detail: /is a directory/ });
  t.match(await fails('files_read', { path: 'missing.txt' }), { reason: 'not_found' });
  t.match(await fails('files_list', { path: 'missing' }), { reason: 'not_found' });
  t.match(await fails('files_stat', { path: 'missing' }), { reason: 'not_found' });
  t.match(await fails('files_write', { path: 'file.txt/inner.txt', content: 'x' }), { reason: 'rejected' });
  t.match(await call('files_read', { path: 'binary.bin' }), {
    encoding: 'base64',
    content: Buffer.from([0, 1, 2, 255]).toString('base64'),
  });
  if (spawnSync('mkfifo', [join(data, 'fifo')]).status === 0) {
    t.match(
      await fails('files_read', { path: 'fifo' }),
      { reason: 'rejected', detail: /not a regular file/ },
      'a FIFO is refused, not waited on',
    );
  }
});

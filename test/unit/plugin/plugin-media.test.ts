import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { MediaStore } from '../../../src/store/media-store.js';
import { createTestPluginContext } from '../../helpers/plugin-context.js';
import { tempDir } from '../fixtures/support.js';
import { pluginLog, startHost, writePlugin } from './fixtures/host-setup.js';

const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(60, 7)]);

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return (error as { code?: string }).code;
  }
  return undefined;
}

t.test('built-in plugins: the same bytes are stored once, read back; wrong type, too large and unknown digests refused', async (t) => {
  const dir = tempDir(t);
  const ctx = createTestPluginContext({ name: 'camera', dataDir: dir, maxMediaBytes: 100 });
  t.teardown(() => ctx.close());
  const first = ctx.context.media.put(JPEG);
  t.same(first, { digest: first.digest, mime: 'image/jpeg', kind: 'image', bytes: JPEG.byteLength }, 'only the SDK fields');
  t.match(first.digest, /^[0-9a-f]{64}$/);
  const again = ctx.context.media.put(new Uint8Array(JPEG));
  t.equal(again.digest, first.digest);
  t.same(readdirSync(join(dir, 'media', 'sha256', first.digest.slice(0, 2))), [first.digest], 'one file');
  t.same(ctx.context.media.read(first.digest), JPEG);
  t.same(ctx.context.media.read(first.digest.toUpperCase()), JPEG, 'a digest in capitals is the same digest');
  t.equal(
    codeOf(() => ctx.context.media.put(Buffer.from('just text'))),
    'HA_ERR_MEDIA_TYPE',
  );
  t.equal(
    codeOf(() => ctx.context.media.put(Buffer.concat([JPEG, JPEG]))),
    'HA_ERR_MEDIA_TOO_LARGE',
  );
  t.equal(
    codeOf(() => ctx.context.media.read('0'.repeat(64))),
    'HA_ERR_MEDIA_NOT_FOUND',
  );
  t.equal(
    codeOf(() => ctx.context.media.read('../../etc/passwd')),
    'HA_ERR_MEDIA_NOT_FOUND',
    'a path is not a digest',
  );
});

t.test('external plugins may neither store nor read media', async (t) => {
  const dir = tempDir(t);
  const ctx = createTestPluginContext({ name: 'guest', dataDir: dir, trust: 'external' });
  t.teardown(() => ctx.close());
  const digest = ctx.media.put(JPEG).digest;
  t.equal(
    codeOf(() => ctx.context.media.put(JPEG)),
    'HA_ERR_PLUGIN_PERMISSION',
  );
  t.equal(
    codeOf(() => ctx.context.media.read(digest)),
    'HA_ERR_PLUGIN_PERMISSION',
  );
});

t.test('through the host: a shipped plugin stores and reads, an installed one is refused, no store means unavailable', async (t) => {
  pluginLog().length = 0;
  const dir = tempDir(t);
  const media = new MediaStore({ dir: join(dir, 'media'), maxBytes: () => 1024 * 1024 });
  const probe = (what: string, code: string) =>
    `try { const r = ${code}; log.push('${what} ' + (r.digest ?? r.length)); } catch (e) { log.push('${what} ' + (e.code ?? e.message)); }`;
  const bytes = `new Uint8Array([${[...JPEG].join(',')}])`;
  writePlugin(join(dir, 'shipped'), 'camera', {
    name: 'camera',
    start: [probe('camera put', `ctx.media.put(${bytes})`), probe('camera read', `ctx.media.read(ctx.media.put(${bytes}).digest)`)].join(
      '\n',
    ),
  });
  writePlugin(join(dir, 'installed'), 'guest', {
    name: 'guest',
    manifest: { kind: 'process' },
    start: [probe('guest put', `ctx.media.put(${bytes})`), probe('guest read', "ctx.media.read('0'.repeat(64))")].join('\n'),
  });
  const { host } = await startHost(t, { dir, media });
  t.same(
    host.list().map((p) => p.state),
    ['running', 'running'],
  );
  const digest = media.put(JPEG).digest;
  const log = pluginLog();
  t.ok(log.includes(`camera put ${digest}`), 'the built-in plugin stored the picture in the daemon’s store');
  t.ok(log.includes(`camera read ${JPEG.byteLength}`));
  t.ok(log.includes('guest put HA_ERR_PLUGIN_PERMISSION'));
  t.ok(log.includes('guest read HA_ERR_PLUGIN_PERMISSION'));

  pluginLog().length = 0;
  const bare = tempDir(t);
  writePlugin(join(bare, 'shipped'), 'camera', { name: 'camera', start: probe('camera put', `ctx.media.put(${bytes})`) });
  await startHost(t, { dir: bare });
  t.ok(pluginLog().includes('camera put HA_ERR_UNAVAILABLE'));
});

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import * as tar from 'tar';
import { type InstallRecord, installModel, listModels } from '../../../src/embed/model-installer.js';
import { expectErrorAsync, tempDir } from '../fixtures/support.js';
import { writeZip } from '../plugin/fixtures/zip-writer.js';
import { startFileServer } from './fixtures/file-server.js';
import { writeTinyModel } from './fixtures/tiny-model.js';

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');
const FILES = ['embedder.json', 'install.json', 'model.onnx', 'tokenizer.json'];

/** A model folder `tiny/` and archives of it. */
async function setup(t: Parameters<typeof tempDir>[0]) {
  const root = tempDir(t, 'ha-models-');
  const src = join(root, 'src');
  const model = writeTinyModel(join(src, 'tiny')).dir;
  const tgz = join(root, 'tiny.tar.gz');
  await tar.c({ gzip: true, file: tgz, cwd: src, portable: true }, ['tiny']);
  const zip = join(root, 'flat.zip');
  writeZip(
    zip,
    ['model.onnx', 'tokenizer.json', 'embedder.json'].map((name) => ({ name, data: readFileSync(join(model, name)), deflate: true })),
  );
  return { root, model, tgz, zip, modelsDir: join(root, 'data', 'models') };
}

/** Only the installed folders: no staging or old copies left behind. */
const entries = (dir: string) => (existsSync(dir) ? readdirSync(dir).sort() : []);

t.test('a directory is copied in, checked by loading it, and recorded', async (t) => {
  const { model, modelsDir } = await setup(t);
  const installed = await installModel({ source: model, modelsDir });
  t.equal(installed.name, 'tiny-embedder', 'named after the manifest');
  t.equal(installed.dir, join(modelsDir, 'tiny-embedder'));
  t.same(entries(installed.dir), FILES, 'model files plus install.json');
  t.same(entries(modelsDir), ['tiny-embedder'], 'nothing else left in the models folder');
  const record = JSON.parse(readFileSync(join(installed.dir, 'install.json'), 'utf8')) as InstallRecord;
  t.equal(record.model_sha256, sha256(readFileSync(join(model, 'model.onnx'))), 'sha256 of model.onnx recorded');
  t.match(record.fingerprint, /^onnx:[0-9a-f]{16}:16:mean:norm$/, 'the test load gave the fingerprint');
  t.equal(record.source, model);
  t.equal(installed.replaced, false);
});

t.test('--sha256 of model.onnx for a directory; a mismatch installs nothing', async (t) => {
  const { model, modelsDir } = await setup(t);
  const right = sha256(readFileSync(join(model, 'model.onnx')));
  const installed = await installModel({ source: model, modelsDir, sha256: right.toUpperCase(), name: 'checked', check: false });
  t.equal(installed.name, 'checked', '--name wins over the manifest name');
  const error = await expectErrorAsync(
    t,
    () => installModel({ source: model, modelsDir, sha256: '0'.repeat(64), name: 'bad', check: false }),
    'HA_ERR_EMBED_CHECKSUM',
  );
  t.match(error.message, `sha256 of ${join(model, 'model.onnx')} is ${right}, expected ${'0'.repeat(64)}; nothing was installed`);
  t.same(entries(modelsDir), ['checked'], 'no trace of the failed install');
  await expectErrorAsync(t, () => installModel({ source: model, modelsDir, sha256: 'abc', check: false }), 'HA_ERR_EMBED_INSTALL');
});

t.test('names are checked; an existing model is replaced whole', async (t) => {
  const { root, model, modelsDir } = await setup(t);
  for (const name of ['../escape', '.hidden', 'a/b', '', 'x'.repeat(101)]) {
    await expectErrorAsync(t, () => installModel({ source: model, modelsDir, name, check: false }), 'HA_ERR_EMBED_INSTALL');
  }
  await installModel({ source: model, modelsDir, check: false });
  writeFileSync(join(modelsDir, 'tiny-embedder', 'stale.txt'), 'from the old version');
  const second = writeTinyModel(join(root, 'second'), { dim: 8 }).dir;
  const replaced = await installModel({ source: second, modelsDir, check: false });
  t.equal(replaced.replaced, true, 'reported as replaced');
  t.equal(replaced.manifest.dim, 8, 'the new manifest is in place');
  t.notOk(existsSync(join(replaced.dir, 'stale.txt')), 'no file of the old version survives');
  t.same(entries(modelsDir), ['tiny-embedder'], 'the old copy is gone');
});

t.test('a bad model is refused before it reaches the models folder', async (t) => {
  const { root, modelsDir } = await setup(t);
  const bad = writeTinyModel(join(root, 'bad'), { manifest: { pooling: 'max' } }).dir;
  await expectErrorAsync(t, () => installModel({ source: bad, modelsDir, check: false }), 'HA_ERR_EMBED_MANIFEST');
  const wrongDim = writeTinyModel(join(root, 'wrong-dim'), { manifest: { dim: 24 } }).dir;
  await expectErrorAsync(t, () => installModel({ source: wrongDim, modelsDir }), 'HA_ERR_EMBED_OUTPUT_SHAPE');
  await expectErrorAsync(t, () => installModel({ source: join(root, 'nothing-here'), modelsDir }), 'HA_ERR_EMBED_INSTALL');
  const text = join(root, 'notes.txt');
  writeFileSync(text, 'not an archive');
  const error = await expectErrorAsync(t, () => installModel({ source: text, modelsDir, check: false }), 'HA_ERR_EMBED_INSTALL');
  t.match(error.message, /neither a directory nor a \.tar\.gz or \.zip archive/);
  t.same(entries(modelsDir), [], 'nothing installed, nothing left over');
});

t.test('local archives: a .tar.gz with one top folder, a .zip with the files at its root', async (t) => {
  const { root, tgz, zip, modelsDir } = await setup(t);
  const fromTgz = await installModel({ source: tgz, modelsDir, name: 'from-tgz', sha256: sha256(readFileSync(tgz)), check: false });
  t.same(entries(fromTgz.dir), FILES);
  t.equal(fromTgz.record.archive_sha256, sha256(readFileSync(tgz)), 'the archive checksum is recorded');
  const fromZip = await installModel({ source: zip, modelsDir, name: 'from-zip', check: false });
  t.same(entries(fromZip.dir), FILES);

  const hostile = join(root, 'hostile.zip');
  writeZip(hostile, [
    { name: 'embedder.json', data: '{}' },
    { name: '../evil.txt', data: 'x' },
  ]);
  const error = await expectErrorAsync(t, () => installModel({ source: hostile, modelsDir, check: false }), 'HA_ERR_EMBED_INSTALL');
  t.match(error.message, /leaves the archive|invalid relative path/);
  const empty = join(root, 'empty.tar.gz');
  mkdirSync(join(root, 'empty'));
  writeFileSync(join(root, 'empty', 'README'), 'no model here');
  await tar.c({ gzip: true, file: empty, cwd: join(root, 'empty') }, ['README']);
  await expectErrorAsync(t, () => installModel({ source: empty, modelsDir, check: false }), 'HA_ERR_EMBED_MODEL_MISSING');
  const big = await expectErrorAsync(
    t,
    () => installModel({ source: tgz, modelsDir, maxBytes: 1000, check: false }),
    'HA_ERR_EMBED_INSTALL',
  );
  t.match(big.message, /larger than the limit of 1000 bytes/);
  t.same(entries(modelsDir), ['from-tgz', 'from-zip'], 'the refused archives left nothing');
});

t.test('downloads: progress, checksum, redirects, limits and errors', async (t) => {
  const { tgz, modelsDir } = await setup(t);
  const archive = readFileSync(tgz);
  const server = await startFileServer({
    '/models/tiny.tar.gz': { file: archive },
    '/chunked.tar.gz': { file: archive, chunked: true },
    '/latest': { redirect: '/models/tiny.tar.gz' },
    '/broken': { status: 500, body: 'oops' },
  });
  t.teardown(() => server.close());

  const progress: Array<{ received: number; total: number | undefined }> = [];
  const installed = await installModel({
    source: server.url('/latest'),
    modelsDir,
    sha256: sha256(archive),
    onProgress: (p) => progress.push(p),
    check: false,
  });
  t.equal(installed.name, 'tiny-embedder');
  t.same(entries(installed.dir), FILES);
  t.same(server.requests, ['/latest', '/models/tiny.tar.gz'], 'the redirect was followed');
  t.ok(progress.length > 0, 'progress was reported');
  t.same(progress.at(-1), { received: archive.length, total: archive.length }, 'the last report is complete, with the total');
  t.ok(
    progress.every((p, i) => i === 0 || p.received >= (progress[i - 1]?.received ?? 0)),
    'received only grows',
  );

  const redacted = await installModel({
    source: server.url('/models/tiny.tar.gz?token=secret').replace('http://', 'http://user:hunter2@'),
    modelsDir,
    name: 'redacted',
    check: false,
  });
  t.equal(redacted.record.source, server.url('/models/tiny.tar.gz'), 'credentials and query are not recorded');
  t.notMatch(readFileSync(join(redacted.dir, 'install.json'), 'utf8'), /hunter2|secret/);
  t.equal(
    server.authorizations.at(-1),
    `Basic ${Buffer.from('user:hunter2').toString('base64')}`,
    'URL credentials are sent as Basic auth',
  );

  const wrong = await expectErrorAsync(
    t,
    () => installModel({ source: server.url('/chunked.tar.gz'), modelsDir, name: 'wrong', sha256: 'f'.repeat(64), check: false }),
    'HA_ERR_EMBED_CHECKSUM',
  );
  t.match(wrong.message, `sha256 of ${server.url('/chunked.tar.gz')} is ${sha256(archive)}`);
  const declared = await expectErrorAsync(
    t,
    () => installModel({ source: server.url('/models/tiny.tar.gz'), modelsDir, name: 'big', maxBytes: 100, check: false }),
    'HA_ERR_EMBED_INSTALL',
  );
  t.match(declared.message, `it is ${archive.length} bytes; the limit is 100`);
  const streamed = await expectErrorAsync(
    t,
    () => installModel({ source: server.url('/chunked.tar.gz'), modelsDir, name: 'big', maxBytes: 100, check: false }),
    'HA_ERR_EMBED_INSTALL',
  );
  t.match(streamed.message, 'larger than the limit of 100 bytes');
  const missing = await expectErrorAsync(
    t,
    () => installModel({ source: server.url('/nope.tgz'), modelsDir, check: false }),
    'HA_ERR_EMBED_INSTALL',
  );
  t.match(missing.message, /answered 404/);
  const failing = await expectErrorAsync(
    t,
    () => installModel({ source: server.url('/broken'), modelsDir, check: false }),
    'HA_ERR_EMBED_INSTALL',
  );
  t.match(failing.message, /answered 500/);
  t.same(entries(modelsDir), ['redacted', 'tiny-embedder'], 'failed downloads left nothing');
});

t.test('list shows installed, hand-copied and broken models', async (t) => {
  const { root, model, modelsDir } = await setup(t);
  t.same(listModels(modelsDir), [], 'no folder yet: empty');
  await installModel({ source: model, modelsDir, check: false });
  writeTinyModel(join(modelsDir, 'by-hand'));
  mkdirSync(join(modelsDir, 'broken'));
  mkdirSync(join(modelsDir, '.staging-leftover'));
  writeFileSync(join(root, 'x'), '');
  const list = listModels(modelsDir);
  t.same(
    list.map((m) => m.name),
    ['broken', 'by-hand', 'tiny-embedder'],
    'hidden folders skipped, sorted by name',
  );
  t.match(list[0], { problem: /has no embedder\.json/ });
  t.match(list[1], { manifest: { dim: 16 }, record: undefined });
  t.match(list[2], { manifest: { dim: 16 }, record: { name: 'tiny-embedder' } });
  t.ok((list[2]?.bytes ?? 0) > 1000, 'size in bytes');
});

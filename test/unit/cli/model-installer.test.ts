import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import * as tar from 'tar';
import { type InstallRecord, installModel, listModels } from '../../../src/cli/model-installer.js';
import { formatInstalled, useCommand } from '../../../src/cli/models.js';
import { findProgram } from '../../../src/shared/find-on-path.js';
import { locatePocketsphinxModel, POCKETSPHINX_PROGRAM } from '../../../src/shared/pocketsphinx-model.js';
import { startFileServer } from '../embed/fixtures/file-server.js';
import { writeTinyModel } from '../embed/fixtures/tiny-model.js';
import { expectErrorAsync, tempDir } from '../fixtures/support.js';
import { LABELS, writeParserModel } from '../nlp/fixtures/parser-model.js';
import { writeZip } from '../plugin/fixtures/zip-writer.js';

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');
const FILES = ['embedder.json', 'install.json', 'model.onnx', 'tokenizer.json'];
const PARSER_FILES = ['install.json', 'model.onnx', 'parser.json'];

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

const EXPECTED =
  'a sentence-embedding model (model.onnx, tokenizer.json, embedder.json), ' +
  'a dependency-parser model (model.onnx, parser.json) ' +
  'or a pocketsphinx speech model (an acoustic model with mdef and feat.params, in the folder or one folder inside it, and a *.dict beside it)';

/** Only the installed folders: no staging or old copies left behind. */
const entries = (dir: string) => (existsSync(dir) ? readdirSync(dir).sort() : []);

t.test('a directory is copied in, checked by loading it, and recorded', async (t) => {
  const { model, modelsDir } = await setup(t);
  const installed = await installModel({ source: model, modelsDir });
  t.equal(installed.name, 'tiny-embedder', 'named after the manifest');
  t.equal(installed.kind, 'embedder', 'embedder.json makes it an embedder');
  t.equal(installed.dir, join(modelsDir, 'tiny-embedder'));
  t.same(entries(installed.dir), FILES, 'model files plus install.json');
  t.same(entries(modelsDir), ['tiny-embedder'], 'nothing else left in the models folder');
  const record = JSON.parse(readFileSync(join(installed.dir, 'install.json'), 'utf8')) as InstallRecord;
  t.equal(record.model_sha256, sha256(readFileSync(join(model, 'model.onnx'))), 'sha256 of model.onnx recorded');
  t.match(record.fingerprint, /^onnx:[0-9a-f]{16}:16:mean:norm$/, 'the test load gave the fingerprint');
  t.equal(record.source, model);
  t.equal(record.kind, 'embedder', 'the kind is recorded');
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
  t.match(replaced, { kind: 'embedder', manifest: { dim: 8 } }, 'the new manifest is in place');
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
  t.match(list[0], { problem: /holds neither embedder\.json nor parser\.json/, manifest: undefined });
  t.match(list[1], { kind: 'embedder', manifest: { dim: 16 }, record: undefined });
  t.match(list[2], { kind: 'embedder', manifest: { dim: 16 }, record: { name: 'tiny-embedder' } });
  t.ok((list[2]?.bytes ?? 0) > 1000, 'size in bytes');
});

t.test('a parser directory is told apart by parser.json, validated, test-loaded and recorded', async (t) => {
  const root = tempDir(t, 'ha-models-');
  const source = writeParserModel(join(root, 'src', 'zh-parser'));
  const modelsDir = join(root, 'data', 'models');
  const installed = await installModel({ source, modelsDir });
  t.equal(installed.kind, 'parser');
  t.equal(installed.name, 'synthetic-parser', 'named after parser.json');
  t.equal(installed.dir, join(modelsDir, 'synthetic-parser'));
  t.same(entries(installed.dir), PARSER_FILES, 'model.onnx and parser.json plus install.json');
  t.same(entries(modelsDir), ['synthetic-parser'], 'nothing else left in the models folder');
  // The fixture's tables: 8 known words after <unk>, 10 tags after <unk>.
  t.same(installed.manifest, { name: 'synthetic-parser', words: 8, tags: 10, labels: LABELS, max_words: 8 }, 'the manifest in brief');
  const record = JSON.parse(readFileSync(join(installed.dir, 'install.json'), 'utf8')) as InstallRecord;
  t.equal(record.kind, 'parser');
  t.equal(record.model_sha256, sha256(readFileSync(join(source, 'model.onnx'))));
  t.equal(record.fingerprint, undefined, 'no vector fingerprint for a parser');
  t.same(
    JSON.parse(readFileSync(join(installed.dir, 'parser.json'), 'utf8')),
    JSON.parse(readFileSync(join(source, 'parser.json'), 'utf8')),
  );

  const tgz = join(root, 'parser.tar.gz');
  await tar.c({ gzip: true, file: tgz, cwd: join(root, 'src'), portable: true }, ['zh-parser']);
  const fromTgz = await installModel({ source: tgz, modelsDir, name: 'from-tgz' });
  t.match(fromTgz, { kind: 'parser', name: 'from-tgz', record: { kind: 'parser', archive_sha256: sha256(readFileSync(tgz)) } });
  t.same(entries(fromTgz.dir), PARSER_FILES, 'from an archive with one top folder');
  const zip = join(root, 'parser.zip');
  writeZip(
    zip,
    ['model.onnx', 'parser.json'].map((name) => ({ name, data: readFileSync(join(source, name)), deflate: true })),
  );
  const fromZip = await installModel({ source: zip, modelsDir, name: 'from-zip' });
  t.match(fromZip, { kind: 'parser', name: 'from-zip' }, 'from an archive with the files at its root');
});

t.test('a parser the daemon could not use is refused with its own validator and test load', async (t) => {
  const root = tempDir(t, 'ha-models-');
  const modelsDir = join(root, 'data', 'models');
  const cases: Array<{
    why: string;
    options: Parameters<typeof writeParserModel>[1];
    code: Parameters<typeof expectErrorAsync>[2];
    message: RegExp;
  }> = [
    {
      why: 'a bad parser.json',
      options: { manifest: { labels: ['HED', 'NOPE'] } },
      code: 'HA_ERR_EMBED_MANIFEST',
      message: /parser\.json: labels\[1\]/,
    },
    { why: 'no model.onnx', options: { files: ['parser.json'] }, code: 'HA_ERR_EMBED_MODEL_MISSING', message: /has no model\.onnx/ },
    {
      why: 'a word table smaller than the vocabulary',
      options: { wordRows: 3 },
      code: 'HA_ERR_EMBED_MODEL_LOAD',
      message: /probe sentence/,
    },
    { why: 'arc_scores without the root column', options: { arcWidth: 'n' }, code: 'HA_ERR_EMBED_OUTPUT_SHAPE', message: /arc_scores/ },
    {
      why: 'other input names',
      options: { inputNames: ['ids', 'tags'] },
      code: 'HA_ERR_EMBED_MANIFEST',
      message: /takes tag_ids and word_ids/,
    },
  ];
  for (const [i, c] of cases.entries()) {
    const dir = writeParserModel(join(root, `bad-${i}`), c.options);
    const error = await expectErrorAsync(t, () => installModel({ source: dir, modelsDir, name: `bad-${i}` }), c.code);
    t.match(error.message, c.message, c.why);
    t.ok(error.message.includes(dir) && !error.message.includes('.staging-'), `the message names ${dir}, not the staging copy`);
  }
  // Without the test load only the manifest is checked: the broken table goes in, the bad manifest does not.
  const unchecked = await installModel({ source: join(root, 'bad-2'), modelsDir, name: 'unchecked', check: false });
  t.equal(unchecked.kind, 'parser');
  await expectErrorAsync(t, () => installModel({ source: join(root, 'bad-0'), modelsDir, check: false }), 'HA_ERR_EMBED_MANIFEST');
  const good = writeParserModel(join(root, 'good'));
  const aborted = AbortSignal.abort();
  await expectErrorAsync(t, () => installModel({ source: good, modelsDir, signal: aborted }), 'HA_ERR_ABORTED');
  t.same(entries(modelsDir), ['unchecked'], 'every refused parser left nothing behind');
});

t.test('a folder with both manifests or neither is refused, naming the files each kind needs', async (t) => {
  const { root, model, modelsDir } = await setup(t);
  const both = join(root, 'both');
  writeParserModel(both);
  for (const name of ['tokenizer.json', 'embedder.json']) writeFileSync(join(both, name), readFileSync(join(model, name)));
  const twice = await expectErrorAsync(t, () => installModel({ source: both, modelsDir, check: false }), 'HA_ERR_EMBED_MANIFEST');
  t.equal(twice.message, `${both} holds the files of embedder and parser models; a model directory is one model: ${EXPECTED}`);
  const neither = join(root, 'neither');
  mkdirSync(neither);
  writeFileSync(join(neither, 'model.onnx'), readFileSync(join(model, 'model.onnx')));
  const none = await expectErrorAsync(t, () => installModel({ source: neither, modelsDir, check: false }), 'HA_ERR_EMBED_MODEL_MISSING');
  t.equal(none.message, `${neither} holds neither embedder.json nor parser.json nor a speech model; a model directory is ${EXPECTED}`);

  const bothZip = join(root, 'both.zip');
  writeZip(
    bothZip,
    ['model.onnx', 'tokenizer.json', 'embedder.json', 'parser.json'].map((name) => ({ name, data: readFileSync(join(both, name)) })),
  );
  const zipped = await expectErrorAsync(t, () => installModel({ source: bothZip, modelsDir, check: false }), 'HA_ERR_EMBED_MANIFEST');
  t.match(
    zipped.message,
    `${bothZip} holds the files of embedder and parser models`,
    'an archive is named by its source, not the staging folder',
  );
  const noneZip = join(root, 'none.zip');
  writeZip(noneZip, [{ name: 'model.onnx', data: readFileSync(join(model, 'model.onnx')) }]);
  const unzipped = await expectErrorAsync(
    t,
    () => installModel({ source: noneZip, modelsDir, check: false }),
    'HA_ERR_EMBED_MODEL_MISSING',
  );
  t.match(
    unzipped.message,
    /no model \(embedder\.json, parser\.json or a speech model\) at the top of the archive .*dependency-parser model \(model\.onnx, parser\.json\)/,
  );
  t.same(entries(modelsDir), [], 'nothing installed, nothing left over');
});

t.test('list shows the kind of each model, usable or not', async (t) => {
  const { model, modelsDir } = await setup(t);
  await installModel({ source: model, modelsDir, check: false });
  writeParserModel(join(modelsDir, 'parser-by-hand'));
  writeParserModel(join(modelsDir, 'parser-broken'), { manifest: { max_words: 0 } });
  const both = writeParserModel(join(modelsDir, 'two-manifests'));
  writeFileSync(join(both, 'embedder.json'), readFileSync(join(model, 'embedder.json')));
  const list = listModels(modelsDir);
  t.same(
    list.map((m) => [m.name, m.kind]),
    [
      ['parser-broken', 'parser'],
      ['parser-by-hand', 'parser'],
      ['tiny-embedder', 'embedder'],
      ['two-manifests', undefined],
    ],
  );
  t.match(list[0], { problem: /parser\.json: max_words must be an integer from 1 to 1024/, manifest: undefined });
  t.match(list[1], { manifest: { labels: LABELS, max_words: 8 }, record: undefined, problem: undefined });
  t.match(list[2], { manifest: { dim: 16 }, record: { kind: 'embedder' } });
  t.match(list[3], { problem: /holds the files of embedder and parser models/ });
  const printed = JSON.parse(JSON.stringify(list)) as Array<Record<string, unknown>>;
  t.match(printed[1], { kind: 'parser', manifest: { words: 8, tags: 10, labels: LABELS } }, 'a parser lists as plain JSON');
});

// A pocketsphinx-format speech model has no manifest: its acoustic model (mdef, feat.params) and
// dictionary say what it is. Debian's pocketsphinx-en-us is the real one, copied as a user would.
const DEBIAN_SPEECH_MODEL = '/usr/share/pocketsphinx/model/en-us';
const debianModel = locatePocketsphinxModel(DEBIAN_SPEECH_MODEL);
const decoder = findProgram(POCKETSPHINX_PROGRAM);

t.test(
  'a pocketsphinx speech model is told by its files, test-decoded and recorded; the output names the voice setting',
  { skip: !debianModel.hmm || !debianModel.dict || !decoder ? 'pocketsphinx and pocketsphinx-en-us are not installed' : false },
  async (t) => {
    const root = tempDir(t, 'ha-models-');
    const modelsDir = join(root, 'data', 'models');
    // Only the parts a speech model needs (the open language models are 27 MB of no use to it).
    const source = join(root, 'en-in');
    mkdirSync(join(source, 'acoustic'), { recursive: true });
    for (const name of readdirSync(debianModel.hmm as string))
      writeFileSync(join(source, 'acoustic', name), readFileSync(join(debianModel.hmm as string, name)));
    writeFileSync(join(source, 'en-in.dict'), readFileSync(debianModel.dict as string));

    const installed = await installModel({ source, modelsDir });
    t.equal(installed.kind, 'speech');
    t.match(installed.manifest, { acoustic: 'acoustic', dictionary: 'en-in.dict' });
    t.ok(installed.kind === 'speech' && installed.manifest.words > 100_000, 'the dictionary is counted');
    t.equal(installed.record.model_sha256, sha256(readFileSync(join(source, 'acoustic', 'mdef'))), 'the record keeps the checksum of mdef');
    t.same(locatePocketsphinxModel(installed.dir), { hmm: join(installed.dir, 'acoustic'), dict: join(installed.dir, 'en-in.dict') });
    t.equal(useCommand(installed), `homeagentctl config set plugin.voice.stt.local_model_dir ${installed.dir}`);
    const en = formatInstalled(installed, 'en');
    t.match(en, /installed speech model \(pocketsphinx\) en-in in .*\n.*words in en-in\.dict, acoustic model acoustic/);
    t.match(
      en,
      /mdef sha256 [0-9a-f]{64}\nto use it for voice commands offline:\n {2}homeagentctl config set plugin\.voice\.stt\.local_model_dir /,
    );
    t.match(formatInstalled(installed, 'zh'), /已安装语音模型（pocketsphinx） en-in.*\n.*en-in\.dict 中 \d+ 个词，声学模型 acoustic/);
    t.match(listModels(modelsDir), [{ name: 'en-in', kind: 'speech', manifest: { dictionary: 'en-in.dict' } }]);

    // Half a model names the missing half; a model pocketsphinx cannot load is refused by the test decode.
    const noDict = join(root, 'no-dict');
    mkdirSync(join(noDict, 'hmm'), { recursive: true });
    for (const name of ['mdef', 'feat.params']) writeFileSync(join(noDict, 'hmm', name), readFileSync(join(source, 'acoustic', name)));
    const half = await expectErrorAsync(t, () => installModel({ source: noDict, modelsDir }), 'HA_ERR_EMBED_MODEL_MISSING');
    t.match(half.message, `${noDict} looks like a pocketsphinx speech model but has no pronunciation dictionary (*.dict)`);
    const broken = join(root, 'broken');
    mkdirSync(join(broken, 'hmm'), { recursive: true });
    for (const name of readdirSync(join(source, 'acoustic'))) {
      const data = readFileSync(join(source, 'acoustic', name));
      // A download cut short: the Gaussians' means end half-way.
      writeFileSync(join(broken, 'hmm', name), name === 'means' ? data.subarray(0, data.length >> 1) : data);
    }
    writeFileSync(join(broken, 'x.dict'), readFileSync(join(source, 'en-in.dict')));
    const refused = await expectErrorAsync(t, () => installModel({ source: broken, modelsDir }), 'HA_ERR_EMBED_MANIFEST');
    t.match(refused.message, `pocketsphinx cannot load the speech model in ${broken}`, 'the source is named, not the staging copy');
    t.same(entries(modelsDir), ['en-in'], 'neither refused model was installed, nothing left over');
  },
);

// `homeagentctl models list|install` (src/cli/models.ts), run in-process with captured output.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import * as tar from 'tar';
import { type ModelsIo, runModels } from '../../../src/cli/models.js';
import { tempDir } from '../fixtures/support.js';
import { writeParserModel } from '../nlp/fixtures/parser-model.js';
import { startFileServer } from './fixtures/file-server.js';
import { writeTinyModel } from './fixtures/tiny-model.js';

interface Captured extends ModelsIo {
  out(): string;
  err(): string;
}

function io(cwd: string, options: { tty?: boolean; env?: NodeJS.ProcessEnv } = {}): Captured {
  let out = '';
  let err = '';
  return {
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (err += s), isTTY: options.tty === true },
    env: options.env ?? {},
    cwd,
    out: () => out,
    err: () => err,
  };
}

t.test('usage errors exit 64 with the models usage', async (t) => {
  const cwd = tempDir(t);
  for (const argv of [
    [],
    ['frobnicate'],
    ['install'],
    ['install', 'a', 'b'],
    ['list', 'extra'],
    ['list', '--sha256', 'x'],
    ['list', '--bogus'],
  ]) {
    const c = io(cwd);
    t.equal(await runModels(argv, c), 64, `models ${argv.join(' ')}`);
    t.match(c.err(), /usage: homeagentctl models list/);
  }
  const c = io(cwd);
  t.equal(await runModels(['install', 'x', '--max-mb', 'lots'], c), 64, '--max-mb must be a number');
  const help = io(cwd);
  t.equal(await runModels(['--help'], help), 0);
  t.match(help.out(), /models install <DIR\|FILE\|URL>/);
});

t.test('install a directory, then list it; data dir from --data-dir, $HOMEAGENT_DATA_DIR or ./data', async (t) => {
  const cwd = tempDir(t);
  writeTinyModel(join(cwd, 'tiny'));
  const empty = io(cwd);
  t.equal(await runModels(['list'], empty), 0);
  t.equal(empty.out(), `no models installed in ${join(cwd, 'data', 'models')}\n`, 'default ./data, relative to the working directory');

  const install = io(cwd);
  t.equal(await runModels(['install', 'tiny', '--no-check'], install), 0, install.err());
  t.match(install.out(), `installed sentence-embedding model tiny-embedder in ${join(cwd, 'data', 'models', 'tiny-embedder')}`);
  t.match(install.out(), /dim 16, mean pooling, max 128 tokens/);
  t.match(
    install.out(),
    'to use it for memory vectors:\n  homeagentctl config set core.memory.embedder tiny-embedder\n  then restart HomeAgent',
    'says which setting to change, then to restart',
  );
  t.equal(install.err(), '', 'no progress output for a local directory');

  const list = io(cwd);
  t.equal(await runModels(['list'], list), 0);
  t.match(list.out(), /^NAME\s+KIND\s+DETAILS\s+SIZE\s+SOURCE\ntiny-embedder\s+embedder\s+dim 16, mean pooling\s+0\.0 MB\s+\/.*tiny\n$/);

  const elsewhere = tempDir(t);
  const viaEnv = io(cwd, { env: { HOMEAGENT_DATA_DIR: elsewhere } });
  t.equal(await runModels(['install', join(cwd, 'tiny'), '--name', 'via-env', '--no-check', '--json'], viaEnv), 0);
  t.match(
    JSON.parse(viaEnv.out()),
    {
      ok: true,
      kind: 'embedder',
      name: 'via-env',
      dir: join(elsewhere, 'models', 'via-env'),
      use: 'homeagentctl config set core.memory.embedder via-env',
    },
    '--json result',
  );
  const viaFlag = io(cwd, { env: { HOMEAGENT_DATA_DIR: elsewhere } });
  t.equal(await runModels(['list', '--json', '--data-dir', join(cwd, 'data')], viaFlag), 0);
  t.match(JSON.parse(viaFlag.out()), [{ name: 'tiny-embedder' }], '--data-dir wins over the environment');
});

t.test('a parser model installs and lists as a parser, with its setting', async (t) => {
  const cwd = tempDir(t);
  writeParserModel(join(cwd, 'zh-parser'));
  writeTinyModel(join(cwd, 'tiny'));
  const install = io(cwd);
  t.equal(await runModels(['install', 'zh-parser'], install), 0, install.err());
  const dir = join(cwd, 'data', 'models', 'synthetic-parser');
  t.match(install.out(), `installed dependency-parser model synthetic-parser in ${dir}\n`);
  t.match(install.out(), /\n {2}11 labels, max 8 words, 8 known words, 10 tags, 0\.0 MB\n/);
  t.notMatch(install.out(), /vectors|core\.memory\.embedder/, 'nothing about embeddings');
  t.match(
    install.out(),
    /to use it to read facts from what people say:\n {2}homeagentctl config set core\.agent\.onnx_model_path synthetic-parser\n {2}then restart HomeAgent/,
    'the parser setting, then a restart',
  );
  const again = io(cwd);
  t.equal(await runModels(['install', 'zh-parser', '--name', 'zh', '--no-check', '--json'], again), 0, again.err());
  t.match(JSON.parse(again.out()), { ok: true, kind: 'parser', name: 'zh', use: 'homeagentctl config set core.agent.onnx_model_path zh' });
  t.equal(await runModels(['install', 'tiny', '--no-check'], io(cwd)), 0);

  const list = io(cwd);
  t.equal(await runModels(['list'], list), 0);
  const lines = list.out().trimEnd().split('\n');
  t.match(lines[0], /^NAME\s+KIND\s+DETAILS\s+SIZE\s+SOURCE$/);
  t.match(lines[1], /^synthetic-parser\s+parser\s+11 labels, max 8 words\s+0\.0 MB\s+\/.*zh-parser$/);
  t.match(lines[2], /^tiny-embedder\s+embedder\s+dim 16, mean pooling\s+0\.0 MB\s+\/.*tiny$/);
  t.match(lines[3], /^zh\s+parser\s+11 labels, max 8 words\s+0\.0 MB\s+\/.*zh-parser$/);
  t.equal(lines.length, 4);
  const json = io(cwd);
  t.equal(await runModels(['list', '--json'], json), 0);
  t.match(JSON.parse(json.out()), [
    { name: 'synthetic-parser', kind: 'parser' },
    { name: 'tiny-embedder', kind: 'embedder' },
    { kind: 'parser' },
  ]);
});

t.test('a folder with both manifests fails with the files each kind needs; list marks what is unusable', async (t) => {
  const cwd = tempDir(t);
  const both = writeParserModel(join(cwd, 'both'));
  const tiny = writeTinyModel(join(cwd, 'tiny')).dir;
  for (const name of ['tokenizer.json', 'embedder.json']) writeFileSync(join(both, name), readFileSync(join(tiny, name)));
  const c = io(cwd);
  t.equal(await runModels(['install', 'both'], c), 1);
  t.match(
    c.err(),
    /^homeagentctl: .*both holds the files of embedder and parser models; a model directory is one model: a sentence-embedding model \(model\.onnx, tokenizer\.json, embedder\.json\), a dependency-parser model \(model\.onnx, parser\.json\) or a pocketsphinx speech model .* \(HA_ERR_EMBED_MANIFEST\)\n$/,
  );
  const models = join(cwd, 'data', 'models');
  writeParserModel(join(models, 'broken-parser'), { manifest: { format: 'v0' } });
  mkdirSync(join(models, 'empty'));
  const list = io(cwd);
  t.equal(await runModels(['list'], list), 0);
  const lines = list.out().trimEnd().split('\n');
  t.match(lines[1], /^broken-parser\s+parser\s+-\s+0\.0 MB\s+unusable: .*parser\.json: format must be "homeagent-dep-parser-v1"/);
  t.match(lines[2], /^empty\s+-\s+-\s+0\.0 MB\s+unusable: .*holds neither embedder\.json nor parser\.json/);
});

t.test('failures exit 1 with the error code; --json prints the envelope', async (t) => {
  const cwd = tempDir(t);
  writeTinyModel(join(cwd, 'tiny'));
  const plain = io(cwd);
  t.equal(await runModels(['install', 'tiny', '--sha256', '0'.repeat(64), '--no-check'], plain), 1);
  t.match(
    plain.err(),
    /homeagentctl: sha256 of .*model\.onnx is [0-9a-f]{64}, expected 0{64}; nothing was installed \(HA_ERR_EMBED_CHECKSUM\)/,
  );
  const json = io(cwd);
  t.equal(await runModels(['install', 'missing-dir', '--json'], json), 1);
  t.match(JSON.parse(json.out()), { ok: false, error: { code: 'HA_ERR_EMBED_INSTALL', message: /no such file or directory/ } });
});

t.test('a download shows a progress bar on a terminal and one line otherwise', async (t) => {
  const cwd = tempDir(t);
  writeTinyModel(join(cwd, 'src', 'tiny'));
  const archive = join(cwd, 'tiny.tgz');
  await tar.c({ gzip: true, file: archive, cwd: join(cwd, 'src') }, ['tiny']);
  const bytes = readFileSync(archive);
  const server = await startFileServer({ '/tiny.tgz': { file: bytes } });
  t.teardown(() => server.close());
  const sha = createHash('sha256').update(bytes).digest('hex');

  const tty = io(cwd, { tty: true });
  t.equal(await runModels(['install', server.url('/tiny.tgz'), '--sha256', sha, '--no-check'], tty), 0, tty.err());
  t.match(tty.err(), /\r\[#{30}\] 100% 0\.0 MB of 0\.0 MB .*MB\/s\n$/, 'a full bar, then a newline');
  t.match(tty.out(), /installed sentence-embedding model tiny-embedder/);

  const pipe = io(cwd);
  t.equal(await runModels(['install', server.url('/tiny.tgz'), '--name', 'again', '--no-check'], pipe), 0, pipe.err());
  t.equal(pipe.err(), 'downloaded 0.0 MB\n', 'one summary line, no carriage returns');
});

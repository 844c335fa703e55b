import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { expectErrorAsync, tempDir } from '../fixtures/support.js';
import { openKnowledge } from './fixtures/knowledge-fixture.js';
import { SAMPLES } from './fixtures/media-samples.js';

const sha = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');

t.test('attachments: stored once by content, listed in media.json, the tree and stats', async (t) => {
  const { kb, root, dataDir } = await openKnowledge(t);
  const entry = await kb.create('pets/cat', 'Our cat Mimi likes the sunny window.', {
    media: [{ file_name: 'mimi.png', data: SAMPLES.png }],
  });
  const png = { digest: sha(SAMPLES.png), kind: 'image', mime: 'image/png', bytes: SAMPLES.png.byteLength, file_name: 'mimi.png' };
  t.same(entry.media, [png]);
  t.same(JSON.parse(readFileSync(join(root, 'pets/cat/media.json'), 'utf8')), [png], 'media.json lists it');
  t.ok(existsSync(join(dataDir, 'media', 'sha256', png.digest.slice(0, 2), png.digest)), 'the bytes are in the media store');

  const again = await kb.attach('pets/cat', { file_name: 'copy-of-mimi.png', data: SAMPLES.png });
  t.same(again, png, 'the same bytes are attached once');
  const audioFile = join(tempDir(t), 'meow.bin');
  writeFileSync(audioFile, SAMPLES.wav);
  const wav = await kb.attach('pets/cat', { file_name: '/some/dir/meow.wav', path: audioFile, mime: 'audio/wav' });
  t.same(wav, { digest: sha(SAMPLES.wav), kind: 'audio', mime: 'audio/wav', bytes: SAMPLES.wav.byteLength, file_name: 'meow.wav' });
  t.same(
    kb.get('pets/cat')?.media.map((m) => m.file_name),
    ['mimi.png', 'meow.wav'],
  );
  await kb.create('pets/dog', 'The dog has the same photo as the cat.', { media: [{ file_name: 'x.png', data: SAMPLES.png }] });
  t.same(kb.stats().media, { files: 2, bytes: SAMPLES.png.byteLength + SAMPLES.wav.byteLength }, 'distinct files referenced');
  t.same(
    kb.tree({ category: 'pets', include_items: true }).items?.map((i) => [i.name, i.media]),
    [
      ['cat', 2],
      ['dog', 1],
    ],
  );

  await kb.create('pets/cat', 'Mimi is twelve now.', { overwrite: true });
  t.equal(kb.get('pets/cat')?.media.length, 2, 'overwriting the text keeps the attachments');
  t.match(await kb.reindex(), { indexed: 0, removed: 0 }, 'the index already agrees with media.json');
});

t.test('attachments that are refused leave nothing behind', async (t) => {
  const { kb, root } = await openKnowledge(t, { settings: { max_media_mb: 1 } });
  const pdf = await expectErrorAsync(
    t,
    () => kb.create('docs/manual', 'the manual', { media: [{ file_name: 'manual.pdf', data: Buffer.from('%PDF-1.7\n') }] }),
    'HA_ERR_MEDIA_TYPE',
  );
  t.match(pdf.message, /manual\.pdf is not a recognised image or audio file/);
  t.notOk(existsSync(join(root, 'docs')), 'the entry was not written');
  await kb.create('docs/manual', 'the manual');
  await expectErrorAsync(
    t,
    () => kb.attach('docs/manual', { file_name: 'x.png', data: SAMPLES.png, mime: 'text/html' }),
    'HA_ERR_MEDIA_TYPE',
  );
  const big = Buffer.alloc(1024 * 1024 + 1);
  Buffer.from(SAMPLES.jpeg).copy(big);
  const bigFile = join(tempDir(t), 'big.jpg');
  writeFileSync(bigFile, big);
  const tooLarge = await expectErrorAsync(
    t,
    () => kb.attach('docs/manual', { file_name: 'big.jpg', path: bigFile }),
    'HA_ERR_MEDIA_TOO_LARGE',
  );
  t.match(tooLarge.message, /big\.jpg has 1048577 bytes/);
  await expectErrorAsync(t, () => kb.attach('docs/manual', { file_name: 'nothing.png' }), 'HA_ERR_MEDIA_TYPE');
  await expectErrorAsync(t, () => kb.attach('docs/nothing', { file_name: 'x.png', data: SAMPLES.png }), 'HA_ERR_KNOWLEDGE_NOT_FOUND');
  t.same(kb.get('docs/manual')?.media, []);
  t.notOk(existsSync(join(root, 'docs/manual/media.json')));
});

import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { MediaStore, sniffMedia } from '../../../src/store/media-store.js';
import { expectError, tempDir } from '../fixtures/support.js';
import { SAMPLES } from '../knowledge/fixtures/media-samples.js';

t.test('sniffing reads the bytes, not the name', async (t) => {
  t.same(sniffMedia(SAMPLES.png), { kind: 'image', mime: 'image/png' });
  t.same(sniffMedia(SAMPLES.jpeg), { kind: 'image', mime: 'image/jpeg' });
  t.same(sniffMedia(SAMPLES.gif), { kind: 'image', mime: 'image/gif' });
  t.same(sniffMedia(SAMPLES.webp), { kind: 'image', mime: 'image/webp' });
  t.same(sniffMedia(SAMPLES.wav), { kind: 'audio', mime: 'audio/wav' });
  t.same(sniffMedia(SAMPLES.mp3id3), { kind: 'audio', mime: 'audio/mpeg' });
  t.same(sniffMedia(SAMPLES.mp3frame), { kind: 'audio', mime: 'audio/mpeg' });
  t.same(sniffMedia(SAMPLES.ogg), { kind: 'audio', mime: 'audio/ogg' });
  t.same(sniffMedia(SAMPLES.flac), { kind: 'audio', mime: 'audio/flac' });
  t.equal(sniffMedia(Buffer.from('%PDF-1.7\n')), undefined, 'pdf');
  t.equal(sniffMedia(Buffer.from('#!/bin/sh\nrm -rf /\n')), undefined, 'a script');
  t.equal(sniffMedia(Uint8Array.from([0xff, 0xf1, 0x50, 0x80])), undefined, 'AAC (ADTS) is not MP3');
  t.equal(sniffMedia(Buffer.from('RIFF\x24\x00\x00\x00AVI LIST', 'latin1')), undefined, 'a RIFF that is neither WAVE nor WEBP');
  t.equal(sniffMedia(new Uint8Array(0)), undefined, 'empty');
});

t.test('put: content-addressed, atomic, deduplicated', async (t) => {
  const dir = tempDir(t);
  const store = new MediaStore({ dir, maxBytes: () => 1024 });
  const digest = createHash('sha256').update(SAMPLES.png).digest('hex');
  const first = store.put(SAMPLES.png, { fileName: 'cat.txt' });
  t.same(
    first,
    { kind: 'image', mime: 'image/png', digest, bytes: SAMPLES.png.byteLength, written: true },
    'the name does not decide the type',
  );
  const file = join(dir, 'sha256', digest.slice(0, 2), digest);
  t.equal(store.path(digest), file);
  t.same(readFileSync(file), Buffer.from(SAMPLES.png));
  t.same(readdirSync(join(dir, 'sha256', digest.slice(0, 2))), [digest], 'no temporary file left');
  t.same(store.put(SAMPLES.png, { fileName: 'other-name.png' }).written, false, 'the same bytes are stored once');
  t.ok(store.has(digest));
  t.notOk(store.has('0'.repeat(64)));
  t.same(store.read(digest), Buffer.from(SAMPLES.png));
  t.equal(store.read('0'.repeat(64)), undefined);
  store.put(SAMPLES.wav);
  t.same(store.stats(), { files: 2, bytes: SAMPLES.png.byteLength + SAMPLES.wav.byteLength });
  t.same(new MediaStore({ dir, maxBytes: () => 1024 }).stats(), store.stats(), 'a new instance counts the same from disk');
  expectError(t, () => store.path('../../etc/passwd'), 'HA_ERR_MEDIA_TYPE');
});

t.test('refused: unknown formats, non-media declared types, over the size limit', async (t) => {
  const dir = tempDir(t);
  let limit = 64;
  const store = new MediaStore({ dir, maxBytes: () => limit });
  const pdf = expectError(t, () => store.put(Buffer.from('%PDF-1.7\n'), { fileName: 'manual.pdf' }), 'HA_ERR_MEDIA_TYPE');
  t.match(pdf.message, /manual\.pdf is not a recognised image or audio file \(accepted: png, jpeg/);
  const declared = expectError(t, () => store.put(SAMPLES.png, { declaredMime: 'application/pdf' }), 'HA_ERR_MEDIA_TYPE');
  t.match(declared.message, /only image\/\* and audio\/\*/);
  const big = new Uint8Array(65);
  big.set(SAMPLES.png);
  const error = expectError(t, () => store.put(big, { fileName: 'big.png' }), 'HA_ERR_MEDIA_TOO_LARGE');
  t.match(error.message, /big\.png has 65 bytes; media files may have at most 64 bytes/);
  limit = 65;
  t.equal(store.put(big).bytes, 65, 'the limit is read at each write');
  t.notOk(
    existsSync(join(dir, 'sha256', createHash('sha256').update(Buffer.from('%PDF-1.7\n')).digest('hex').slice(0, 2))),
    'nothing written for a refused file',
  );
});

t.test('remove takes back a file put() wrote: file, empty prefix folder and the counts', async (t) => {
  const dir = tempDir(t);
  const store = new MediaStore({ dir, maxBytes: () => 1024 * 1024 });
  const png = store.put(SAMPLES.png);
  const wav = store.put(SAMPLES.wav);
  t.same(store.stats(), { files: 2, bytes: SAMPLES.png.byteLength + SAMPLES.wav.byteLength });
  t.equal(store.remove(png.digest), true);
  t.notOk(existsSync(store.path(png.digest)));
  t.notOk(existsSync(join(dir, 'sha256', png.digest.slice(0, 2))), 'its prefix folder went with it');
  t.same(store.stats(), { files: 1, bytes: SAMPLES.wav.byteLength });
  t.equal(store.remove(png.digest), false, 'nothing to remove twice');
  t.ok(store.has(wav.digest), 'other files stay');
  expectError(t, () => store.remove('../../etc/passwd'), 'HA_ERR_MEDIA_TYPE');
});

import { createHash } from 'node:crypto';
import { Jieba } from '@node-rs/jieba';
import { dict } from '@node-rs/jieba/dict.js';
import t from 'tap';
import { cosine } from '../../../src/embed/embedder.js';
import { HashEmbedder } from '../../../src/embed/hash-embedder.js';
import { SIMILARITY_PROBES } from '../../contract/embedder.contract.js';
import { expectError } from '../fixtures/support.js';

const digest = (v: Float32Array) =>
  createHash('sha256')
    .update(Buffer.from(v.buffer, v.byteOffset, v.byteLength))
    .digest('hex');

t.test('fingerprint names version and dimension; dim is bounded to 256–512', async (t) => {
  t.equal(new HashEmbedder().fingerprint, 'hash-ngram-v1-384');
  t.equal(new HashEmbedder().dim, 384);
  t.equal(new HashEmbedder({ dim: 256 }).fingerprint, 'hash-ngram-v1-256');
  t.equal(new HashEmbedder({ dim: 512 }).embedOne('hello').length, 512);
  for (const dim of [255, 513, 300.5, Number.NaN]) expectError(t, () => new HashEmbedder({ dim }), 'HA_ERR_EMBED_OPTIONS');
});

t.test('the vector space is pinned: a change to features or hashing must bump the version', async (t) => {
  // Stored vectors are compared across restarts and machines under the same fingerprint, so the
  // exact bytes for a fixed text must never change while the fingerprint stays hash-ngram-v1-384.
  const v = new HashEmbedder().embedOne('HomeAgent 把客厅的灯打开 at 7:30, please!');
  t.equal(digest(v), '399635c2083e27ae1f2e970b3b6bd3112e7d36fdb5151751fdd36721e171be1e');
});

t.test('case, width and Unicode forms do not matter', async (t) => {
  const e = new HashEmbedder();
  t.same(e.embedOne('LAMP On'), e.embedOne('lamp on'), 'upper and lower case');
  t.same(e.embedOne('ＬＡＭＰ　ｏｎ'), e.embedOne('lamp on'), 'full-width forms (NFKC)');
  t.same(e.embedOne('café'), e.embedOne('cafe\u0301'), 'composed and decomposed accents');
  t.ok(
    e.embedOne('!!! ??? ...').every((x) => x === 0),
    'punctuation only is the zero vector',
  );
});

t.test('character n-grams: inflections and Chinese without a segmenter', async (t) => {
  const e = new HashEmbedder();
  const [lamp, lamps, sister] = [e.embedOne('lamp'), e.embedOne('lamps'), e.embedOne('sister')];
  t.ok(cosine(lamp, lamps) > 0.3, `lamp ~ lamps (${cosine(lamp, lamps).toFixed(3)})`);
  t.ok(cosine(lamp, lamps) > cosine(lamp, sister) + 0.2, 'lamp is closer to lamps than to sister');
  const [q, hit, miss] = [e.embedOne('客厅灯'), e.embedOne('我想打开客厅的灯'), e.embedOne('今天天气很好')];
  t.ok(
    cosine(q, hit) > cosine(q, miss) + 0.2,
    `客厅灯 ~ 我想打开客厅的灯 ${cosine(q, hit).toFixed(3)} vs 今天天气很好 ${cosine(q, miss).toFixed(3)}`,
  );
  const [a, b] = [e.embedOne('我的'), e.embedOne('你的')];
  t.ok(cosine(a, b) < 0.2, `particles and pronouns carry little weight (我的 ~ 你的 ${cosine(a, b).toFixed(3)})`);
});

t.test('the injected tokens function supplies the word features', async (t) => {
  const seen: string[] = [];
  const synonyms = new HashEmbedder({
    tokens: (text) => {
      seen.push(text);
      return text.includes('lamp') || text.includes('light') ? ['LIGHTING'] : [];
    },
  });
  const plain = new HashEmbedder();
  await synonyms.embed(['The LAMP']);
  t.same(seen, ['the lamp'], 'it gets the lower-cased, NFKC-normalised text');
  const near = cosine(synonyms.embedOne('lamp'), synonyms.embedOne('light'));
  const before = cosine(plain.embedOne('lamp'), plain.embedOne('light'));
  t.ok(near > before + 0.3, `a shared token pulls texts together (${before.toFixed(3)} → ${near.toFixed(3)})`);
});

t.test('with jieba words as tokens the similarity probes still hold', async (t) => {
  const jieba = Jieba.withDict(dict);
  const e = new HashEmbedder({ tokens: (text) => jieba.cut(text, false).filter((w) => /[\p{L}\p{N}]/u.test(w)) });
  for (const [anchor, similar, unrelated] of SIMILARITY_PROBES) {
    const [a, s, u] = (await e.embed([anchor, similar, unrelated])) as [Float32Array, Float32Array, Float32Array];
    t.ok(cosine(a, s) > cosine(a, u), `${anchor}: ${cosine(a, s).toFixed(3)} > ${cosine(a, u).toFixed(3)}`);
  }
});

t.test('very long texts are cut, not a stall', async (t) => {
  const e = new HashEmbedder();
  const head = '客厅的灯开着 the living room lamp is on. '.repeat(800).slice(0, 20_000);
  const huge = head + 'tail words that come after the cut '.repeat(30_000);
  t.same(e.embedOne(huge), e.embedOne(head), 'only the first 20 000 characters count');
});

t.test('a large batch lets the event loop run between slices', async (t) => {
  const e = new HashEmbedder();
  const texts = Array.from({ length: 20_000 }, (_, i) => `the living room lamp is on and 客厅的灯开着 number ${i}`);
  let ticked = false;
  setImmediate(() => {
    ticked = true;
  });
  const tickedBeforeDone = await e.embed(texts).then(() => ticked);
  t.ok(tickedBeforeDone, 'a callback queued after the call ran before the batch finished');
});

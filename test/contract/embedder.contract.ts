/**
 * The contract every Embedder passes (src/embed/embedder.ts): vectors of `dim` floats, unit length,
 * the same vectors for the same text every time and in every instance, the zero vector for empty
 * text, a batch equal to its texts embedded one by one (in order), texts about the same thing closer
 * than unrelated ones (English and Chinese), cancellation by AbortSignal, and close().
 */
import t from 'tap';
import { cosine, type Embedder } from '../../src/embed/embedder.js';
import { describeError, isHomeAgentError } from '../../src/shared/errors.js';

export interface EmbedderContract {
  name: string;
  /** A fresh embedder; the suite closes it. Two calls must give the same vector space. */
  create(): Promise<Embedder>;
}

/** anchor, a text about the same thing, an unrelated text. */
export const SIMILARITY_PROBES: ReadonlyArray<readonly [string, string, string]> = [
  ['the living room lamp is on', 'turn on the lamp in the living room', 'my sister moved to shanghai last year'],
  ['客厅的灯开着', '把客厅的灯打开', '我妹妹去年搬到了上海'],
  ['will it rain tomorrow', 'tomorrow the weather is cold with rain', 'cook rice for dinner in the kitchen'],
];

/** Mixed lengths and scripts, unknown words included. */
export const BATCH_TEXTS: readonly string[] = [
  'hello',
  'the living room lamp is on and the kitchen light is off',
  '明天下雨吗',
  'Zyxquv plorbs 42 times',
  '我妹妹去年搬到了上海，她在那里做饭。',
  'a',
  'turn off all the lights in the living room and the kitchen, then tell me the weather for tomorrow',
];

function length(v: Float32Array): number {
  return Math.sqrt(cosine(v, v));
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  return undefined;
}

export function embedderContract(contract: EmbedderContract): void {
  t.test(`${contract.name}: embedder contract`, async (t) => {
    const embedder = await contract.create();
    t.teardown(() => embedder.close());

    t.test('dim and fingerprint', async (t) => {
      t.ok(Number.isInteger(embedder.dim) && embedder.dim > 0, `dim is a positive integer (${embedder.dim})`);
      t.match(embedder.fingerprint, /\S/, 'fingerprint is set');
      t.ok(embedder.fingerprint.includes(String(embedder.dim)), 'fingerprint names the dimension');
      const vectors = await embedder.embed(BATCH_TEXTS);
      t.equal(vectors.length, BATCH_TEXTS.length, 'one vector per text');
      t.ok(
        vectors.every((v) => v instanceof Float32Array && v.length === embedder.dim),
        'every vector is a Float32Array of dim floats',
      );
      t.ok(
        vectors.every((v) => v.every(Number.isFinite)),
        'all values are finite',
      );
      t.same(await embedder.embed([]), [], 'no texts, no vectors');
    });

    t.test('unit length', async (t) => {
      const vectors = await embedder.embed([...BATCH_TEXTS, ...SIMILARITY_PROBES.flat()]);
      for (const [i, v] of vectors.entries()) t.ok(Math.abs(length(v) - 1) < 1e-5, `vector ${i} has length 1 (${length(v)})`);
    });

    t.test('determinism: same text, same vector, in this and in a new instance', async (t) => {
      const first = await embedder.embed(BATCH_TEXTS);
      const again = await embedder.embed(BATCH_TEXTS);
      t.same(again, first, 'the same call twice gives identical vectors');
      const other = await contract.create();
      try {
        t.equal(other.fingerprint, embedder.fingerprint, 'a second instance has the same fingerprint');
        t.same(await other.embed(BATCH_TEXTS), first, 'and gives identical vectors');
      } finally {
        await other.close();
      }
    });

    t.test('empty text gives the zero vector', async (t) => {
      const [empty, blank, real] = await embedder.embed(['', '  \n\t ', 'hello']);
      t.ok(
        empty?.every((x) => x === 0),
        'empty string → zeros',
      );
      t.ok(
        blank?.every((x) => x === 0),
        'whitespace only → zeros',
      );
      t.ok(real && Math.abs(length(real) - 1) < 1e-5, 'a real text next to them is still a unit vector');
      t.equal(empty?.length, embedder.dim, 'the zero vector has dim floats');
    });

    t.test('a batch equals its texts embedded one by one, in order', async (t) => {
      const batch = await embedder.embed(BATCH_TEXTS);
      const reversed = await embedder.embed([...BATCH_TEXTS].reverse());
      for (const [i, text] of BATCH_TEXTS.entries()) {
        const [single] = await embedder.embed([text]);
        const b = batch[i] as Float32Array;
        const r = reversed[BATCH_TEXTS.length - 1 - i] as Float32Array;
        const diff = Math.max(...Array.from(b, (x, d) => Math.abs(x - (single?.[d] as number))));
        const diffReversed = Math.max(...Array.from(r, (x, d) => Math.abs(x - (single?.[d] as number))));
        t.ok(diff < 1e-5, `text ${i}: batch and single agree (max diff ${diff})`);
        t.ok(diffReversed < 1e-5, `text ${i}: reversed batch agrees too (max diff ${diffReversed})`);
      }
      t.ok(cosine(batch[0] as Float32Array, batch[1] as Float32Array) < 0.999, 'different texts give different vectors');
    });

    t.test('similar texts are closer than unrelated ones', async (t) => {
      for (const [anchor, similar, unrelated] of SIMILARITY_PROBES) {
        const [a, s, u] = (await embedder.embed([anchor, similar, unrelated])) as [Float32Array, Float32Array, Float32Array];
        const near = cosine(a, s);
        const far = cosine(a, u);
        t.ok(near > far, `"${anchor}": "${similar}" ${near.toFixed(3)} > "${unrelated}" ${far.toFixed(3)}`);
      }
    });

    t.test('an abort signal cancels', async (t) => {
      const before = new AbortController();
      before.abort();
      const early = await rejection(embedder.embed(['hello'], before.signal));
      t.ok(isHomeAgentError(early, 'HA_ERR_ABORTED'), `an aborted signal rejects at once (${describeError(early)})`);

      // Enough work that the call cannot finish before the abort lands.
      const many = Array.from({ length: 20_000 }, (_, i) => `${BATCH_TEXTS[i % BATCH_TEXTS.length]} ${i}`);
      const during = new AbortController();
      const call = embedder.embed(many, during.signal);
      during.abort(new Error('user cancelled'));
      const late = await rejection(call);
      t.ok(isHomeAgentError(late, 'HA_ERR_ABORTED'), `aborting a running call rejects it (${describeError(late)})`);

      const [after] = await embedder.embed(['hello']);
      const [reference] = await embedder.embed(['hello']);
      t.same(after, reference, 'the embedder still works after a cancelled call');
    });

    t.test('close()', async (t) => {
      const closing = await contract.create();
      const [v] = await closing.embed(['hello']);
      t.equal(v?.length, closing.dim, 'works before close');
      const many = Array.from({ length: 20_000 }, (_, i) => `text number ${i}`);
      const inFlight = closing.embed(many).then(
        () => 'resolved',
        (error: unknown) => (isHomeAgentError(error, 'HA_ERR_EMBED_CLOSED') ? 'closed' : describeError(error)),
      );
      await closing.close();
      t.match(await inFlight, /^(resolved|closed)$/, 'a call in flight at close settles (resolves or HA_ERR_EMBED_CLOSED)');
      const after = await rejection(closing.embed(['hello']));
      t.ok(isHomeAgentError(after, 'HA_ERR_EMBED_CLOSED'), `embed after close rejects (${describeError(after)})`);
      await closing.close();
      t.pass('close twice is fine');
    });
  });
}

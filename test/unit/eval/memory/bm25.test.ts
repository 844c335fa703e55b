import t from 'tap';
import { Bm25Memory, wordTokens } from '../../../../src/eval/memory/bm25.js';
import type { EvalEvent } from '../../../../src/eval/memory/eval-memory.js';

let next = 0;
function turn(text: string, speaker = 'S'): EvalEvent {
  next++;
  return { source_id: `c/D1:${next}`, dia_id: `D1:${next}`, conversation_id: 'c', session: 1, timestamp: next * 1000, speaker, text };
}

async function memoryWith(texts: string[], options: ConstructorParameters<typeof Bm25Memory>[0] = {}): Promise<Bm25Memory> {
  next = 0;
  const memory = new Bm25Memory(options);
  for (const text of texts) await memory.ingest(turn(text));
  await memory.settle();
  return memory;
}

t.test('the default tokens are lower-cased Unicode words and numbers', async (t) => {
  t.same(wordTokens("I'm 34! Café — naïve 上海, e-mail"), ['i', 'm', '34', 'café', 'naïve', '上海', 'e', 'mail']);
  t.same(wordTokens('  …  '), []);
});

t.test('scores follow Okapi BM25 with k1 1.2 and b 0.75', async (t) => {
  // Indexed as "S: …": lengths 3, 4 and 2 terms, average 3; "apple" is in 2 of 3 turns.
  const memory = await memoryWith(['apple banana', 'apple apple cherry', 'durian']);
  const idf = Math.log(1 + (3 - 2 + 0.5) / (2 + 0.5));
  const answer = await memory.recall('Apple?', 10);
  t.same(
    answer.map((item) => [item.text, item.sources]),
    [
      ['S: apple apple cherry', ['c/D1:2']],
      ['S: apple banana', ['c/D1:1']],
    ],
    'two occurrences outrank one; the turn without the term is not returned',
  );
  // tf 2 in a 4-term turn: norm = 1.2 × (0.25 + 0.75 × 4/3) = 1.5; tf 1 in a 3-term turn: norm = 1.2.
  t.ok(Math.abs((answer[0]?.score ?? 0) - (idf * 2 * 2.2) / (2 + 1.5)) < 1e-12, 'score of the two-occurrence turn');
  t.ok(Math.abs((answer[1]?.score ?? 0) - (idf * 1 * 2.2) / (1 + 1.2)) < 1e-12, 'score of the one-occurrence turn');
  t.same(
    (await memory.recall('apple apple', 10)).map((item) => item.score),
    answer.map((item) => item.score),
    'a repeated query term counts once',
  );
  t.same(
    (await memory.recall('apple', 1)).map((item) => item.text),
    ['S: apple apple cherry'],
    'cut to k',
  );
});

t.test('k1 and b are options', async (t) => {
  // b = 0 ignores length; k1 = 0 ignores frequency beyond presence: both turns then score idf.
  const memory = await memoryWith(['apple banana', 'apple apple cherry', 'durian'], { k1: 0, b: 0 });
  const scores = (await memory.recall('apple', 10)).map((item) => item.score);
  const idf = Math.log(1 + 1.5 / 2.5);
  t.same(scores, [idf, idf]);
});

t.test('equal scores keep ingestion order, the speaker is part of the turn, and nothing matches nothing', async (t) => {
  const memory = await memoryWith(['same words', 'same words', 'other']);
  t.same(
    (await memory.recall('words', 10)).map((item) => item.sources[0]),
    ['c/D1:1', 'c/D1:2'],
  );
  t.same(await memory.recall('unrelated', 10), []);
  t.same(await memory.recall('', 10), []);
  t.same(await memory.recall('words', 0), []);
  const speakers = new Bm25Memory();
  await speakers.ingest(turn('hello there', 'Caroline'));
  await speakers.ingest(turn('hello there', 'Melanie'));
  t.same(
    (await speakers.recall('What did Melanie say?', 1)).map((item) => item.text),
    ['Melanie: hello there'],
  );
});

t.test('an injected tokenizer is used for turns and queries', async (t) => {
  // One Unicode "word" per run of Han characters: the default cannot find 上海 inside 我住在上海.
  const plain = await memoryWith(['我住在上海', '我喜欢猫']);
  t.same(await plain.recall('上海', 10), []);
  const characters = await memoryWith(['我住在上海', '我喜欢猫'], { tokens: (text) => [...text.replace(/\s|:/g, '')] });
  t.same(
    (await characters.recall('上海', 10)).map((item) => item.text),
    ['S: 我住在上海'],
  );
});

t.test('an empty or closed memory recalls nothing', async (t) => {
  const memory = new Bm25Memory();
  t.same(await memory.recall('anything', 5), []);
  await memory.ingest(turn('anything at all'));
  t.equal((await memory.recall('anything', 5)).length, 1);
  await memory.close();
  t.same(await memory.recall('anything', 5), []);
});

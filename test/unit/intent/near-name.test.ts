import t from 'tap';
import { bagDistance, CharacterBag, EditDistancePattern, editDistance } from '../../../src/intent/edit-distance.js';
import { NearNameIndex, wordSimilarity } from '../../../src/intent/near-name.js';
import { isHomeAgentError } from '../../../src/shared/errors.js';

const NAMES = [
  { value: 'Kitchen Light', phrases: ['Kitchen Light', '厨房灯'] },
  { value: 'Living Room Lamp', phrases: ['Living Room Lamp', 'lamp living room', '客厅台灯'] },
  { value: 'Bedroom Fan', phrases: ['Bedroom Fan', '卧室风扇'] },
  { value: 'Desk Lamp', phrases: ['Desk Lamp'] },
  { value: 'Desk Lamb', phrases: ['Desk Lamb'] },
];

/** A small deterministic generator, so the property checks below are the same on every run. */
function randomTexts(seed: number, count: number): string[] {
  let state = seed;
  const next = (): number => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  const alphabet = 'abcde 1厨灯';
  return Array.from({ length: count }, () =>
    Array.from({ length: Math.floor(next() * 40) }, () => alphabet[Math.floor(next() * alphabet.length)]).join(''),
  );
}

t.test('editDistance: one edit each for insertion, deletion, substitution and a swap of neighbours', async (t) => {
  t.equal(editDistance('kitchen light', 'kitchen light'), 0);
  t.equal(editDistance('kitchen lihgt', 'kitchen light'), 1, 'swap');
  t.equal(editDistance('kitchn light', 'kitchen light'), 1, 'missing character');
  t.equal(editDistance('kitchen lights', 'kitchen light'), 1, 'extra character');
  t.equal(editDistance('厨房等', '厨房灯'), 1, 'wrong character');
  t.equal(editDistance('', 'lamp'), 4);
  t.equal(editDistance('lamp', ''), 4);
  t.equal(editDistance('abc', 'xyz'), 3);
  t.ok(editDistance('garage', 'kitchen light', 2) > 2, 'a bound gives up early with a number above it');
  t.equal(editDistance('kitchen lihgt', 'kitchen light', 2), 1, 'within the bound: the distance itself');
});

t.test('EditDistancePattern gives editDistance, and bounded answers agree on which side of the bound they are', async (t) => {
  const texts = randomTexts(7, 120);
  let compared = 0;
  for (let i = 0; i + 1 < texts.length; i += 2) {
    const a = texts[i] as string;
    const b = texts[i + 1] as string;
    const exact = editDistance(a, b);
    t.equal(new EditDistancePattern(a).distanceTo(b), exact, `${JSON.stringify(a)} ~ ${JSON.stringify(b)}`);
    t.equal(new EditDistancePattern(b).distanceTo(a), exact, 'symmetric');
    const bound = i % 9;
    const bounded = new EditDistancePattern(a).distanceTo(b, bound);
    t.ok(exact <= bound ? bounded === exact : bounded > bound, `bounded at ${bound}`);
    compared += 1;
  }
  t.equal(compared, 60);
  t.equal(new EditDistancePattern('x'.repeat(40)).distanceTo('x'.repeat(38)), 2, 'past 31 characters: the plain table');
});

t.test('bagDistance is a lower bound of the edit distance; CharacterBag agrees with it', async (t) => {
  const texts = randomTexts(11, 80);
  for (let i = 0; i + 1 < texts.length; i += 2) {
    const a = texts[i] as string;
    const b = texts[i + 1] as string;
    t.ok(bagDistance(a, b) <= editDistance(a, b), 'lower bound');
    t.equal(new CharacterBag(a).distanceTo(b), bagDistance(a, b), 'same figure one-to-many');
  }
  t.equal(bagDistance('kitchen lihgt', 'kitchen light'), 0, 'a swap keeps the letters');
  const older = new CharacterBag('abc');
  new CharacterBag('xyz');
  t.throws(() => older.distanceTo('abd'), { code: 'HA_ERR_INTERNAL' }, 'a replaced bag refuses to answer');
});

t.test('wordSimilarity pairs words in any order and counts missing words', async (t) => {
  t.equal(wordSimilarity(['living', 'room', 'lamp'], ['lamp', 'living', 'room']), 1);
  t.ok(wordSimilarity(['garage'], ['garage', 'door']) < 0.65, 'half a name is not the name');
  t.equal(wordSimilarity([], []), 1);
});

t.test('resolve: misspelt, missing a character, or an alias in another word order', async (t) => {
  const index = new NearNameIndex(NAMES);
  const lihgt = index.resolve('kitchen lihgt', 0.6);
  t.equal(lihgt?.value, 'Kitchen Light');
  t.ok((lihgt?.similarity ?? 0) > 0.9 && (lihgt?.similarity ?? 1) < 1, `similarity ${lihgt?.similarity}`);
  t.equal(index.resolve('Bedrom Fan', 0.6)?.value, 'Bedroom Fan', 'missing character, any case');
  const reordered = index.resolve('room living lamp', 0.6);
  t.equal(reordered?.value, 'Living Room Lamp', 'words of a name in another order');
  t.ok((reordered?.similarity ?? 1) < 1, 'but not the same text');
  t.equal(index.resolve('kitchen light', 0.6)?.similarity, 1, 'the same text is 1');
});

t.test('resolve: nothing for an unrelated word, a part of a name, or below minSimilarity', async (t) => {
  const index = new NearNameIndex(NAMES);
  t.equal(index.resolve('garage', 0.6), undefined);
  t.equal(index.resolve('kitchen', 0.6), undefined, 'half a name');
  t.equal(index.resolve('', 0.6), undefined);
  t.equal(index.resolve('!!', 0.6), undefined);
  t.equal(index.resolve('kitchen lihgt', 0.95), undefined, 'above its similarity');
  const short = new NearNameIndex([
    { value: 'Kit', phrases: ['Kit'] },
    { value: 'Hall', phrases: ['Hall'] },
  ]);
  t.equal(short.resolve('it', 0.6), undefined, 'a short Latin word is near too much to count');
  t.equal(short.resolve('all', 0.6), undefined);
  t.equal(short.resolve('kits', 0.6)?.value, 'Kit', 'four letters may');
  t.same(short.resolve('Kit', 0.6), { value: 'Kit', phrase: 'kit', similarity: 1 }, 'said exactly, a short name counts');
});

t.test('resolve: two names as close as each other give nothing', async (t) => {
  const index = new NearNameIndex(NAMES);
  t.equal(index.resolve('desk lamx', 0.6), undefined, 'as close to Desk Lamp as to Desk Lamb');
  t.equal(index.resolve('desk lamp', 0.6)?.value, 'Desk Lamp', 'said exactly, it is clear');
  // One edit apart is clear even when an edit is worth less than the margin (long names).
  const numbered = new NearNameIndex([
    { value: 'Master Bedroom Light 1', phrases: ['Master Bedroom Light 1'] },
    { value: 'Master Bedroom Light 2', phrases: ['Master Bedroom Light 2'] },
  ]);
  t.equal(numbered.resolve('master bedrom light 1', 0.6)?.value, 'Master Bedroom Light 1');
  t.equal(numbered.resolve('master bedrom light', 0.6), undefined, 'no number: either light');
});

t.test('Chinese: character edits with jieba words', async (t) => {
  const index = new NearNameIndex(NAMES);
  const lamp = index.resolve('厨房等', 0.6);
  t.equal(lamp?.value, 'Kitchen Light');
  t.ok((lamp?.similarity ?? 0) >= 0.6 && (lamp?.similarity ?? 1) < 1);
  t.equal(index.resolve('卧室风善', 0.6)?.value, 'Bedroom Fan');
  t.equal(index.resolve('车库', 0.6), undefined, 'an unrelated place');
  // Whole-text edits see nothing alike here; jieba's words (台灯 + 客厅) in another order do.
  t.equal(editDistance('台灯客厅', '客厅台灯'), 4);
  const reordered = index.resolve('台灯客厅', 0.6);
  t.equal(reordered?.value, 'Living Room Lamp');
  t.ok((reordered?.similarity ?? 1) < 1);
});

t.test('the word splitter is injectable and used for Chinese', async (t) => {
  const seen: string[] = [];
  const index = new NearNameIndex(NAMES, (text) => {
    seen.push(text);
    return [...text];
  });
  t.equal(index.resolve('台灯客厅', 0.6)?.value, 'Living Room Lamp', 'words in another order');
  t.ok(seen.includes('台灯客厅'), 'the said text was split by the injected splitter');
});

t.test('a registered phrase that normalises to nothing is skipped, not matched', async (t) => {
  const index = new NearNameIndex([{ value: 'Odd', phrases: ['!!!'] }, ...NAMES]);
  t.equal(index.resolve('kitchen lihgt', 0.6)?.value, 'Kitchen Light');
  t.notOk(isHomeAgentError(index.resolve('!', 0.6)), 'nothing thrown');
});

/** Intake rules: location facts by rule in both languages, names without discourse words, dates from time words. */
import t from 'tap';
import { cleanName, LOCATION_RELATION, locationFact, normaliseRelation } from '../../../src/memory/fact-intake.js';
import { resolveTimeWords } from '../../../src/memory/time-words.js';

t.test('where a thing is, read by rule', async (t) => {
  t.match(locationFact('Actually the torch is in the cellar now.'), { subject: 'torch', relation: LOCATION_RELATION, object: 'cellar' });
  t.match(locationFact('The spare key is under the blue flower pot.'), { subject: 'spare key', object: 'blue flower pot' });
  t.match(locationFact('钥匙现在放抽屉里了'), { subject: '钥匙', object: '抽屉' }, '现在 is no part of the name');
  t.match(locationFact('相册现在放到厨房抽屉了。'), { subject: '相册', object: '厨房抽屉' });
  t.match(locationFact('备用钥匙放在蓝色花盆下面'), { subject: '备用钥匙', object: '蓝色花盆' });
  t.equal(locationFact('How are you today?'), undefined);
  t.equal(locationFact('今天天气怎么样？'), undefined);
  t.equal(normaliseRelation('放在'), LOCATION_RELATION);
  t.equal(normaliseRelation('likes'), 'likes');
  t.equal(cleanName('Actually the key'), 'key');
  t.equal(cleanName('其实钥匙'), '钥匙');
});

t.test('time words resolve against when they were said', async (t) => {
  const friday = Date.UTC(2024, 4, 3, 15, 0); // Friday 3 May 2024
  const day = (y: number, m: number, d: number) => Date.UTC(y, m, d);
  t.equal(resolveTimeWords('The dentist appointment is next Tuesday.', friday), day(2024, 4, 7));
  t.equal(resolveTimeWords('牙医预约在下周二。', friday), day(2024, 4, 7));
  t.equal(resolveTimeWords('Piano lesson tomorrow', friday), day(2024, 4, 4));
  t.equal(resolveTimeWords('明天理发', friday), day(2024, 4, 4));
  t.equal(resolveTimeWords('the match is on Friday', friday), day(2024, 4, 10), 'a bare weekday is the next one');
  t.equal(resolveTimeWords('3天后交房租', friday), day(2024, 4, 6));
  t.equal(resolveTimeWords('The key is in the drawer', friday), undefined);
});

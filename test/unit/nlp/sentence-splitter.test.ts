import t from 'tap';
import { splitSentences } from '../../../src/nlp/sentence-splitter.js';

t.test('splits on 。！？；.!? and newlines, keeping each closing mark', async (t) => {
  t.same(splitSentences('我住在杭州。你呢？太好了！好的；再见'), ['我住在杭州。', '你呢？', '太好了！', '好的；', '再见']);
  t.same(splitSentences('I live here. Do you? Great!'), ['I live here.', 'Do you?', 'Great!']);
  t.same(splitSentences('first line\nsecond line\r\n\n third '), ['first line', 'second line', 'third']);
});

t.test('trims and drops pieces without letters or digits', async (t) => {
  t.same(splitSentences('  你好。  。。 !! \n\n'), ['你好。']);
  t.same(splitSentences(''), []);
  t.same(splitSentences('...\n!!!'), []);
});

t.test('decimals, versions, domains, abbreviations and initials stay whole', async (t) => {
  t.same(splitSentences('The sensor reads 21.5 degrees. Firmware v1.2.3 is installed.'), [
    'The sensor reads 21.5 degrees.',
    'Firmware v1.2.3 is installed.',
  ]);
  t.same(splitSentences('我的版本是3.5。路由器地址是192.168.1.1。'), ['我的版本是3.5。', '路由器地址是192.168.1.1。']);
  t.same(splitSentences('Visit example.com today. My teacher is Mrs. Lee. J. Smith called.'), [
    'Visit example.com today.',
    'My teacher is Mrs. Lee.',
    'J. Smith called.',
  ]);
});

t.test('runs of marks and closing quotes belong to the sentence they end', async (t) => {
  t.same(splitSentences('真的吗？！他说：“好的。”然后走了。'), ['真的吗？！', '他说：“好的。”', '然后走了。']);
  t.same(splitSentences('Wait... what?! OK.'), ['Wait...', 'what?!', 'OK.']);
  t.same(
    splitSentences('我住在杭州.我喜欢喝茶'),
    ['我住在杭州.', '我喜欢喝茶'],
    'a half-width period before a Han character ends a sentence',
  );
});

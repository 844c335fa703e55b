import t from 'tap';
import { plainText, preview, SNIPPET_CHARS, snippet } from '../../../src/knowledge/knowledge-text.js';

t.test('plain text: markdown marks removed, words kept', async (t) => {
  const md = [
    '\uFEFF# Washing machine',
    '',
    '> Read this **first**.',
    '',
    '1. Open the [door](https://example.com/door).',
    '- [x] Sort the `whites`',
    '* ~~old step~~',
    '',
    '```sh',
    'echo code stays as words',
    '```',
    '| Program | Temp |',
    '| --- | ---: |',
    '| Cotton | 60 |',
    '![the panel](panel.png) <b>bold</b> <!-- a comment -->',
    '---',
    '洗衣机：先放衣服。',
  ].join('\n');
  t.equal(
    plainText(md),
    'Washing machine Read this first. Open the door. Sort the whites old step echo code stays as words Program Temp Cotton 60 the panel bold 洗衣机：先放衣服。',
  );
  t.equal(plainText('snake_case_name stays'), 'snake_case_name stays', 'underscores inside words are not emphasis');
});

t.test('preview: the first characters, an ellipsis when cut, never a split surrogate pair', async (t) => {
  t.equal(preview('short', 120), 'short');
  t.equal(preview('abcdefghij', 5), 'abcd…');
  t.equal(preview('番茄汤要煮二十分钟', 4), '番茄汤…');
  t.equal(preview('😀😀😀😀', 3), '😀😀…');
  t.equal(Array.from(preview('x'.repeat(500))).length, 120, 'default 120');
});

t.test('snippet: around the first matching term', async (t) => {
  const text = `${'a'.repeat(300)} the needle is here ${'b'.repeat(300)}`;
  const s = snippet(text, ['needl']);
  t.match(s, /^….*the needle is here.*…$/);
  t.ok(Array.from(s).length <= SNIPPET_CHARS + 2);
  t.equal(snippet(text, ['absent']), preview(text, SNIPPET_CHARS), 'no term found: the beginning');
  t.equal(snippet('short text', ['text']), 'short text');
  const zh = `${'前言'.repeat(100)}热水器的点火按钮是红色的${'后记'.repeat(100)}`;
  t.match(snippet(zh, ['点火']), /热水器的点火按钮/);
  const start = snippet(`needle ${'c'.repeat(400)}`, ['needle']);
  t.match(start, /^needle c+…$/, 'no leading ellipsis at the start');
});

import t from 'tap';
import {
  categoryPath,
  entryName,
  isCanonicalSegment,
  isInside,
  MAX_DEPTH,
  MAX_SEGMENT_BYTES,
  MAX_SEGMENT_CHARS,
  quoted,
} from '../../../src/knowledge/knowledge-paths.js';
import { expectError } from '../fixtures/support.js';

t.test('names are sanitised: lower case, spaces and backslashes to _, trimmed, Unicode kept', async (t) => {
  t.same(entryName('  Recipes/Soup/Tomato  Soup '), {
    name: 'recipes/soup/tomato_soup',
    segments: ['recipes', 'soup', 'tomato_soup'],
    category: 'recipes/soup',
    leaf: 'tomato_soup',
  });
  t.same(entryName('菜谱/番茄汤').name, '菜谱/番茄汤');
  t.same(entryName('菜谱 / 番茄 汤').name, '菜谱/番茄_汤', 'segments trimmed, inner spaces to _');
  t.same(entryName('notes\\wifi').name, 'notes_wifi', 'a backslash is not a separator');
  t.same(entryName('Caf\u0065\u0301/Menu').name, 'caf\u00e9/menu', 'Unicode is normalised to NFC');
  t.same(entryName('top').category, '', 'a leaf at the top has no category');
  t.equal(categoryPath(''), '');
  t.equal(categoryPath('/'), '');
  t.equal(categoryPath('Tech/Go/'), 'tech/go', 'a trailing / names the category');
});

t.test('refused: traversal, absolute paths, empty levels, control characters, hidden and reserved names, too long', async (t) => {
  const refused: Array<[string, RegExp]> = [
    ['', /empty/],
    ['   ', /empty/],
    ['../etc/passwd', /"\.\." levels/],
    ['recipes/../../x', /"\.\." levels/],
    ['recipes/./soup', /"\." levels/],
    ['/etc/passwd', /absolute/],
    ['C:\\Windows\\x', /absolute/],
    ['\\\\server\\share', /absolute/],
    ['recipes//soup', /empty level/],
    ['recipes/soup/', /empty level/],
    ['recipes/ /soup', /empty level/],
    ['bad\u0000name', /control/],
    ['bad\nname', /control/],
    ['bad\u001bname', /control/],
    ['bad\u2028name', /control/],
    ['.hidden/x', /starts with "\."/],
    ['recipes/content.md', /entry's own file/],
    ['recipes/media.json', /entry's own file/],
    [`a/${'x'.repeat(MAX_SEGMENT_CHARS + 1)}`, /longer than 100 characters/],
    [`a/${'汤'.repeat(86)}`, /longer than 255 bytes/],
    [Array.from({ length: MAX_DEPTH + 1 }, (_, i) => `l${i}`).join('/'), /at most 8/],
  ];
  for (const [input, reason] of refused) {
    const error = expectError(t, () => entryName(input), 'HA_ERR_KNOWLEDGE_NAME');
    t.match(error.message, reason, quoted(input));
  }
  t.equal(entryName(`a/${'x'.repeat(MAX_SEGMENT_CHARS)}`).leaf.length, MAX_SEGMENT_CHARS, 'exactly at the limit is fine');
  t.equal(entryName(`${'汤'.repeat(85)}`).leaf.length, 85, `85 CJK characters are ${85 * 3} bytes ≤ ${MAX_SEGMENT_BYTES}`);
  t.equal(entryName(Array.from({ length: MAX_DEPTH }, (_, i) => `l${i}`).join('/')).segments.length, MAX_DEPTH);
  expectError(t, () => categoryPath('../x'), 'HA_ERR_KNOWLEDGE_NAME');
  expectError(t, () => categoryPath('/etc'), 'HA_ERR_KNOWLEDGE_NAME');
});

t.test('canonical segments and containment', async (t) => {
  t.ok(isCanonicalSegment('tomato_soup'));
  t.ok(isCanonicalSegment('番茄汤'));
  t.notOk(isCanonicalSegment('Tomato Soup'));
  t.notOk(isCanonicalSegment('a/b'));
  t.notOk(isCanonicalSegment('..'));
  t.ok(isInside('/data/knowledge', '/data/knowledge'));
  t.ok(isInside('/data/knowledge', '/data/knowledge/a/b'));
  t.ok(isInside('/data/knowledge', '/data/knowledge/..a'), 'a name starting with .. is still inside');
  t.notOk(isInside('/data/knowledge', '/data/knowledge2'));
  t.notOk(isInside('/data/knowledge', '/data'));
  t.notOk(isInside('/data/knowledge', '/etc/passwd'));
});

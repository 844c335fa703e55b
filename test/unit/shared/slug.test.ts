import t from 'tap';
import { slugify } from '../../../src/shared/slug.js';

t.test('slugify: lowercase Latin letters, digits and _, at most 64 characters', async (t) => {
  t.equal(slugify('Living room'), 'living_room');
  t.equal(slugify('Küche/Decke Lampe'), 'kuche_decke_lampe', 'accents dropped, not turned into _');
  t.equal(slugify("  Kid's Room #2 "), 'kid_s_room_2');
  t.equal(slugify('  --  '), '', 'nothing left: empty, the caller picks a fallback');
  t.equal(slugify('客厅'), '');
  t.equal(slugify('x'.repeat(100)).length, 64);
  t.equal(slugify(`${'a'.repeat(63)} b`), 'a'.repeat(63), 'no trailing _ after the cut');
  t.equal(slugify('Front door', 5), 'front');
});

/**
 * `Living room` → `living_room`, `Küche/Süd` → `kuche_sud`: lowercase Latin letters, digits and
 * `_`, at most 64 characters (an entity object id's limit); empty when nothing is left (厨房), so
 * each caller picks its own fallback. Accents come apart under NFKD as combining marks and are
 * dropped, not turned into `_`.
 */
export function slugify(text: string, maxLength = 64): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, maxLength)
    .replace(/_+$/, '');
}

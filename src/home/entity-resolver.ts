/**
 * Finds the entity a person or the model means: "switch.kitchen_light", "Kitchen light", "the
 * ceiling light in the kitchen", "厨房灯", "厨房的灯". Pure functions over a snapshot of the
 * registered entities and the areas, so the rules can be tested without a registry.
 *
 * Stages, first hit wins: the exact entity id; a name or alias compared without case, spaces and
 * punctuation; an area (its id, name or alias) joined with a name ("kitchen light", "light in the
 * kitchen", "厨房灯", "厨房的灯"); the object id with spaces for underscores. Several hits in one
 * stage are ambiguous, unless exactly one of them lies in an area the reference names.
 */
import { createHash } from 'node:crypto';
import { slugify } from '../shared/slug.js';
import type { Area, EntityInfo } from './types.js';

/** What a reference resolved to: one entity, or the candidates (none: not found; several: ambiguous). */
export type Resolution = { entity: EntityInfo; candidates: [EntityInfo] } | { entity: undefined; candidates: EntityInfo[] };

/** Lowercase letters and digits of any script only: "Kitchen-Light " and "kitchen light" compare equal. */
export function normalizeName(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '');
}

/**
 * The id an unconfigured area gets from its name: `Living room` → `living_room`. A name without
 * Latin letters or digits (厨房) gets `area_` and a short hash of the name, stable across restarts.
 */
export function areaSlug(name: string): string {
  const slug = slugify(name);
  if (slug !== '') return slug;
  return `area_${createHash('sha256').update(name.normalize('NFKC')).digest('hex').slice(0, 10)}`;
}

/** The area an id, name or alias denotes (case-, space- and punctuation-insensitive). */
export function findArea(reference: string, areas: readonly Area[]): Area | undefined {
  const exact = areas.find((a) => a.id === reference);
  if (exact !== undefined) return exact;
  const key = normalizeName(reference);
  if (key === '') return undefined;
  return areas.find((a) => areaKeys(a).includes(key));
}

// "the light in the kitchen", "lamp in bedroom".
const IN_AREA = /^(.+?)\s+in(?:\s+the)?\s+(.+)$/i;
const LEADING_THE = /^the\s+/i;

export function resolveEntity(reference: string, entities: readonly EntityInfo[], areas: readonly Area[]): Resolution {
  const trimmed = reference.trim();
  const id = trimmed.toLowerCase();
  const byId = entities.find((e) => e.entity_id === id);
  if (byId !== undefined) return one(byId);

  const phrase = trimmed.replace(LEADING_THE, '');
  const key = normalizeName(phrase);
  if (key === '') return none();
  const areaById = new Map(areas.map((a) => [a.id, a]));
  const inArea = IN_AREA.exec(phrase);
  const named = namedAreas(key, inArea?.[2], areas);

  const byName = entities.filter((e) => nameKeys(e).includes(key));
  if (byName.length > 0) return decide(byName, named);

  const byArea = entities.filter((e) => {
    const area = e.area === null ? undefined : areaById.get(e.area);
    if (area === undefined) return false;
    const names = nameKeys(e);
    const places = areaKeys(area);
    if (places.some((a) => names.some((n) => key === a + n || key === `${a}的${n}`))) return true;
    if (inArea === null) return false;
    const [, what = '', where = ''] = inArea;
    return names.includes(normalizeName(what)) && places.includes(normalizeName(where));
  });
  if (byArea.length > 0) return decide(byArea, named);

  const byObjectId = entities.filter((e) => normalizeName(objectId(e)) === key);
  return decide(byObjectId, named);
}

function decide(matches: EntityInfo[], named: ReadonlySet<string>): Resolution {
  const [first] = matches;
  if (matches.length === 1 && first !== undefined) return one(first);
  const inNamed = matches.filter((e) => e.area !== null && named.has(e.area));
  const [only] = inNamed;
  if (inNamed.length === 1 && only !== undefined) return one(only);
  return { entity: undefined, candidates: matches };
}

/** Ids of the areas a reference names: at its start ("kitchen light", "厨房灯") or after "in (the)". */
function namedAreas(key: string, where: string | undefined, areas: readonly Area[]): Set<string> {
  const whereKey = where === undefined ? undefined : normalizeName(where);
  const ids = new Set<string>();
  for (const area of areas) {
    if (areaKeys(area).some((a) => (a !== key && key.startsWith(a)) || a === whereKey)) ids.add(area.id);
  }
  return ids;
}

function nameKeys(entity: EntityInfo): string[] {
  return [entity.name, ...entity.aliases].map(normalizeName).filter((k) => k !== '');
}

function areaKeys(area: Area): string[] {
  return [area.id, area.name, ...area.aliases].map(normalizeName).filter((k) => k !== '');
}

function objectId(entity: EntityInfo): string {
  return entity.entity_id.slice(entity.entity_id.indexOf('.') + 1);
}

function one(entity: EntityInfo): Resolution {
  return { entity, candidates: [entity] };
}

function none(): Resolution {
  return { entity: undefined, candidates: [] };
}

/**
 * Which entities a recognised intent is about: the slots name, area, floor, domain and
 * device_class narrowed over a snapshot of the registry. The recogniser returns names and areas as
 * registered (values, not what was said), so this compares exactly; `name: all` means "every one".
 * Pure, so the rules are tested without a registry.
 */
import { findArea } from '../home/entity-resolver.js';
import type { Area, EntityInfo } from '../home/types.js';
import type { SlotValue } from './template-grammar.js';

export interface TargetQuery {
  name?: string;
  area?: string;
  floor?: string;
  domain?: string;
  device_class?: string;
}

export type TargetResult =
  | { kind: 'found'; entities: EntityInfo[]; area?: Area }
  /** Nothing fits; `area` is set when the place exists but has no such device. */
  | { kind: 'none'; area?: Area }
  /** A floor was named that no configured area is on. */
  | { kind: 'floor_unknown'; floor: string };

export const ALL_NAMES = 'all';

export function targetQuery(slots: Readonly<Record<string, SlotValue>>): TargetQuery {
  const text = (key: string): string | undefined => {
    const value = slots[key];
    return typeof value === 'string' && value !== '' ? value : undefined;
  };
  const query: TargetQuery = {};
  for (const key of ['name', 'area', 'floor', 'domain', 'device_class'] as const) {
    const value = text(key);
    if (value !== undefined) query[key] = value;
  }
  return query;
}

export function findTargets(query: TargetQuery, entities: readonly EntityInfo[], areas: readonly Area[]): TargetResult {
  // A floor stands for its areas (core.home.areas[].floor); an area said as well narrows it to that one.
  const floorAreas = query.floor === undefined ? undefined : new Set(areas.filter((a) => a.floor === query.floor).map((a) => a.id));
  if (query.floor !== undefined && floorAreas?.size === 0) return { kind: 'floor_unknown', floor: query.floor };
  // The recogniser gives area names; the place a device is configured in may be an id or an alias.
  const area = query.area === undefined ? undefined : findArea(query.area, areas);
  if (query.area !== undefined && area === undefined) return { kind: 'none' };
  const named = query.name !== undefined && query.name !== ALL_NAMES ? query.name : undefined;
  let found = entities.filter(
    (entity) =>
      (named === undefined || entity.name === named || entity.aliases.includes(named)) &&
      (query.domain === undefined || entity.domain === query.domain) &&
      (query.device_class === undefined || entity.device_class === query.device_class),
  );
  if (floorAreas !== undefined && area === undefined) found = found.filter((entity) => entity.area !== null && floorAreas.has(entity.area));
  // A named device outside the place said is still the device meant ("the kitchen lamp" kept in the hall),
  // unless the name exists in that place too.
  if (area !== undefined) {
    const here = found.filter((entity) => entity.area === area.id);
    found = here.length > 0 || named === undefined ? here : found;
  }
  if (found.length === 0) return area === undefined ? { kind: 'none' } : { kind: 'none', area };
  return area === undefined ? { kind: 'found', entities: found } : { kind: 'found', entities: found, area };
}

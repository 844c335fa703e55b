/**
 * Scoring by effect: two readings of a sentence that would do the same thing in the test home are
 * the same answer. Test files state one way of writing an intent, and the engine may write the same
 * act another way: "close the garage" expected as {domain: cover, device_class: garage} and read as
 * {name: Double Garage Door} moves the one garage door either way; "timer for 90 minutes" is
 * {minutes: 90} or {hours: 1, minutes: 30}; adding to the shopping list is HassShoppingListAddItem
 * or HassListAddItem on the list of that name. Targets are resolved with the rules the executor
 * uses (intent-targets.ts) over the fixture home, so equal means "the same entities", never "alike".
 */
import type { Area, EntityInfo } from '../../home/types.js';
import { findTargets, type TargetQuery } from '../../intent/intent-targets.js';
import type { IntentHome } from '../../intent/recognizer.js';
import { SHOPPING } from '../../intent/understander.js';
import type { SlotValue } from './intent-tests.js';

/** The fixture home in the registry's terms, built once per scored run. */
export interface EffectHome {
  entities: EntityInfo[];
  areas: Area[];
  /** The list the shopping-list intents act on: the home's list called so, else "Shopping List". */
  shoppingList: string;
}

export function effectHome(home: IntentHome): EffectHome {
  const areas: Area[] = home.areas.map((a) => ({
    id: a.name,
    name: a.name,
    aliases: [...(a.aliases ?? [])],
    ...(a.floor !== undefined && { floor: a.floor }),
  }));
  const entities: EntityInfo[] = home.entities.map((e, index) => ({
    entity_id: `${e.domain}.fixture_${index}`,
    domain: e.domain as EntityInfo['domain'],
    name: e.name,
    aliases: [...(e.aliases ?? [])],
    area: e.area ?? null,
    device: null,
    state: null,
    attributes: {},
    unit: null,
    device_class: e.device_class ?? null,
    last_changed: 0,
    last_updated: 0,
    owner: 'fixture',
    critical: false,
    services: [],
    entity_category: null,
    state_class: null,
  }));
  const shopping = home.entities.find(
    (e) => e.domain === 'todo' && [e.name, ...(e.aliases ?? [])].some((n) => SHOPPING.test(n.toLowerCase())),
  );
  return { entities, areas, shoppingList: shopping?.name ?? SHOPPING_LIST_NAME };
}

const TARGET_KEYS = ['name', 'area', 'floor', 'domain', 'device_class'] as const;
const DURATION_KEYS: Readonly<Record<string, number>> = { hours: 3600, minutes: 60, seconds: 1 };
/** What the executor does with the shopping-list intents: the generic list intent on that list. */
const SHOPPING_LIST_INTENTS: Readonly<Record<string, string>> = {
  HassShoppingListAddItem: 'HassListAddItem',
  HassShoppingListCompleteItem: 'HassListCompleteItem',
};
const SHOPPING_LIST_NAME = 'Shopping List';

type Slots = Readonly<Record<string, unknown>>;

/**
 * The intent in one canonical writing: shopping-list intents as list intents on the shopping list,
 * and hours/minutes/seconds as one `duration_s` (only when a duration was said).
 */
export function canonicalIntent(
  name: string,
  slots: Slots,
  shoppingList = SHOPPING_LIST_NAME,
): { name: string; slots: Record<string, unknown> } {
  const out: Record<string, unknown> = { ...slots };
  let canonical = name;
  const generic = SHOPPING_LIST_INTENTS[name];
  if (generic !== undefined) {
    canonical = generic;
    if (out.name === undefined) out.name = shoppingList;
  }
  const durationKeys = Object.keys(DURATION_KEYS).filter((key) => out[key] !== undefined);
  if (durationKeys.length > 0 && durationKeys.every((key) => Number.isFinite(Number(out[key])))) {
    out.duration_s = durationKeys.reduce((sum, key) => sum + Number(out[key]) * (DURATION_KEYS[key] ?? 0), 0);
    for (const key of durationKeys) delete out[key];
  }
  return { name: canonical, slots: out };
}

export function isTargetKey(key: string): boolean {
  return (TARGET_KEYS as readonly string[]).includes(key);
}

/** Every query the slots can mean (an expected list is "any one of these"), at most a few dozen. */
function queries(slots: Slots): TargetQuery[] {
  let out: TargetQuery[] = [{}];
  for (const key of TARGET_KEYS) {
    const value = slots[key];
    if (value === undefined) continue;
    const options = (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string' && v !== '');
    if (options.length === 0) continue;
    out = out.flatMap((q) => options.map((option) => ({ ...q, [key]: option })));
  }
  return out;
}

/** The registered spelling of a name said in another case ("kitchen light"), as the executor receives it. */
function registeredName(query: TargetQuery, home: EffectHome): TargetQuery {
  if (query.name === undefined) return query;
  const said = query.name.toLowerCase();
  const entity = home.entities.find((e) => [e.name, ...e.aliases].some((n) => n.toLowerCase() === said));
  return entity === undefined ? query : { ...query, name: entity.name };
}

/** The entities one query acts on, as sorted ids; undefined when it names none. */
function resolve(query: TargetQuery, home: EffectHome): string | undefined {
  const found = findTargets(registeredName(query, home), home.entities, home.areas);
  if (found.kind !== 'found') return undefined;
  return found.entities
    .map((e) => e.entity_id)
    .sort()
    .join(' ');
}

/**
 * Whether the recognised target slots act on exactly the entities one reading of the expected
 * ones does. False when either side has no target slots or resolves to nothing: then only the
 * literal comparison can make them equal.
 */
export function sameTargets(expected: Readonly<Record<string, SlotValue>>, got: Slots, home: EffectHome): boolean {
  if (!TARGET_KEYS.some((k) => expected[k] !== undefined) || !TARGET_KEYS.some((k) => got[k] !== undefined)) return false;
  const gotQueries = queries(got);
  if (gotQueries.length !== 1) return false;
  const acted = resolve(gotQueries[0] as TargetQuery, home);
  if (acted === undefined) return false;
  return queries(expected).some((query) => resolve(query, home) === acted);
}

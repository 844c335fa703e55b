/**
 * Trigger matching: comparing states, numeric ranges with hysteresis, MQTT topic filters, and the
 * index that takes an event straight to the triggers it can fire. The index is rebuilt when rules
 * or entity references change, never per event: the path from a state change to the first action
 * is a map lookup and a few comparisons.
 */
import type { EntityState } from '../home/types.js';
import type { CheckedTrigger, StateMatch, TopicFilter } from './types.js';

/** Whether a state matches a `from`/`to`/`state` value (or one of a list): numbers compare as numbers. */
export function stateMatches(state: EntityState, match: StateMatch): boolean {
  if (Array.isArray(match)) return match.some((m) => oneMatches(state, m));
  return oneMatches(state, match);
}

function oneMatches(state: EntityState, match: string | number): boolean {
  if (state === null) return false;
  const a = numeric(state);
  const b = numeric(match);
  if (a !== undefined && b !== undefined) return a === b;
  return String(state) === String(match);
}

/** The number a state holds (`21.5` or `"21.5"`), or undefined. */
export function numeric(state: EntityState): number | undefined {
  if (typeof state === 'number') return Number.isFinite(state) ? state : undefined;
  if (typeof state !== 'string' || state.trim() === '') return undefined;
  const n = Number(state);
  return Number.isFinite(n) ? n : undefined;
}

/** Inside (above, below), both exclusive; a missing bound is open. */
export function inRange(value: number, above: number | undefined, below: number | undefined): boolean {
  return (above === undefined || value > above) && (below === undefined || value < below);
}

/**
 * One step of a numeric trigger. `armed` is undefined before the first report after start (a
 * first report inside the range counts as entering it), true while waiting for the value to enter
 * the range, false after it fired until the value has left the range by `hysteresis`. A state that
 * is not a number (unavailable, unknown) changes nothing.
 */
export function numericStep(
  trigger: { above?: number; below?: number; hysteresis: number },
  armed: boolean | undefined,
  state: EntityState,
): { fire: boolean; armed: boolean | undefined } {
  const value = numeric(state);
  if (value === undefined) return { fire: false, armed };
  const inside = inRange(value, trigger.above, trigger.below);
  if (armed !== false) return inside ? { fire: true, armed: false } : { fire: false, armed: true };
  const h = trigger.hysteresis;
  const left = (trigger.above !== undefined && value <= trigger.above - h) || (trigger.below !== undefined && value >= trigger.below + h);
  return { fire: false, armed: left };
}

/** Splits an MQTT topic filter; returns undefined when `#` or `+` are misplaced. */
export function compileTopicFilter(filter: string): TopicFilter | undefined {
  const levels = filter.split('/');
  for (const [i, level] of levels.entries()) {
    if (level.includes('#') && (level !== '#' || i !== levels.length - 1)) return undefined;
    if (level.includes('+') && level !== '+') return undefined;
  }
  return { levels, exact: !levels.some((l) => l === '+' || l === '#') };
}

/** Whether a topic (already split into levels) matches a filter. Topics starting with `$` match no leading wildcard. */
export function topicMatches(filter: TopicFilter, topic: readonly string[]): boolean {
  const f = filter.levels;
  if ((f[0] === '+' || f[0] === '#') && topic[0]?.startsWith('$')) return false;
  for (let i = 0; i < f.length; i++) {
    const level = f[i];
    if (level === '#') return true;
    if (i >= topic.length) return false;
    if (level !== '+' && level !== topic[i]) return false;
  }
  return f.length === topic.length;
}

/** A readable one-line description of a trigger (`automations list`). */
export function describeTrigger(trigger: CheckedTrigger): string {
  switch (trigger.type) {
    case 'state': {
      const from = trigger.from === undefined ? '' : ` from ${matchText(trigger.from)}`;
      const to = trigger.to === undefined ? '' : ` to ${matchText(trigger.to)}`;
      const hold = trigger.for_ms > 0 ? ` for ${trigger.for_ms / 1000} s` : '';
      return `state ${trigger.entity_ref}${from}${to}${hold}`;
    }
    case 'numeric': {
      const range = [
        trigger.above === undefined ? '' : `above ${trigger.above}`,
        trigger.below === undefined ? '' : `below ${trigger.below}`,
      ]
        .filter((s) => s !== '')
        .join(' and ');
      const h = trigger.hysteresis > 0 ? ` (hysteresis ${trigger.hysteresis})` : '';
      return `numeric ${trigger.entity_ref} ${range}${h}`;
    }
    case 'edge':
      return `edge ${trigger.pin} ${trigger.edge}`;
    case 'time':
      return /^\d\d:\d\d$/.test(trigger.label) ? `time at ${trigger.label}` : `time cron "${trigger.label}"`;
    case 'mqtt':
      return `mqtt ${trigger.topic}${trigger.payload === undefined ? '' : ` = ${JSON.stringify(trigger.payload)}`}`;
    case 'input':
      return `input /${trigger.match}/${trigger.channel === undefined ? '' : ` on ${trigger.channel}`}`;
  }
}

function matchText(match: StateMatch): string {
  return Array.isArray(match) ? match.map((m) => String(m)).join('|') : String(match);
}

/** A trigger together with whatever the index was built for (the engine's per-rule runtime). */
export interface Indexed<R, T extends CheckedTrigger = CheckedTrigger> {
  owner: R;
  trigger: T;
}

type Of<K extends CheckedTrigger['type']> = Extract<CheckedTrigger, { type: K }>;

/**
 * Triggers by what can fire them: entity id (state and numeric triggers whose reference
 * resolved), pin or entity id (edge), exact topic or wildcard filter (mqtt), and the input list.
 */
export class TriggerIndex<R> {
  readonly #byEntity = new Map<string, Array<Indexed<R, Of<'state'> | Of<'numeric'>>>>();
  readonly #byPin = new Map<string, Array<Indexed<R, Of<'edge'>>>>();
  readonly #byTopic = new Map<string, Array<Indexed<R, Of<'mqtt'>>>>();
  readonly #wildcards: Array<Indexed<R, Of<'mqtt'>>> = [];
  readonly #inputs: Array<Indexed<R, Of<'input'>>> = [];

  /** Adds a state or numeric trigger under the entity id its reference resolved to. */
  addEntity(entityId: string, item: Indexed<R, Of<'state'> | Of<'numeric'>>): void {
    push(this.#byEntity, entityId, item);
  }

  add(item: Indexed<R>): void {
    const { owner, trigger } = item;
    switch (trigger.type) {
      case 'edge':
        push(this.#byPin, trigger.pin, { owner, trigger });
        break;
      case 'mqtt':
        if (trigger.filter.exact) push(this.#byTopic, trigger.topic, { owner, trigger });
        else this.#wildcards.push({ owner, trigger });
        break;
      case 'input':
        this.#inputs.push({ owner, trigger });
        break;
      default:
        // State and numeric triggers go through addEntity; time triggers run on timers.
        break;
    }
  }

  forEntity(entityId: string): ReadonlyArray<Indexed<R, Of<'state'> | Of<'numeric'>>> {
    return this.#byEntity.get(entityId) ?? NONE;
  }

  /** Edge triggers naming the pin id or its entity id. */
  forEdge(pin: string, entityId: string): Array<Indexed<R, Of<'edge'>>> {
    const byPin = this.#byPin.get(pin) ?? [];
    const byEntity = entityId === pin ? [] : (this.#byPin.get(entityId) ?? []);
    return byEntity.length === 0 ? byPin : [...byPin, ...byEntity];
  }

  forTopic(topic: string): Array<Indexed<R, Of<'mqtt'>>> {
    const exact = this.#byTopic.get(topic) ?? [];
    if (this.#wildcards.length === 0) return exact;
    const levels = topic.split('/');
    return [...exact, ...this.#wildcards.filter((w) => topicMatches(w.trigger.filter, levels))];
  }

  inputs(): ReadonlyArray<Indexed<R, Of<'input'>>> {
    return this.#inputs;
  }
}

const NONE: readonly never[] = [];

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

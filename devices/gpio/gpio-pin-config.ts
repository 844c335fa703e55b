/**
 * The pins of `plugin.gpio.pins` as the plugin uses them: checked as a whole, defaults filled in,
 * and everything the edge path needs worked out once at start (entity id, state words, the input
 * text of each edge), so an edge costs lookups, not string work.
 *
 * The config schema already bounds each field; this adds what a schema cannot say (unique ids and
 * BCM numbers, domains that fit the direction, fields that belong to the other direction, limits
 * that contradict each other). Every problem is HA_ERR_GPIO_CONFIG naming the pin and the field,
 * and fields are filled with the schema's defaults when absent, so the result does not depend on
 * who loaded the settings.
 */
import { CRITICAL_DOMAINS, type EntityDomain, HomeAgentError, type Level } from '../../src/sdk/index.js';
import type { GpioBias, GpioDirection, GpioEdge, GpioValue } from './gpio-backend.js';
import type { GuardedPinConfig, SafeValue } from './pin-guard.js';

/** One pin as `plugin.gpio.pins[]` holds it (the schema's field names). */
export interface GpioPinSetting {
  id: string;
  name?: string;
  aliases?: string[];
  area?: string;
  bcm: number;
  direction: GpioDirection;
  domain?: string;
  device_class?: string;
  active_low?: boolean;
  edge?: GpioEdge;
  debounce_ms?: number;
  bias?: 'as_is' | 'pull_up' | 'pull_down' | 'disable';
  initial?: GpioValue | null;
  safe?: SafeValue;
  pulse_ms?: number;
  max_on_time_s?: number;
  input_edges?: GpioEdge;
  level?: Level;
  input_text?: string;
}

export const OUTPUT_DOMAINS = ['switch', 'light', 'fan', 'siren', 'valve', 'lock'] as const;
/**
 * `button` is a momentary push button that reports like a binary sensor (on while pressed): Home
 * Assistant's stateless button is something software presses, which a wire into the Pi is not.
 */
export const INPUT_DOMAINS = ['binary_sensor', 'button'] as const;
/** Outputs whose on/off has its own words in Home Assistant: a lock is locked (1) or unlocked (0), a valve open (1) or closed (0). */
const STATE_WORDS: Partial<Record<EntityDomain, readonly [off: string, on: string]>> = {
  lock: ['unlocked', 'locked'],
  valve: ['closed', 'open'],
};
/** Services that set logical 1 and 0, per output domain; `toggle` is added where the domain has it. */
const SERVICE_VALUES: Partial<Record<EntityDomain, Readonly<Record<string, GpioValue>>>> = {
  lock: { lock: 1, unlock: 0 },
  valve: { open: 1, close: 0 },
};
const ON_OFF: Readonly<Record<string, GpioValue>> = { turn_on: 1, turn_off: 0 };

/** Schema bounds repeated for settings that did not pass through the loader (tests, a hand-made context). */
const MAX_PINS = 58;
const MAX_SCHEMA_BCM = 57;
const MAX_DEBOUNCE_MS = 5000;
const MAX_PULSE_MS = 60_000;
const MAX_ON_TIME_S = 86_400;
const MAX_NAME = 64;
const MAX_INPUT_TEXT = 500;
const SLUG = /^[a-z0-9_]{1,64}$/;
const EDGES: readonly GpioEdge[] = ['none', 'rising', 'falling', 'both'];
const BIASES: Readonly<Record<string, GpioBias>> = { as_is: 'as-is', pull_up: 'pull-up', pull_down: 'pull-down', disable: 'disabled' };

/** Input-only fields and their defaults: a different value on an output is a mistake worth naming. */
const INPUT_ONLY_DEFAULTS = { debounce_ms: 20, bias: 'as_is', input_edges: 'none', level: 1, input_text: '' } as const;
const OUTPUT_ONLY_DEFAULTS = { initial: null, safe: 0, pulse_ms: 0, max_on_time_s: 0 } as const;

/** A configured pin, checked and worked out. */
export interface GpioPinPlan {
  readonly id: string;
  readonly bcm: number;
  readonly direction: GpioDirection;
  readonly domain: EntityDomain;
  readonly entity_id: string;
  readonly name: string;
  readonly aliases: string[];
  readonly area: string | null;
  readonly device_class: string | null;
  readonly active_low: boolean;
  /** Outputs: a momentary relay, on for this long per turn_on (0: a normal output). */
  readonly pulse_ms: number;
  readonly max_on_time_s: number;
  /** Entity state words for logical 0 and 1. */
  readonly off_state: string;
  readonly on_state: string;
  /** Services the entity offers, and the logical value each sets (`toggle` absent: it flips). */
  readonly services: string[];
  readonly service_values: Readonly<Record<string, GpioValue>>;
  /** Move or unlock something: direct pin writes are refused for them (the agent must go through the confirmed entity call). */
  readonly critical: boolean;
  /** Inputs: which edges become an input for the agent (none unless input_edges says so), at which level, with which text. */
  readonly input_rising: boolean;
  readonly input_falling: boolean;
  readonly level: Level;
  readonly text_rising: string;
  readonly text_falling: string;
  /** What the safety layer gets. */
  readonly guard: GuardedPinConfig;
  /** Things worth a log line that are not errors. */
  readonly warnings: string[];
}

function problem(index: number, id: unknown, field: string, message: string): HomeAgentError {
  const who = typeof id === 'string' && id !== '' ? `plugin.gpio.pins[${index}] (${id})` : `plugin.gpio.pins[${index}]`;
  return new HomeAgentError('HA_ERR_GPIO_CONFIG', `${who}.${field}: ${message}`, {
    details: { index, ...(typeof id === 'string' ? { pin: id } : {}), field },
  });
}

function isInt(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

/** "kitchen_light" → "Kitchen light". */
export function defaultPinName(id: string): string {
  const spaced = id.replace(/_+/g, ' ').trim();
  return spaced === '' ? id : spaced.charAt(0).toUpperCase() + spaced.slice(1);
}

/** Fills `{name}`, `{edge}` and `{state}` (each wherever it occurs); other braces stay as written. */
export function fillInputText(template: string, name: string, edge: 'rising' | 'falling', state: string): string {
  if (template === '') return `${name} became ${state} (GPIO edge)`;
  return template.replaceAll('{name}', name).replaceAll('{edge}', edge).replaceAll('{state}', state);
}

/** Checks `plugin.gpio.pins` and works out each pin; throws HA_ERR_GPIO_CONFIG naming the pin and field. */
export function planGpioPins(raw: unknown): GpioPinPlan[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw new HomeAgentError('HA_ERR_GPIO_CONFIG', 'plugin.gpio.pins must be a list of pins');
  if (raw.length > MAX_PINS)
    throw new HomeAgentError('HA_ERR_GPIO_CONFIG', `plugin.gpio.pins: at most ${MAX_PINS} pins, got ${raw.length}`);
  const ids = new Map<string, number>();
  const bcms = new Map<number, string>();
  return raw.map((entry: unknown, index) => {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      throw new HomeAgentError('HA_ERR_GPIO_CONFIG', `plugin.gpio.pins[${index}] must be an object with at least id, bcm and direction`);
    }
    const plan = planPin(entry as Partial<GpioPinSetting>, index);
    const sameId = ids.get(plan.id);
    if (sameId !== undefined) throw problem(index, plan.id, 'id', `pin id "${plan.id}" is already used by plugin.gpio.pins[${sameId}]`);
    const sameBcm = bcms.get(plan.bcm);
    if (sameBcm !== undefined) throw problem(index, plan.id, 'bcm', `GPIO ${plan.bcm} is already configured as pin "${sameBcm}"`);
    ids.set(plan.id, index);
    bcms.set(plan.bcm, plan.id);
    return plan;
  });
}

function planPin(p: Partial<GpioPinSetting>, index: number): GpioPinPlan {
  const id = p.id;
  const fail = (field: string, message: string) => problem(index, id, field, message);
  if (typeof id !== 'string' || !SLUG.test(id)) throw fail('id', 'must be 1-64 lowercase letters, digits or _ (it becomes the entity id)');
  if (!isInt(p.bcm, 0, MAX_SCHEMA_BCM)) throw fail('bcm', `must be a BCM number from 0 to ${MAX_SCHEMA_BCM}, got ${JSON.stringify(p.bcm)}`);
  if (p.direction !== 'in' && p.direction !== 'out') throw fail('direction', `must be in or out, got ${JSON.stringify(p.direction)}`);
  const isOut = p.direction === 'out';
  const name = p.name ?? '';
  if (typeof name !== 'string' || name.length > MAX_NAME) throw fail('name', `must be text of at most ${MAX_NAME} characters`);
  const aliases = p.aliases ?? [];
  if (!Array.isArray(aliases) || aliases.some((a) => typeof a !== 'string' || a.trim() === '' || a.length > MAX_NAME)) {
    throw fail('aliases', `must be a list of names of 1-${MAX_NAME} characters`);
  }
  for (const field of ['area', 'device_class'] as const) {
    const value = p[field] ?? '';
    if (typeof value !== 'string' || value.length > MAX_NAME) throw fail(field, `must be text of at most ${MAX_NAME} characters`);
  }
  const domain = checkDomain(p.domain ?? '', isOut, fail);
  const activeLow = p.active_low ?? false;
  if (typeof activeLow !== 'boolean') throw fail('active_low', 'must be true or false');
  const edge = p.edge ?? 'both';
  if (!EDGES.includes(edge)) throw fail('edge', `must be none, rising, falling or both, got ${JSON.stringify(edge)}`);
  const warnings: string[] = [];
  const friendly = name.trim() === '' ? defaultPinName(id) : name.trim();
  const common = {
    id,
    bcm: p.bcm,
    direction: p.direction,
    domain,
    entity_id: `${domain}.${id}`,
    name: friendly,
    aliases: aliases.map((a) => a.trim()),
    area: (p.area ?? '').trim() === '' ? null : (p.area ?? '').trim(),
    device_class: (p.device_class ?? '').trim() === '' ? null : (p.device_class ?? '').trim(),
    active_low: activeLow,
    warnings,
  };
  if (isOut) {
    for (const [field, fallback] of Object.entries(INPUT_ONLY_DEFAULTS)) {
      const value = p[field as keyof typeof INPUT_ONLY_DEFAULTS];
      if (value !== undefined && value !== fallback) throw fail(field, 'applies to inputs only');
    }
    if (edge !== 'both' && edge !== 'none') throw fail('edge', 'applies to inputs only (an output reports no edges)');
    return { ...common, ...planOutput(p, domain, fail) };
  }
  for (const [field, fallback] of Object.entries(OUTPUT_ONLY_DEFAULTS)) {
    const value = p[field as keyof typeof OUTPUT_ONLY_DEFAULTS];
    if (value !== undefined && value !== fallback) throw fail(field, 'applies to outputs only');
  }
  return { ...common, ...planInput(p, id, friendly, edge, activeLow, warnings, fail) };
}

type Fail = (field: string, message: string) => HomeAgentError;

function checkDomain(domain: string, isOut: boolean, fail: Fail): EntityDomain {
  const allowed: readonly string[] = isOut ? OUTPUT_DOMAINS : INPUT_DOMAINS;
  if (domain === '') return isOut ? 'switch' : 'binary_sensor';
  if (!allowed.includes(domain)) {
    throw fail('domain', `an ${isOut ? 'output' : 'input'} can be ${allowed.join(', ')}, not ${JSON.stringify(domain)}`);
  }
  return domain as EntityDomain;
}

function planOutput(p: Partial<GpioPinSetting>, domain: EntityDomain, fail: Fail) {
  const initial = p.initial ?? null;
  if (initial !== null && initial !== 0 && initial !== 1) throw fail('initial', 'must be 0, 1 or null (the safe value)');
  const safe = p.safe ?? 0;
  if (safe !== 0 && safe !== 1 && safe !== 'keep') throw fail('safe', 'must be 0, 1 or keep');
  const pulse = p.pulse_ms ?? 0;
  if (!isInt(pulse, 0, MAX_PULSE_MS)) throw fail('pulse_ms', `must be a whole number of ms from 0 (a normal output) to ${MAX_PULSE_MS}`);
  const limit = p.max_on_time_s ?? 0;
  if (!isInt(limit, 0, MAX_ON_TIME_S))
    throw fail('max_on_time_s', `must be a whole number of seconds from 0 (no limit) to ${MAX_ON_TIME_S}`);
  const words = STATE_WORDS[domain];
  if (pulse > 0) {
    if (words !== undefined) {
      throw fail('pulse_ms', `a ${domain} stays ${words[1]} or ${words[0]}; a momentary relay (a door opener) is a switch with pulse_ms`);
    }
    if (safe === 1) throw fail('safe', 'a momentary relay rests at 0 (use active_low to invert the wire)');
    if (initial === 1) throw fail('initial', 'a momentary relay cannot start on');
  }
  if (limit > 0 && safe === 1) throw fail('max_on_time_s', 'switches the output off after the limit, but its safe value is on (1)');
  if (limit > 0 && initial === 1) throw fail('initial', 'an output with max_on_time_s cannot start on');
  const values = SERVICE_VALUES[domain] ?? ON_OFF;
  // A momentary relay has no off to ask for: turn_on and toggle both pulse.
  const services = pulse > 0 ? ['turn_on', 'toggle'] : words !== undefined ? Object.keys(values) : ['turn_on', 'turn_off', 'toggle'];
  const guard: GuardedPinConfig = {
    name: p.id as string,
    bcm: p.bcm as number,
    direction: 'out',
    active_low: p.active_low ?? false,
    safe,
    ...(initial === null ? {} : { initial }),
    ...(pulse > 0 ? { pulse_ms: pulse } : {}),
    ...(limit > 0 ? { max_on_time_s: limit } : {}),
  };
  return {
    pulse_ms: pulse,
    max_on_time_s: limit,
    off_state: words?.[0] ?? 'off',
    on_state: words?.[1] ?? 'on',
    services,
    service_values: values,
    critical: CRITICAL_DOMAINS.includes(domain),
    input_rising: false,
    input_falling: false,
    level: 0 as Level,
    text_rising: '',
    text_falling: '',
    guard,
  };
}

function planInput(
  p: Partial<GpioPinSetting>,
  id: string,
  name: string,
  edge: GpioEdge,
  activeLow: boolean,
  warnings: string[],
  fail: Fail,
) {
  const debounce = p.debounce_ms ?? INPUT_ONLY_DEFAULTS.debounce_ms;
  if (!isInt(debounce, 0, MAX_DEBOUNCE_MS)) throw fail('debounce_ms', `must be a whole number of ms from 0 to ${MAX_DEBOUNCE_MS}`);
  const bias = BIASES[p.bias ?? 'as_is'];
  if (bias === undefined) throw fail('bias', `must be as_is, pull_up, pull_down or disable, got ${JSON.stringify(p.bias)}`);
  // No edge reaches the agent unless the owner says which: each one is a whole model turn (a
  // button pressed ten times is ten requests); automations and the entity see every edge anyway.
  const inputEdges = p.input_edges ?? INPUT_ONLY_DEFAULTS.input_edges;
  if (!EDGES.includes(inputEdges)) throw fail('input_edges', `must be none, rising, falling or both, got ${JSON.stringify(inputEdges)}`);
  const level = p.level ?? 1;
  if (!isInt(level, 0, 4)) throw fail('level', 'must be 0 (queued) to 4 (critical)');
  const template = p.input_text ?? '';
  if (typeof template !== 'string' || template.length > MAX_INPUT_TEXT)
    throw fail('input_text', `must be text of at most ${MAX_INPUT_TEXT} characters`);
  const watched = (e: 'rising' | 'falling') => edge === 'both' || edge === e;
  const wanted = (e: 'rising' | 'falling') => inputEdges === 'both' || inputEdges === e;
  for (const e of ['rising', 'falling'] as const) {
    if (wanted(e) && !watched(e)) warnings.push(`input_edges includes ${e}, but edge is ${edge}: those edges are not watched`);
  }
  if (inputEdges === 'none') {
    const unused = (['level', 'input_text'] as const).filter((field) => p[field] !== undefined && p[field] !== INPUT_ONLY_DEFAULTS[field]);
    if (unused.length > 0) {
      warnings.push(
        `${unused.join(' and ')} ${unused.length > 1 ? 'are' : 'is'} set, but input_edges is none (the default): no edge becomes an input for the agent; set input_edges: rising (or falling, both) for that`,
      );
    }
  }
  return {
    pulse_ms: 0,
    max_on_time_s: 0,
    off_state: 'off',
    on_state: 'on',
    services: [] as string[],
    service_values: {},
    critical: false,
    input_rising: wanted('rising') && watched('rising'),
    input_falling: wanted('falling') && watched('falling'),
    level: level as Level,
    text_rising: fillInputText(template, name, 'rising', 'on'),
    text_falling: fillInputText(template, name, 'falling', 'off'),
    guard: { name: id, bcm: p.bcm as number, direction: 'in' as const, active_low: activeLow, edge, debounce_ms: debounce, bias },
  };
}

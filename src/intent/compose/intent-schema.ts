/**
 * The intent schema of the compositional recogniser (issue 26): which intent an action becomes on
 * which kind of device, what each kind of device can do, and the check every recognised intent
 * passes (templates' too) before it is acted on. A combination the schema does not list is never
 * produced — a vacuum service on a fan, a lock on a garage door — and a light that can only be
 * switched (Home Assistant's colour mode "onoff") is never given a brightness or a colour: the
 * engine says what the device can do instead.
 */
import type { HomeEntity } from '../recognizer.js';
import type { Action } from './lexicon.js';

/** The intent an action on a device of a domain becomes; absent: the device cannot do that. */
const DEVICE_ACTIONS: Readonly<Record<string, Partial<Record<Action, string>>>> = {
  light: { on: 'HassTurnOn', off: 'HassTurnOff', toggle: 'HassToggle', start: 'HassTurnOn', activate: 'HassTurnOn' },
  switch: { on: 'HassTurnOn', off: 'HassTurnOff', toggle: 'HassToggle', start: 'HassTurnOn', stop: 'HassTurnOff' },
  input_boolean: { on: 'HassTurnOn', off: 'HassTurnOff', toggle: 'HassToggle' },
  fan: { on: 'HassTurnOn', off: 'HassTurnOff', toggle: 'HassToggle', start: 'HassTurnOn', stop: 'HassTurnOff' },
  siren: { on: 'HassTurnOn', off: 'HassTurnOff' },
  climate: { on: 'HassTurnOn', off: 'HassTurnOff', start: 'HassTurnOn', stop: 'HassTurnOff' },
  media_player: {
    on: 'HassTurnOn',
    off: 'HassTurnOff',
    pause: 'HassMediaPause',
    stop: 'HassMediaPause',
    resume: 'HassMediaUnpause',
    start: 'HassMediaUnpause',
    next: 'HassMediaNext',
    previous: 'HassMediaPrevious',
  },
  cover: { open: 'HassTurnOn', close: 'HassTurnOff', on: 'HassTurnOn', off: 'HassTurnOff', raise: 'HassTurnOn', lower: 'HassTurnOff' },
  valve: { open: 'HassTurnOn', close: 'HassTurnOff', on: 'HassTurnOn', off: 'HassTurnOff' },
  lock: { lock: 'HassTurnOn', unlock: 'HassTurnOff' },
  vacuum: {
    start: 'HassVacuumStart',
    clean: 'HassVacuumStart',
    on: 'HassVacuumStart',
    dock: 'HassVacuumReturnToBase',
    stop: 'HassVacuumReturnToBase',
  },
  scene: { on: 'HassTurnOn', activate: 'HassTurnOn', start: 'HassTurnOn' },
  script: { on: 'HassTurnOn', activate: 'HassTurnOn', start: 'HassTurnOn' },
  button: { on: 'HassTurnOn', activate: 'HassTurnOn', start: 'HassTurnOn' },
};

/** Actions that say which kind of device is meant even when none is named ("start cleaning", "next song"). */
export const IMPLIED_DOMAIN: Partial<Record<Action, string>> = {
  clean: 'vacuum',
  dock: 'vacuum',
  pause: 'media_player',
  resume: 'media_player',
  next: 'media_player',
  previous: 'media_player',
};

export function intentFor(action: Action, domain: string): string | undefined {
  return DEVICE_ACTIONS[domain]?.[action];
}

export function domainsFor(action: Action): string[] {
  return Object.keys(DEVICE_ACTIONS).filter((domain) => DEVICE_ACTIONS[domain]?.[action] !== undefined);
}

/** What a state word or an action asked about means for a domain's stored state. */
export function stateFor(action: Action | undefined, domain: string | undefined): string | undefined {
  switch (action) {
    case 'on':
    case 'open':
      return domain === 'cover' || domain === 'valve' || action === 'open' ? 'open' : 'on';
    case 'off':
    case 'close':
      return domain === 'cover' || domain === 'valve' || action === 'close' ? 'closed' : 'off';
    case 'lock':
      return 'locked';
    case 'unlock':
      return 'unlocked';
    default:
      return undefined;
  }
}

const COLOUR_MODES = new Set(['hs', 'rgb', 'rgbw', 'rgbww', 'xy']);

/** What a light can do, from its colour modes; a light whose modes are not known is allowed everything. */
export function lightCan(entity: HomeEntity): { brightness: boolean; color: boolean } {
  const modes = entity.color_modes;
  if (modes === undefined || modes.length === 0) return { brightness: true, color: true };
  return { brightness: modes.some((m) => m !== 'onoff'), color: modes.some((m) => COLOUR_MODES.has(m)) };
}

/** What kind of thing an unsupported request asked for, to say what the device can do instead. */
export type Unsupported = 'brightness' | 'color' | 'action';

/** Domains each intent may act on when it names a device; intents not listed take any. */
const INTENT_DOMAINS: Readonly<Record<string, readonly string[]>> = {
  HassVacuumStart: ['vacuum'],
  HassVacuumReturnToBase: ['vacuum'],
  HassMediaPause: ['media_player'],
  HassMediaUnpause: ['media_player'],
  HassMediaNext: ['media_player'],
  HassMediaPrevious: ['media_player'],
  HassSetVolume: ['media_player'],
  HassSetPosition: ['cover', 'valve'],
  HassLightSet: ['light'],
  HassClimateSetTemperature: ['climate'],
};

/**
 * Whether an intent fits the devices it would act on: the intent's domains, and for a light
 * setting what each light can do. `targets` are the entities the slots select (none: nothing to check).
 */
export function checkIntent(
  intent: { name: string; slots: Readonly<Record<string, unknown>> },
  targets: readonly HomeEntity[],
): { ok: true } | { ok: false; why: Unsupported; entities: HomeEntity[] } {
  if (targets.length === 0) return { ok: true };
  const domains = INTENT_DOMAINS[intent.name];
  if (domains !== undefined && intent.slots.name !== undefined) {
    const wrong = targets.filter((e) => !domains.includes(e.domain));
    if (wrong.length === targets.length) return { ok: false, why: 'action', entities: wrong };
  }
  if (intent.name === 'HassTurnOn' || intent.name === 'HassTurnOff') {
    const acting = targets.filter((e) => e.domain !== 'sensor' && e.domain !== 'binary_sensor');
    if (intent.slots.name !== undefined && acting.length === 0) return { ok: false, why: 'action', entities: [...targets] };
  }
  if (intent.name === 'HassLightSet') {
    const lights = targets.filter((e) => e.domain === 'light');
    const wants: Unsupported = intent.slots.color !== undefined ? 'color' : 'brightness';
    const able = lights.filter((e) => lightCan(e)[wants === 'color' ? 'color' : 'brightness']);
    if (lights.length > 0 && able.length === 0) return { ok: false, why: wants, entities: lights };
  }
  return { ok: true };
}

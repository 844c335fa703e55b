/**
 * English device-control sentences of the local intent engine (issue 11): turning things on and
 * off, lights' brightness and colour, asking states, climate and cover/valve positions. Written
 * for this project from how people phrase requests; Home Assistant's test sentences only measure
 * them (`homeagent intent-eval`). Shared pieces are string constants so each form is stated once.
 */
import type { IntentSentences } from '../intent-sentences.js';

// Politeness around a request: "please", "can you", "for me" carry no meaning.
const ASK = '[(please|can you|could you|would you|will you|i want you to|i need you to) ]';
const THANKS = '[ (please|for me|now|thanks|thank you)]';
const THE = '[(the|my|our|all [of] the|all [of] my|all [of] our|all|every [single]|each [and every]|any) ]';
const IN = '(in|on|at|of|for|inside|within)';
const AREA = `${IN} [(the|my|our) ]{area}`;
const FLOOR = `[${IN} ][(the|my|our) ]{floor}`;
// "in here", "in this room": the satellite's area, filled in by the recogniser from the context.
const HERE = '[(here|in here|in this room|in the room|in my room|in our room|in this space|in this area|over here)]';
// The whole home: the recogniser must not narrow it to the satellite's area.
const EVERYWHERE =
  '(everywhere|all over|[in|across|throughout] [(the|my|our) ](entire|whole) (house|home|apartment|place)|[in|across|throughout] (the|my|our) (house|home|apartment|place)|[in|across|throughout] (all|every|each) [of ][the |my |our ](room|rooms|area|areas) [in the (house|home)])';
const NAME = '[(the|my|our) ]{name}';

const LIGHT = '(light|lights|lamp|lamps|lighting|lightbulb|lightbulbs|bulb|bulbs)';
const ON = '(turn on|switch on|activate|enable|power on|put on|bring on)';
const ON_SPLIT = '(turn|switch|power|put)';
const OFF = '(turn off|switch off|deactivate|disable|power off|shut off|shut down|kill|bring off)';
const OFF_SPLIT = '(turn|switch|power|shut)';

/** Turn-on/off forms for one kind of thing (`thing` is its noun alternatives) over area, floor, here and home. */
function switchForms(verb: string, split: string, word: 'on' | 'off', thing: string): Record<string, string[]> {
  const where = (place: string): string[] => [
    `${ASK}${verb} ${THE}${thing} ${place}${THANKS}`,
    `${ASK}${verb} ${THE}${place.replace(/^\(in\|on\|at\|of\|for\|inside\|within\) /u, '')} ${thing}${THANKS}`,
    `${ASK}${split} ${THE}${thing} ${word} ${place}${THANKS}`,
    `${ASK}${split} ${THE}${thing} ${place} ${word}${THANKS}`,
    `${ASK}${split} ${THE}${place.replace(/^\(in\|on\|at\|of\|for\|inside\|within\) /u, '')} ${thing} ${word}${THANKS}`,
    `[(the|my|our) ]${place.replace(/^\(in\|on\|at\|of\|for\|inside\|within\) /u, '')} ${thing} ${word}${THANKS}`,
    `${thing} ${word} ${place}${THANKS}`,
  ];
  return {
    area: where(AREA),
    floor: where(FLOOR),
    here: [
      `${ASK}${verb} ${THE}${thing} ${HERE}${THANKS}`,
      `${ASK}${split} ${THE}${thing} ${word} ${HERE}${THANKS}`,
      `${ASK}${split} ${THE}${thing} ${HERE} ${word}${THANKS}`,
      `[(the|my|our) ]${thing} ${word} ${HERE}${THANKS}`,
      `i want ${THE}${thing} ${word} ${HERE}`,
    ],
    home: [
      `${ASK}${verb} ${THE}${thing} ${EVERYWHERE}${THANKS}`,
      `${ASK}${split} ${THE}${thing} ${word} ${EVERYWHERE}${THANKS}`,
      `${ASK}${split} ${THE}${thing} ${EVERYWHERE} ${word}${THANKS}`,
      `${ASK}${verb} ${THE}(house|home) ${thing} [${EVERYWHERE}]${THANKS}`,
      `${ASK}${split} (all|every|each) ${thing} ${word}${THANKS}`,
      `${ASK}${verb} (all|every|each) ${thing}${THANKS}`,
      `make sure ${THE}${thing} (is|are) ${word} [${EVERYWHERE}]`,
    ],
  };
}

function nameForms(verb: string, split: string, word: 'on' | 'off'): string[] {
  return [
    `${ASK}${verb} ${NAME}[ ${LIGHT}]${THANKS}`,
    `${ASK}${split} ${NAME}[ ${LIGHT}] ${word}${THANKS}`,
    `${NAME}[ ${LIGHT}] ${word}${THANKS}`,
    `${ASK}${verb} ${NAME} ${AREA}${THANKS}`,
    `${ASK}${split} ${NAME} ${AREA} ${word}${THANKS}`,
    `${ASK}${split} ${NAME} ${word} ${AREA}${THANKS}`,
    `${ASK}${verb} [the ]{area} ${NAME}${THANKS}`,
  ];
}

/** Every turn-on or turn-off group for one direction. */
function onOff(intent: 'HassTurnOn' | 'HassTurnOff'): IntentSentences[] {
  const on = intent === 'HassTurnOn';
  const verb = on ? `(${ON.slice(1, -1)}|light up|illuminate|bring on)` : `(${OFF.slice(1, -1)}|darken)`;
  const split = on ? ON_SPLIT : OFF_SPLIT;
  const word = on ? 'on' : 'off';
  const groups: IntentSentences[] = [];
  const add = (templates: string[], slots: Record<string, string>): void => {
    groups.push({ intent, language: 'en', templates, slots });
  };
  // Fans say `name: all` when a place rather than a device is meant (how the fan handler tells them apart).
  const kinds: Array<{ thing: string; slots: Record<string, string> }> = [
    { thing: LIGHT, slots: { domain: 'light' } },
    { thing: '(fan|fans)', slots: { domain: 'fan', name: 'all' } },
    { thing: '(switch|switches)', slots: { domain: 'switch' } },
  ];
  for (const { thing, slots } of kinds) {
    const forms = switchForms(verb, split, word, thing);
    add(forms.area ?? [], slots);
    add(forms.floor ?? [], slots);
    // Before the "here" forms: "turn off all fans" names every fan, which the here forms also read.
    add(forms.home ?? [], { ...slots, scope: 'home' });
    const { name: _all, ...hereSlots } = slots;
    add(forms.here ?? [], hereSlots);
  }
  // Bare verbs on a place mean its lights: "light up the living room", "illuminate the first floor".
  const lightVerb = on ? '(light up|illuminate|brighten)' : '(darken|black out)';
  add([`${ASK}${lightVerb} ${THE}[(the|my|our) ]{area}${THANKS}`, `${ASK}light ${THE}{area} up`], { domain: 'light' });
  add([`${ASK}${lightVerb} ${THE}[(the|my|our) ]{floor}${THANKS}`], { domain: 'light' });
  add([`${ASK}${lightVerb} (this room|the room|here)`, `${ASK}light (this room|the room) up`], { domain: 'light' });
  add([`${ASK}${lightVerb} ${THE}${EVERYWHERE}`, `${ASK}${lightVerb} (all|every|each) (room|rooms|area|areas) ${EVERYWHERE}`], {
    domain: 'light',
    scope: 'home',
  });
  if (!on) {
    add([`${ASK}[(the|my|our) ]{area} ${LIGHT} out`, `${ASK}${LIGHT} out ${AREA}`], { domain: 'light' });
    add([`${ASK}${LIGHT} out ${HERE}`, `${ASK}(lights out|turn out the lights)`], { domain: 'light' });
  } else {
    add([`${ASK}(light it up|light up|lights up|lights please)`], { domain: 'light' });
  }
  add(nameForms(verb, split, word), {});
  return groups;
}

// Covers: open/close map to on/off with the cover domain; the device class narrows by noun.
const COVER_CLASSES: Array<{ noun: string; device_class?: string }> = [
  { noun: '(curtain|curtains|drape|drapes)', device_class: 'curtain' },
  { noun: '(blind|blinds)', device_class: 'blind' },
  { noun: '(shade|shades)', device_class: 'shade' },
  { noun: '(shutter|shutters)', device_class: 'shutter' },
  { noun: '(garage door|garage doors)', device_class: 'garage' },
  { noun: '(awning|awnings)', device_class: 'awning' },
  { noun: '(gate|gates)', device_class: 'gate' },
  { noun: '(window|windows)', device_class: 'window' },
  { noun: '(door|doors)', device_class: 'door' },
  { noun: '(cover|covers)' },
];

function coverGroups(intent: 'HassTurnOn' | 'HassTurnOff'): IntentSentences[] {
  const verb = intent === 'HassTurnOn' ? '(open|raise|lift|open up|roll up|pull up)' : '(close|lower|shut|roll down|pull down|draw)';
  const groups: IntentSentences[] = [
    { intent, language: 'en', templates: [`${ASK}${verb} ${NAME}[ ${AREA}]${THANKS}`], slots: { domain: 'cover' } },
  ];
  for (const { noun, device_class } of COVER_CLASSES) {
    const slots: Record<string, string> = { domain: 'cover', ...(device_class ? { device_class } : {}) };
    const templates = [
      `${ASK}${verb} ${THE}${noun} ${AREA}${THANKS}`,
      `${ASK}${verb} ${THE}[(the|my|our) ]{area} ${noun}${THANKS}`,
      `${ASK}${verb} ${THE}${noun} ${FLOOR}${THANKS}`,
      `${ASK}${verb} ${THE}[(the|my|our) ]{floor} ${noun}${THANKS}`,
      `${ASK}${verb} ${THE}${noun} ${HERE}${THANKS}`,
    ];
    groups.push({ intent, language: 'en', templates, slots });
    groups.push({
      intent,
      language: 'en',
      templates: [`${ASK}${verb} ${THE}${noun} ${EVERYWHERE}${THANKS}`],
      slots: { ...slots, scope: 'home' },
    });
  }
  return groups;
}

function valveGroups(intent: 'HassTurnOn' | 'HassTurnOff'): IntentSentences[] {
  const verb = intent === 'HassTurnOn' ? '(open|turn on)' : '(close|shut|turn off)';
  return [{ intent, language: 'en', templates: [`${ASK}${verb} ${NAME}[ valve][ ${AREA}]${THANKS}`], slots: { domain: 'valve' } }];
}

// Locks: "lock" is turn-on and "unlock" turn-off (the lock domain's convention).
function lockGroups(intent: 'HassTurnOn' | 'HassTurnOff'): IntentSentences[] {
  const verb = intent === 'HassTurnOn' ? '(lock|secure|bolt)' : '(unlock|unbolt|open)';
  const noun = '(door|doors|lock|locks)';
  return [
    {
      intent,
      language: 'en',
      templates: [`${ASK}${verb} ${NAME}[ ${noun}][ ${AREA}]${THANKS}`],
      slots: { domain: 'lock' },
    },
    {
      intent,
      language: 'en',
      templates: [
        `${ASK}${verb} ${THE}${noun} ${AREA}${THANKS}`,
        `${ASK}${verb} ${THE}[(the|my|our) ]{area} ${noun}${THANKS}`,
        `${ASK}${verb} ${THE}${noun} ${FLOOR}${THANKS}`,
      ],
      slots: { domain: 'lock', name: 'all' },
    },
    {
      intent,
      language: 'en',
      templates: [`${ASK}${verb} ${THE}${noun} ${EVERYWHERE}${THANKS}`, `${ASK}${verb} (all|every|each) ${noun}`],
      slots: { domain: 'lock', name: 'all', scope: 'home' },
    },
  ];
}

const SCENES_AND_SCRIPTS: IntentSentences[] = [
  {
    intent: 'HassTurnOn',
    language: 'en',
    templates: [
      `${ASK}(activate|turn on|start|run|set|apply|enable|switch to|load) ${NAME} (scene|mood|preset)${THANKS}`,
      `${ASK}(activate|turn on|start|run|set|apply|enable|switch to|load) [the ]scene ${NAME}${THANKS}`,
      `${ASK}(activate|turn on|start|run|set|apply|enable|switch to|load|change to|transition to|go to) ${NAME} [(scene|mood|preset) ]${AREA}${THANKS}`,
      `${ASK}(activate|turn on|start|run|set|apply|enable|switch to|load|change to|transition to|go to) [the ]{area} ${NAME} [(scene|mood|preset)]${THANKS}`,
      `${ASK}(change|switch|transition|go) to ${NAME}[ (scene|mood|preset)]${THANKS}`,
      `${ASK}turn [the ]{area} {name} on`,
      `[the ]{area} {name} [scene ]on`,
      `{name} scene [on|now]`,
      `scene {name}`,
    ],
    slots: { domain: 'scene' },
  },
  {
    intent: 'HassTurnOn',
    language: 'en',
    templates: [
      `${ASK}(run|start|execute|launch|trigger|activate|turn on) ${NAME} script${THANKS}`,
      `${ASK}(run|start|execute|launch|trigger|activate|turn on) [the ]script ${NAME}${THANKS}`,
      `${ASK}turn ${NAME} script on${THANKS}`,
    ],
    slots: { domain: 'script' },
  },
];

// "turn the bedroom lamp to 50%", "set the kitchen to red": brightness and colour of lights.
const BRIGHT_WORD = '(brightness|brightness level|light level|lighting|dimmer|intensity)';
const BRIGHT = '{brightness}[ ((brightness|bright))]';
const SET = '(set|change|turn|put|adjust|make|dim|brighten|bring)';
const MAX = '[the ](max|maximum|highest|full|brightest|100%)';
const MIN = '[the ](min|minimum|lowest|dimmest|least bright)';

function lightSetTarget(target: string): string[] {
  return [
    `${ASK}${SET} ${target} ${BRIGHT_WORD} to ${BRIGHT}${THANKS}`,
    `${ASK}${SET} [the ]${BRIGHT_WORD} (of|in|for|on) ${target} to ${BRIGHT}${THANKS}`,
    `${ASK}${SET} ${target} [to ]${BRIGHT}${THANKS}`,
    `${ASK}${SET} ${target} [light|lights] [to ]${BRIGHT}${THANKS}`,
    `${BRIGHT_WORD} [of ]${target} [to ]${BRIGHT}`,
    `${target} [${BRIGHT_WORD} ][to ]${BRIGHT}`,
  ];
}

function lightLevel(target: string, level: string): string[] {
  return [
    `${ASK}${SET} ${target} ${BRIGHT_WORD} to ${level}${THANKS}`,
    `${ASK}${SET} [the ]${BRIGHT_WORD} (of|in|for|on) ${target} to ${level}${THANKS}`,
    `${ASK}${SET} ${target} to ${level} [${BRIGHT_WORD}]${THANKS}`,
    `${target} [to ]${level} ${BRIGHT_WORD}`,
    `${target} ${BRIGHT_WORD} [to ]${level}`,
  ];
}

function lightColour(target: string): string[] {
  return [
    `${ASK}${SET} ${target} [(color|colour) ]to {color}${THANKS}`,
    `${ASK}${SET} [the ](color|colour) (of|in|for|on) ${target} to {color}${THANKS}`,
    `${ASK}(make|turn) ${target} {color}${THANKS}`,
    `${target} [(color|colour) ][to ]{color}`,
  ];
}

const LIGHT_TARGETS: Array<{ target: string; slots?: Record<string, string> }> = [
  { target: `${NAME}[ ${LIGHT}]` },
  { target: `[(the|my|our) ]{area}[ ${LIGHT}]` },
  { target: `${THE}${LIGHT} ${AREA}` },
  { target: `[(the|my|our) ]{floor}[ ${LIGHT}]` },
  { target: `${THE}${LIGHT} ${FLOOR}` },
  { target: `${THE}${LIGHT}[ ${HERE}]` },
];

function lightSetGroups(): IntentSentences[] {
  const groups: IntentSentences[] = [];
  for (const { target } of LIGHT_TARGETS) {
    groups.push({ intent: 'HassLightSet', language: 'en', templates: lightSetTarget(target), slots: { domain: 'light' } });
    groups.push({
      intent: 'HassLightSet',
      language: 'en',
      templates: lightLevel(target, MAX),
      slots: { domain: 'light', brightness: 100 },
    });
    groups.push({
      intent: 'HassLightSet',
      language: 'en',
      templates: lightLevel(target, MIN),
      slots: { domain: 'light', brightness: 1 },
    });
    groups.push({ intent: 'HassLightSet', language: 'en', templates: lightColour(target), slots: { domain: 'light' } });
  }
  groups.push({
    intent: 'HassLightSet',
    language: 'en',
    templates: [
      `${ASK}${SET} [the ]${BRIGHT_WORD} ${HERE} to ${BRIGHT}${THANKS}`,
      `${ASK}${SET} [the ]${BRIGHT_WORD} to ${BRIGHT} ${HERE}${THANKS}`,
      `${ASK}${SET} [the ](color|colour) ${HERE} to {color}${THANKS}`,
      `${ASK}${SET} [the ](color|colour) to {color} ${HERE}${THANKS}`,
      `${ASK}(make|turn) ${THE}${LIGHT} {color} ${HERE}${THANKS}`,
    ],
    slots: { domain: 'light' },
  });
  for (const [level, brightness] of [
    [MAX, 100],
    [MIN, 1],
  ] as const) {
    groups.push({
      intent: 'HassLightSet',
      language: 'en',
      templates: [
        `${ASK}${SET} [the ]${BRIGHT_WORD} ${HERE} to ${level}${THANKS}`,
        `${ASK}${SET} [the ]${BRIGHT_WORD} to ${level} ${HERE}${THANKS}`,
      ],
      slots: { domain: 'light', brightness },
    });
  }
  return groups;
}

// States: "is the bedroom lamp on", "what is the outside temperature", "are any switches on in the kitchen".
// The state word is a fixed slot (the contract has no state list), so each state gets its own group.
const IS = '(is|are|was|were)';
// Per domain, the words of each state ("open" is `open` for a cover but `on` for a door sensor).
const STATE_WORDS: Array<{ state: string; words: string; domain?: string }> = [
  { state: 'on', words: '[turned |switched ]on' },
  { state: 'off', words: '[turned |switched ]off' },
  { state: 'open', words: '(open|opened)', domain: 'cover' },
  { state: 'closed', words: '(closed|shut)', domain: 'cover' },
  { state: 'locked', words: '[securely ]locked', domain: 'lock' },
  { state: 'unlocked', words: 'unlocked', domain: 'lock' },
];
const STATE_KINDS: Array<{ noun: string; slots: Record<string, string>; states: string[] }> = [
  { noun: LIGHT, slots: { domain: 'light' }, states: ['on', 'off'] },
  { noun: '(switch|switches)', slots: { domain: 'switch' }, states: ['on', 'off'] },
  { noun: '(fan|fans)', slots: { domain: 'fan' }, states: ['on', 'off'] },
  { noun: '(lock|locks|door|doors)', slots: { domain: 'lock' }, states: ['locked', 'unlocked'] },
  ...COVER_CLASSES.map(({ noun, device_class }) => ({
    noun,
    slots: { domain: 'cover', ...(device_class ? { device_class } : {}) },
    states: ['open', 'closed'],
  })),
];

// Binary sensors by device class: what they are called and the words of their on and off states.
const BINARY_CLASSES: Array<{ device_class: string; noun: string; on: string; off?: string }> = [
  { device_class: 'battery', noun: '(battery|batteries)', on: 'low', off: '(normal|charged|ok|fine)' },
  { device_class: 'battery_charging', noun: '(battery|batteries)', on: 'charging', off: 'not charging' },
  {
    device_class: 'carbon_monoxide',
    noun: '(carbon monoxide|co) [(sensor|sensors|detector|detectors)]',
    on: '(on|detected|triggered)',
    off: '(clear|off)',
  },
  { device_class: 'cold', noun: '(thing|things|device|devices)', on: 'cold' },
  { device_class: 'heat', noun: '(thing|things|device|devices)', on: 'hot' },
  { device_class: 'connectivity', noun: '(device|devices)', on: '(connected|online)', off: '(disconnected|offline)' },
  { device_class: 'door', noun: '(door|doors)', on: '(open|opened)', off: '(closed|shut)' },
  { device_class: 'garage_door', noun: '(garage door|garage doors)', on: '(open|opened)', off: '(closed|shut)' },
  { device_class: 'gas', noun: 'gas [(sensor|sensors|detector|detectors)]', on: '(on|detected|triggered)', off: 'clear' },
  { device_class: 'light', noun: '(light|lights)', on: 'detected' },
  { device_class: 'lock', noun: '(lock|locks)', on: 'unlocked', off: 'locked' },
  { device_class: 'moisture', noun: '(water|leak|moisture) (sensor|sensors)', on: '(wet|flooded)', off: 'dry' },
  { device_class: 'motion', noun: 'motion [(sensor|sensors)]', on: '(on|detected|triggered)', off: 'clear' },
  { device_class: 'occupancy', noun: 'occupancy [(sensor|sensors)]', on: '(on|detected|triggered|occupied)', off: 'clear' },
  { device_class: 'opening', noun: '(opening|openings)', on: '(open|opened)', off: '(closed|shut)' },
  { device_class: 'plug', noun: '(device|devices)', on: 'plugged in', off: 'unplugged' },
  { device_class: 'power', noun: '(device|devices)', on: '(powered on|detected)', off: 'powered off' },
  { device_class: 'presence', noun: '(device|devices)', on: '(home|present)', off: '(gone|away|not home)' },
  { device_class: 'problem', noun: '(problem|problems)', on: 'detected' },
  { device_class: 'running', noun: '(device|devices)', on: 'running', off: 'stopped' },
  { device_class: 'safety', noun: '(thing|things)', on: 'unsafe', off: 'safe' },
  { device_class: 'smoke', noun: 'smoke [(sensor|sensors|detector|detectors)]', on: '(on|detected|triggered)', off: 'clear' },
  { device_class: 'sound', noun: '(sound|noise) [(sensor|sensors)]', on: '(on|detected|triggered)', off: 'clear' },
  { device_class: 'tamper', noun: '(thing|things)', on: 'tampered [with]', off: 'clear' },
  { device_class: 'update', noun: '(update|updates)', on: 'available', off: 'up to date' },
  { device_class: 'vibration', noun: '(thing|things)', on: 'vibrating', off: 'still' },
  { device_class: 'window', noun: '(window|windows)', on: '(open|opened)', off: '(closed|shut)' },
];

const THERE = '[tell me if ](is there|are there|there are|there is|is|are|do i have|do we have)';
const ANY = '[(any|all|some|every|each|none of|any of|all of|the) ][the |my |our ]';
const NOW = '[ (currently|right now|now|at the moment)]';

/** "are any X on in the kitchen", "which X are on", "how many X are on": for one noun and its state words. */
function anyForms(noun: string, words: string): string[] {
  return [
    `${THERE} ${ANY}${noun}${NOW} ${words}${NOW}`,
    `${THERE} ${ANY}${noun} ${words} ${AREA}`,
    `${THERE} ${ANY}${noun} ${AREA} ${words}`,
    `(${THERE} ${ANY}|any [of the ])[(the|my|our) ]{area} ${noun} ${words}`,
    `${THERE} ${ANY}${noun} ${words} ${FLOOR}`,
    `${THERE} ${ANY}${noun} ${FLOOR} ${words}`,
    `(${THERE} ${ANY}|any [of the ])${noun} ${words} {floor}`,
    `(${THERE} ${ANY}|any [of the ])${noun} ${words} ${HERE}`,
    `${THERE} (any|some) ${words} ${noun}`,
    `(which|what) [of the ]${noun} (is|are)${NOW} ${words}${NOW}[ ${AREA}]`,
    `(which|what) [of the ][(the|my|our) ]{area} ${noun} (is|are) ${words}`,
    `(which|what) ${noun} ${AREA} (is|are) ${words}`,
    `(which|what) ${noun} (is|are) ${words} ${FLOOR}`,
    `how many [of the ][{area} ]${noun} (is|are)${NOW} ${words}${NOW}[ ${AREA}]`,
    `how many ${noun} (is|are) ${words} ${FLOOR}`,
    `how many ${noun} ${AREA} (is|are) ${words}`,
  ];
}

function getStateGroups(): IntentSentences[] {
  const FILLER = '{message:measure}';
  const groups: IntentSentences[] = [
    {
      intent: 'HassGetState',
      language: 'en',
      templates: [
        `(what is|whats|tell me|check|how is|hows|what does) [the ][current ](state|status|value|reading) of ${NAME}[ ${AREA}]`,
        `(what is|whats|tell me|check|how is|hows) ${NAME}[ ${AREA}]`,
        `(what is|whats|tell me) ${NAME} [(state|status|value|reading|at|showing)]`,
        `(what is|whats) [the ]{area} ${NAME}`,
        `(what is|whats|what are|tell me) [the ][current ]${FILLER} (of|in|indicated by|measured by|from|for|on|at|reported by|shown by|recorded by) ${NAME}`,
        `(what is|whats|what are|tell me) [the ]${NAME}s ${FILLER}`,
        `(what is|whats|what are|tell me) [the ]${NAME} ${FILLER}`,
        `(how much|how many) ${FILLER} (does|do|is|are) ${NAME} ${FILLER}`,
        `when (is|will|was|did) ${NAME} ${FILLER}`,
      ],
    },
    {
      intent: 'HassGetState',
      language: 'en',
      templates: [`(where is|wheres|where s|where are|locate|find) ${NAME}`],
      slots: { domain: 'person' },
    },
    {
      intent: 'HassGetState',
      language: 'en',
      templates: [`(is|are) ${NAME} [at ]home`, `(is|are) ${NAME} (in|at) [the ]home`],
      slots: { domain: 'person', state: 'home' },
    },
    {
      intent: 'HassGetState',
      language: 'en',
      templates: [
        `(is|are) (anyone|anybody|everyone|everybody|someone|somebody) [at ]home`,
        `(who is|whos|who s) [at ]home`,
        `how many (people|persons) are [at ]home`,
      ],
      slots: { domain: 'person', state: 'home' },
    },
  ];
  for (const { state, words, domain } of STATE_WORDS) {
    groups.push({
      intent: 'HassGetState',
      language: 'en',
      templates: [`${IS} ${NAME}${NOW} ${words}${NOW}[ ${AREA}]`, `${IS} ${NAME} ${AREA} ${words}`],
      slots: domain ? { domain, state } : { state },
    });
  }
  for (const { noun, slots, states } of STATE_KINDS) {
    for (const { state, words } of STATE_WORDS.filter((w) => states.includes(w.state))) {
      groups.push({ intent: 'HassGetState', language: 'en', templates: anyForms(noun, words), slots: { ...slots, state } });
    }
  }
  for (const { device_class, noun, on, off } of BINARY_CLASSES) {
    const slots = { domain: 'binary_sensor', device_class };
    for (const [state, words] of [
      ['on', on],
      ['off', off],
    ] as const) {
      if (words === undefined) continue;
      // Named first: "is CO detected" asks about the sensor called CO more than about any CO sensor.
      groups.push({
        intent: 'HassGetState',
        language: 'en',
        templates: [
          `${IS} ${NAME}${NOW} ${words}${NOW}[ ${AREA}]`,
          `${IS} ${NAME} ${AREA} ${words}`,
          `${IS} ${NAME} ${noun} ${words}`,
          `(is|are) there (any|a) ${noun} (with|on|for) ${NAME}`,
        ],
        slots: { ...slots, state },
      });
      groups.push({
        intent: 'HassGetState',
        language: 'en',
        templates: [
          ...anyForms(noun, words),
          `${IS} (there|anything) [any ]${noun}[ ${words}][ ${AREA}]`,
          `${IS} (there|anything) [any ]${noun}[ ${words}] ${FLOOR}`,
          `${IS} [the ]{area} ${words}`,
          `${IS} [any ]${noun} ${words}[ ${AREA}]`,
          `(is|are) anything ${words}`,
          `(what|which) ${noun} (is|are) ${words}`,
        ],
        slots: { ...slots, state },
      });
    }
  }
  return groups;
}

// Climate: the temperature of a place or a thermostat, and setting it.
const TEMP = '(temperature|temp)';
const WARM = '(warm|hot|cold|cool|chilly)';
const CLIMATE_GET: IntentSentences = {
  intent: 'HassClimateGetTemperature',
  language: 'en',
  slots: { domain: 'climate' },
  templates: [
    `(what is|whats|tell me|check|how is|hows) [the ][current ]${TEMP}[ ${HERE}]`,
    `(what is|whats|tell me|check|how is|hows) [the ][current ]${TEMP} ${AREA}`,
    `(what is|whats|tell me|check|how is|hows) [the ][current ]${TEMP} ${FLOOR}`,
    `(what is|whats|tell me|check|how is|hows) [the ]({area}|{floor}) ${TEMP}`,
    `(what is|whats|tell me|check|how is|hows) [the ][current ]${TEMP} (of|on|from) ${NAME}`,
    `(what is|whats|tell me|check) ${NAME} ${TEMP}`,
    `how ${WARM} is it[ ${HERE}]`,
    `how ${WARM} is it ${AREA}`,
    `how ${WARM} is [it ](${NAME}|[the ]{area})`,
  ],
};

const TO_TEMP = 'to {temperature}';
const CLIMATE_SET: IntentSentences = {
  intent: 'HassClimateSetTemperature',
  language: 'en',
  slots: { domain: 'climate' },
  templates: [
    `${ASK}(set|change|make|put|adjust|turn) [the ]${TEMP}[ ${HERE}] ${TO_TEMP}${THANKS}`,
    `${ASK}(set|change|make|put|adjust|turn) [the ]${TEMP} ${AREA} ${TO_TEMP}${THANKS}`,
    `${ASK}(set|change|make|put|adjust|turn) [the ]${TEMP} ${FLOOR} ${TO_TEMP}${THANKS}`,
    `${ASK}(set|change|make|put|adjust|turn) [the ]({area}|{floor}) ${TEMP} ${TO_TEMP}${THANKS}`,
    `${ASK}(set|change|make|put|adjust|turn) [the ]${TEMP} (of|on|for) ${NAME} ${TO_TEMP}${THANKS}`,
    `${ASK}(set|change|adjust|turn) ${NAME}[ ${TEMP}] ${TO_TEMP}${THANKS}`,
    `${ASK}(set|change|adjust|turn) [the ](heat|heating|thermostat|ac|air conditioning) ${TO_TEMP}${THANKS}`,
    `${ASK}(set|change|adjust|turn) [the ](heat|heating|thermostat|ac|air conditioning) ${AREA} ${TO_TEMP}${THANKS}`,
    `${ASK}(set|change|adjust|turn) [the ]{area} (heat|heating|thermostat|ac|air conditioning) ${TO_TEMP}${THANKS}`,
  ],
};

// Positions of covers and valves: "open the curtains to 50%", "set main valve to 100".
const POSITION = '{position}';
function positionGroups(): IntentSentences[] {
  const SET_POS = '(set|change|move|put|adjust|turn|open|close|raise|lower|increase|decrease|bring)';
  const POS_WORD = '[ (position|opening|level)]';
  const groups: IntentSentences[] = [];
  for (const domain of ['cover', 'valve']) {
    groups.push({
      intent: 'HassSetPosition',
      language: 'en',
      templates: [
        `${ASK}${SET_POS} ${NAME}${POS_WORD} to ${POSITION}${THANKS}`,
        `${ASK}${SET_POS} [the ](position|opening|level) of ${NAME} to ${POSITION}${THANKS}`,
        `${ASK}${SET_POS} ${NAME} ${AREA}${POS_WORD} to ${POSITION}${THANKS}`,
      ],
      slots: { domain },
    });
  }
  for (const { noun, device_class } of COVER_CLASSES) {
    const slots: Record<string, string> = { domain: 'cover', ...(device_class ? { device_class } : {}) };
    groups.push({
      intent: 'HassSetPosition',
      language: 'en',
      templates: [
        `${ASK}${SET_POS} ${THE}${noun}${POS_WORD} ${AREA} to ${POSITION}${THANKS}`,
        `${ASK}${SET_POS} ${THE}${noun}${POS_WORD} to ${POSITION} ${AREA}${THANKS}`,
        `${ASK}${SET_POS} ${THE}[(the|my|our) ]{area} ${noun}${POS_WORD} to ${POSITION}${THANKS}`,
        `${ASK}${SET_POS} ${THE}${noun}${POS_WORD} ${FLOOR} to ${POSITION}${THANKS}`,
        `${ASK}${SET_POS} ${THE}${noun}${POS_WORD} ${HERE} to ${POSITION}${THANKS}`,
        `${ASK}${SET_POS} ${THE}${noun}${POS_WORD} to ${POSITION} ${HERE}${THANKS}`,
      ],
      slots,
    });
  }
  return groups;
}

export const EN_CONTROL: IntentSentences[] = [
  ...onOff('HassTurnOn'),
  ...onOff('HassTurnOff'),
  ...coverGroups('HassTurnOn'),
  ...coverGroups('HassTurnOff'),
  ...valveGroups('HassTurnOn'),
  ...valveGroups('HassTurnOff'),
  ...lockGroups('HassTurnOn'),
  ...lockGroups('HassTurnOff'),
  ...SCENES_AND_SCRIPTS,
  ...lightSetGroups(),
  ...getStateGroups(),
  CLIMATE_GET,
  CLIMATE_SET,
  ...positionGroups(),
];

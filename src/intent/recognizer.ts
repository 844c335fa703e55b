/**
 * The local intent recogniser (issue 11): turns a sentence into {intent, slots} without an LLM.
 * It builds the lists every sentence file may name (see intent-sentences.ts) from the home — entity
 * names and aliases, areas, floors — plus fixed vocabularies (colours, numbers, durations), compiles
 * every template once per home, and answers with the best-scoring whole-sentence match among the
 * templates of the sentence's language. A changed home means new lists, so `setHome` recompiles;
 * recognising only walks the compiled templates (lists are tries inside them, never re-read).
 */
import type { IntentLanguage, IntentSentences } from './intent-sentences.js';
import { type CompiledTemplate, compileTemplate, matchTemplate, type SlotList, type SlotValue } from './template-grammar.js';
import { normalizeText } from './text-normalize.js';

export interface HomeArea {
  name: string;
  aliases?: readonly string[];
  floor?: string;
}

export interface HomeFloor {
  name: string;
  aliases?: readonly string[];
}

export interface HomeEntity {
  name: string;
  aliases?: readonly string[];
  /** The entity id's domain: light, switch, cover, sensor, ... */
  domain: string;
  /** The area's name as registered (not an id). */
  area?: string;
  device_class?: string;
}

export interface IntentHome {
  areas: readonly HomeArea[];
  floors: readonly HomeFloor[];
  entities: readonly HomeEntity[];
}

export interface RecogniseContext {
  /** The area of the device that heard the request. */
  area?: string;
}

export interface RecognisedIntent {
  name: string;
  slots: Record<string, SlotValue>;
  score: number;
}

/**
 * A fixed slot a template may carry to say "the whole home was meant" ("turn off every light in
 * the house"): it stops the area defaulting to the satellite's area and is not returned.
 */
export const WHOLE_HOME_SLOT = 'scope';
export const WHOLE_HOME_VALUE = 'home';

/**
 * Intents that act on or ask about things in a place: only these take the satellite's area when
 * the sentence names neither an area, a floor nor a device (timers, dates, shopping lists do not).
 */
const AREA_INTENTS = new Set([
  'HassTurnOn',
  'HassTurnOff',
  'HassToggle',
  'HassLightSet',
  'HassGetState',
  'HassClimateGetTemperature',
  'HassClimateSetTemperature',
  'HassSetPosition',
  'HassSetVolume',
  'HassMediaPause',
  'HassMediaUnpause',
  'HassMediaNext',
  'HassMediaPrevious',
  'HassVacuumStart',
  'HassVacuumReturnToBase',
]);

/**
 * The grammar weighs list characters 1.2 against 1 for literal ones, so that a longer name beats a
 * shorter one. Between a place or device name and the same words said literally ("the kitchen
 * light": area + "light", or an entity called "Light"; "garage door": area + "door" or the garage
 * door class) that bonus would pick the name, so it is taken back for these slots and the template
 * declared first wins the tie.
 */
const PLACE_SLOTS = new Set(['name', 'area', 'floor']);
const PLACE_BONUS = 0.2;

/** Colour words → the English colour name the light service takes. */
const COLOURS: ReadonlyArray<{ value: string; phrases: string[] }> = [
  { value: 'red', phrases: ['red', '红色', '红'] },
  { value: 'orange', phrases: ['orange', '橙色', '橘色', '橙'] },
  { value: 'yellow', phrases: ['yellow', '黄色', '黄'] },
  { value: 'green', phrases: ['green', '绿色', '绿'] },
  { value: 'blue', phrases: ['blue', '蓝色', '蓝'] },
  { value: 'cyan', phrases: ['cyan', '青色'] },
  { value: 'purple', phrases: ['purple', '紫色', '紫'] },
  { value: 'violet', phrases: ['violet'] },
  { value: 'magenta', phrases: ['magenta', '品红色'] },
  { value: 'pink', phrases: ['pink', '粉色', '粉红色', '粉红'] },
  { value: 'white', phrases: ['white', '白色', '白'] },
  { value: 'warm white', phrases: ['warm white', '暖白色', '暖白'] },
  { value: 'cold white', phrases: ['cold white', 'cool white', '冷白色', '冷白'] },
  { value: 'brown', phrases: ['brown', '棕色'] },
  { value: 'gold', phrases: ['gold', '金色'] },
  { value: 'gray', phrases: ['gray', 'grey', '灰色'] },
];

// Longest first: the grammar strips the first unit that ends the span, and "摄氏度" ends in "度".
const TEMPERATURE_UNITS = [
  'degrees celsius',
  'degrees fahrenheit',
  'degree celsius',
  'degree fahrenheit',
  'degrees',
  'degree',
  'celsius',
  'fahrenheit',
  '摄氏度',
  '华氏度',
  '度',
].sort((a, b) => b.length - a.length);

/** The languages sentence files exist for; `zh-cn`, `zh-hans`, `en-gb` fold onto them. */
export function intentLanguageOf(language: string): IntentLanguage | undefined {
  const base = language.trim().toLowerCase().split(/[-_]/u)[0];
  return base === 'en' || base === 'zh' ? base : undefined;
}

function valuesList(items: ReadonlyArray<{ name: string; aliases?: readonly string[] }>): SlotList {
  // One value per registered name; a blank alias would make an empty phrase, which the grammar rejects.
  const byName = new Map<string, Set<string>>();
  for (const item of items) {
    const phrases = byName.get(item.name) ?? new Set<string>();
    for (const phrase of [item.name, ...(item.aliases ?? [])]) if (phrase.trim() !== '') phrases.add(phrase);
    byName.set(item.name, phrases);
  }
  return { type: 'values', values: [...byName].map(([value, phrases]) => ({ value, phrases: [...phrases] })) };
}

/** The lists of intent-sentences.ts for one home; every language shares them (values are language-neutral). */
export function buildIntentLists(home: IntentHome): Record<string, SlotList> {
  const percent = (): SlotList => ({ type: 'range', from: 0, to: 100, percent: true });
  // An empty values list is still a valid list: templates naming it simply never match.
  return {
    name: valuesList(home.entities),
    area: valuesList(home.areas),
    floor: valuesList(home.floors),
    brightness: percent(),
    position: percent(),
    volume: percent(),
    temperature: { type: 'range', from: -50, to: 120, units: TEMPERATURE_UNITS },
    color: { type: 'values', values: COLOURS },
    duration: { type: 'duration' },
    item: { type: 'wildcard' },
    list_name: { type: 'wildcard' },
    timer_name: { type: 'wildcard' },
    search_query: { type: 'wildcard' },
    message: { type: 'wildcard' },
  };
}

interface CompiledIntent {
  intent: string;
  template: CompiledTemplate;
  slots: Readonly<Record<string, SlotValue>>;
  /** Literal text every match must contain: a sentence lacking one skips the template unmatched. */
  required: readonly string[];
}

/** The grammar's template tree as far as the prefilter reads it (text, sequences, alternatives). */
type TemplateNode =
  | { kind: 'text'; chars: string }
  | { kind: 'seq'; items: readonly TemplateNode[] }
  | { kind: 'alt'; options: readonly TemplateNode[]; optional: boolean }
  | { kind: 'space' | 'slot' };

/**
 * Literal pieces that every match of a template contains. Matching every template on every
 * sentence is what costs; a substring test on these rules out most templates first.
 */
function requiredLiterals(node: TemplateNode): string[] {
  switch (node.kind) {
    case 'text':
      return [node.chars];
    case 'seq':
      return node.items.flatMap(requiredLiterals);
    case 'alt': {
      if (node.optional || node.options.length === 0) return [];
      // A piece common to every option is required; the first option's pieces are the candidates.
      const [first, ...rest] = node.options.map(requiredLiterals);
      return (first ?? []).filter((piece) => rest.every((option) => option.some((p) => p.includes(piece))));
    }
    default:
      return [];
  }
}

export class IntentRecognizer {
  private readonly sentences: readonly IntentSentences[];
  private byLanguage = new Map<IntentLanguage, CompiledIntent[]>();
  /** Registered name → the domains of the entities carrying it, to resolve and check `domain`. */
  private domainsByName = new Map<string, Set<string>>();
  private classesByName = new Map<string, Set<string>>();

  /** Throws HA_ERR_INTENT_TEMPLATE (from the grammar) when a template is malformed or names an unknown list. */
  constructor(sentences: readonly IntentSentences[], home: IntentHome) {
    this.sentences = sentences;
    this.setHome(home);
  }

  /** Recompiles every template against the new home's names; the old compilation stays if this throws. */
  setHome(home: IntentHome): void {
    const lists = buildIntentLists(home);
    const next = new Map<IntentLanguage, CompiledIntent[]>();
    for (const group of this.sentences) {
      const compiled = next.get(group.language) ?? [];
      for (const source of group.templates) {
        const template = compileTemplate(source, lists);
        const required = [...new Set(requiredLiterals(template.root as TemplateNode))];
        compiled.push({ intent: group.intent, template, slots: group.slots ?? {}, required });
      }
      next.set(group.language, compiled);
    }
    const domains = new Map<string, Set<string>>();
    for (const entity of home.entities) domains.set(entity.name, (domains.get(entity.name) ?? new Set()).add(entity.domain));
    this.byLanguage = next;
    const classes = new Map<string, Set<string>>();
    for (const entity of home.entities) {
      if (entity.device_class !== undefined) classes.set(entity.name, (classes.get(entity.name) ?? new Set()).add(entity.device_class));
    }
    this.domainsByName = domains;
    this.classesByName = classes;
  }

  /** The best match among `language`'s templates, or undefined when none matches the whole sentence. */
  recognise(text: string, language: string, context: RecogniseContext = {}): RecognisedIntent | undefined {
    const lang = intentLanguageOf(language);
    const candidates = lang === undefined ? undefined : this.byLanguage.get(lang);
    if (!candidates) return undefined;
    const normal = normalizeText(text);
    let best: { entry: CompiledIntent; slots: Record<string, SlotValue>; score: number } | undefined;
    for (const entry of candidates) {
      if (!entry.required.every((piece) => normal.includes(piece))) continue;
      for (const match of matchTemplate(entry.template, text)) {
        const slots: Record<string, SlotValue> = {};
        let score = match.score;
        for (const [slot, bound] of Object.entries(match.slots)) {
          slots[slot] = bound.value;
          if (PLACE_SLOTS.has(slot)) score -= PLACE_BONUS * bound.text.length;
        }
        if (!this.fits(slots.name, entry.slots)) continue;
        // Strictly greater: on a tie the template declared first wins, so files can order their forms.
        if (!best || score > best.score) best = { entry, slots, score };
        break;
      }
    }
    if (!best) return undefined;
    const { [WHOLE_HOME_SLOT]: scope, ...fixed } = best.entry.slots;
    const slots: Record<string, SlotValue> = { ...fixed, ...best.slots };
    splitDurations(slots);
    // A named device tells its domain and class; say them when the name is unambiguous.
    const known = slots.name === undefined ? undefined : this.domainsByName.get(String(slots.name));
    if (slots.domain === undefined && known?.size === 1) slots.domain = [...known][0] as string;
    const classes = slots.name === undefined ? undefined : this.classesByName.get(String(slots.name));
    if (slots.device_class === undefined && classes?.size === 1) slots.device_class = [...classes][0] as string;
    const saidWhere = 'area' in slots || 'floor' in slots || 'name' in slots;
    if (!saidWhere && scope !== WHOLE_HOME_VALUE && context.area !== undefined && AREA_INTENTS.has(best.entry.intent)) {
      slots.area = context.area;
    }
    return { name: best.entry.intent, slots, score: best.score };
  }

  /**
   * A template for one domain or device class ("open the {name}" for covers, "is {name} wet" for
   * moisture sensors) must not take a device of another.
   */
  private fits(name: SlotValue | undefined, fixed: Readonly<Record<string, SlotValue>>): boolean {
    if (name === undefined) return true;
    const key = String(name);
    const { domain, device_class: deviceClass } = fixed;
    if (domain !== undefined && this.domainsByName.get(key)?.has(String(domain)) === false) return false;
    if (deviceClass !== undefined && this.classesByName.get(key)?.has(String(deviceClass)) === false) return false;
    return true;
  }
}

/**
 * Timer intents carry a length as hours, minutes and seconds (Home Assistant's slots): the
 * template's {duration} (seconds) becomes its whole parts, {start_duration} the start_ ones.
 * 5400 s → hours 1, minutes 30; 330 s → minutes 5, seconds 30.
 */
function splitDurations(slots: Record<string, SlotValue>): void {
  for (const [slot, prefix] of [
    ['duration', ''],
    ['start_duration', 'start_'],
  ] as const) {
    const total = slots[slot];
    if (typeof total !== 'number') continue;
    delete slots[slot];
    const rounded = Math.round(total);
    const parts = { hours: Math.floor(rounded / 3600), minutes: Math.floor((rounded % 3600) / 60), seconds: rounded % 60 };
    for (const [unit, value] of Object.entries(parts)) if (value > 0) slots[`${prefix}${unit}`] = value;
  }
}

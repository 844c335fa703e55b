/**
 * The local intent recogniser (issue 11): turns a sentence into {intent, slots} without an LLM.
 * It builds the lists every sentence file may name (see intent-sentences.ts) from the home — entity
 * names and aliases, areas, floors — plus fixed vocabularies (colours, numbers, durations), compiles
 * every template once per home, and answers with the best-scoring whole-sentence match among the
 * templates of the sentence's language. A changed home means new lists, so `setHome` recompiles;
 * recognising only walks the compiled templates (lists are tries inside them, never re-read).
 */
import type { IntentLanguage, IntentSentences } from './intent-sentences.js';
import { NearNameIndex, type NearResolution, type WordSplitter } from './near-name.js';
import {
  type CompiledTemplate,
  matchNormalised,
  mayMatch,
  type OpenLists,
  type SlotList,
  type SlotValue,
  type TemplateEdges,
  TemplateSet,
  templateEdges,
} from './template-grammar.js';
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
  /**
   * A light's supported colour modes as Home Assistant states them ("onoff" only: a plain relay,
   * no brightness; "brightness"; "hs", "rgb", "xy", "color_temp"...). Absent: not known, so allowed.
   */
  color_modes?: readonly string[];
}

export interface IntentHome {
  areas: readonly HomeArea[];
  floors: readonly HomeFloor[];
  entities: readonly HomeEntity[];
}

export interface RecogniseContext {
  /** The area of the device that heard the request. */
  area?: string;
  /**
   * How alike (0..1) a said name must be to a registered name or alias for a near match, tried only
   * when no template matches exactly; default DEFAULT_MIN_SIMILARITY, above 1 turns near matching off.
   */
  minSimilarity?: number;
}

/** A name or area said not quite as registered, and the registered one taken for it. */
export interface NearName {
  slot: 'name' | 'area';
  /** The words as said (normalised). */
  said: string;
  /** The registered name the slot now holds. */
  value: string;
  /** 0..1, 1 for the same text. */
  similarity: number;
}

export interface RecognisedIntent {
  name: string;
  slots: Record<string, SlotValue>;
  score: number;
  /** 1 for an exact match; for a near match the lowest similarity of its near names (below 1). */
  confidence: number;
  /** Present on near matches only: which slots were resolved by similarity. */
  near?: NearName[];
}

export const DEFAULT_MIN_SIMILARITY = 0.6;

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
  'HassMediaSearchAndPlay',
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

/** The lists a near match may take text for that is not quite a registered phrase (see near-name.ts). */
const NEAR_LISTS: ReadonlySet<string> = new Set(['name', 'area']);
const PLACE_BONUS = 0.2;
/** Scores closer than this are equal (float noise of the weights above). */
const SCORE_TIE = 1e-9;

/** Colour words → the English colour name the light service takes. */
export const COLOURS: ReadonlyArray<{ value: string; phrases: string[] }> = [
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
  /** Where its matches can begin and end (with the near lists open, in the near index). */
  edges: TemplateEdges;
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
function requiredLiterals(node: TemplateNode): readonly string[] {
  const known = requiredMemo.get(node);
  if (known) return known;
  const pieces = requiredLiteralsOf(node);
  requiredMemo.set(node, pieces);
  return pieces;
}

/**
 * Pieces per node, kept: the grammar shares a subtree between every template holding it, and
 * working its pieces out again per template was a fifth of compiling the shipped sentences.
 */
const requiredMemo = new WeakMap<TemplateNode, readonly string[]>();

function requiredLiteralsOf(node: TemplateNode): readonly string[] {
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

/**
 * A language's templates by the character a match can start with, each list in declaration order
 * (ties go to the template declared first): a sentence visits only the templates that can start
 * the way it does, plus those that can start with anything (a number, a wildcard).
 */
interface TemplateIndex {
  all: readonly CompiledIntent[];
  byFirstChar: ReadonlyMap<string, readonly CompiledIntent[]>;
  anyFirst: readonly CompiledIntent[];
}

function indexByFirstChar(entries: readonly CompiledIntent[]): TemplateIndex {
  const byFirstChar = new Map<string, CompiledIntent[]>();
  for (const entry of entries) for (const ch of entry.edges.first ?? []) byFirstChar.set(ch, []);
  const anyFirst: CompiledIntent[] = [];
  for (const entry of entries) {
    const { first } = entry.edges;
    if (first === undefined) {
      anyFirst.push(entry);
      for (const list of byFirstChar.values()) list.push(entry);
    } else for (const ch of first) byFirstChar.get(ch)?.push(entry);
  }
  return { all: entries, byFirstChar, anyFirst };
}

/** The templates of `index` a normalised sentence can match, in declaration order. */
function candidatesFor(index: TemplateIndex, normal: string): readonly CompiledIntent[] {
  return normal === '' ? index.all : (index.byFirstChar.get(normal[0] as string) ?? index.anyFirst);
}

/** The near pass's templates (indexed by their edges with the near lists open) and the names to resolve against. */
interface NearState {
  byLanguage: ReadonlyMap<IntentLanguage, TemplateIndex>;
  names: ReadonlyMap<string, NearNameIndex>;
}

/** A match before the finishing touches: the template it came from and its slots. */
interface Found {
  entry: CompiledIntent;
  slots: Record<string, SlotValue>;
  score: number;
  /** Slots holding free text (items, search queries, messages), given back as the person wrote them. */
  free?: string[];
}

export interface IntentRecognizerOptions {
  /** How Chinese names are split into words for near matching; jieba (loaded on first use) by default. */
  splitWords?: WordSplitter;
}

export class IntentRecognizer {
  private readonly sentences: readonly IntentSentences[];
  private readonly splitWords: WordSplitter | undefined;
  private byLanguage = new Map<IntentLanguage, TemplateIndex>();
  private compiled = new Map<IntentLanguage, CompiledIntent[]>();
  private lists: Record<string, SlotList> = {};
  private near: NearState | undefined;
  /** Registered name → the domains of the entities carrying it, to resolve and check `domain`. */
  private domainsByName = new Map<string, Set<string>>();
  private classesByName = new Map<string, Set<string>>();

  /** Throws HA_ERR_INTENT_TEMPLATE (from the grammar) when a template is malformed or names an unknown list. */
  constructor(sentences: readonly IntentSentences[], home: IntentHome, options: IntentRecognizerOptions = {}) {
    this.sentences = sentences;
    this.splitWords = options.splitWords;
    this.setHome(home);
  }

  /** Recompiles every template against the new home's names; the old compilation stays if this throws. */
  setHome(home: IntentHome): void {
    const lists = buildIntentLists(home);
    const next = new Map<IntentLanguage, CompiledIntent[]>();
    // One set for all templates: they share their common subtrees (see TemplateSet).
    const templates = new TemplateSet(lists);
    for (const group of this.sentences) {
      const compiled = next.get(group.language) ?? [];
      for (const source of group.templates) {
        const template = templates.compile(source);
        const required = [...new Set(requiredLiterals(template.root as TemplateNode))];
        compiled.push({ intent: group.intent, template, slots: group.slots ?? {}, required, edges: template.edges });
      }
      next.set(group.language, compiled);
    }
    const domains = new Map<string, Set<string>>();
    for (const entity of home.entities) domains.set(entity.name, (domains.get(entity.name) ?? new Set()).add(entity.domain));
    const classes = new Map<string, Set<string>>();
    for (const entity of home.entities) {
      if (entity.device_class !== undefined) classes.set(entity.name, (classes.get(entity.name) ?? new Set()).add(entity.device_class));
    }
    this.compiled = next;
    this.lists = lists;
    this.near = undefined;
    this.byLanguage = new Map([...next].map(([language, entries]) => [language, indexByFirstChar(entries)]));
    this.domainsByName = domains;
    this.classesByName = classes;
  }

  /**
   * What the near pass needs, built the first time a sentence matches nothing exactly after a home
   * change rather than in setHome: most homes change more often than a name is misheard.
   */
  private nearState(): NearState {
    if (this.near !== undefined) return this.near;
    const byLanguage = new Map<IntentLanguage, TemplateIndex>();
    for (const [language, entries] of this.compiled) {
      const open = entries
        .filter(({ template }) => Object.values(template.slotLists).some((list) => NEAR_LISTS.has(list)))
        .map((entry) => ({ ...entry, edges: templateEdges(entry.template, NEAR_LISTS) }));
      byLanguage.set(language, indexByFirstChar(open));
    }
    const names = new Map<string, NearNameIndex>();
    for (const list of NEAR_LISTS) {
      const spec = this.lists[list];
      if (spec?.type !== 'values') continue;
      const candidates = spec.values.map(({ value, phrases }) => ({ value: String(value), phrases }));
      names.set(list, new NearNameIndex(candidates, this.splitWords));
    }
    this.near = { byLanguage, names };
    return this.near;
  }

  /**
   * The best exact match among `language`'s templates (confidence 1); when there is none, the best
   * near match, with names or areas said not quite as registered (confidence below 1, see
   * RecogniseContext.minSimilarity); undefined when neither exists.
   */
  recognise(text: string, language: string, context: RecogniseContext = {}): RecognisedIntent | undefined {
    const lang = intentLanguageOf(language);
    const index = lang === undefined ? undefined : this.byLanguage.get(lang);
    if (lang === undefined || !index) return undefined;
    const normal = normalizeText(text);
    const exact = this.bestExact(index, normal);
    if (exact) return this.finish(exact, context, 1, [], text);
    const minSimilarity = context.minSimilarity ?? DEFAULT_MIN_SIMILARITY;
    if (normal === '' || minSimilarity > 1) return undefined;
    const state = this.nearState();
    const nearIndex = state.byLanguage.get(lang);
    if (!nearIndex) return undefined;
    const near = this.bestNear(state.names, nearIndex, normal, Math.max(0, minSimilarity));
    return near && this.finish(near, context, near.confidence, near.near, text);
  }

  private bestExact(index: TemplateIndex, normal: string): Found | undefined {
    let best: Found | undefined;
    for (const entry of candidatesFor(index, normal)) {
      if (!mayMatch(entry.edges, normal) || !entry.required.every((piece) => normal.includes(piece))) continue;
      for (const match of matchNormalised(entry.template, normal)) {
        const slots: Record<string, SlotValue> = {};
        const free: string[] = [];
        let score = match.score;
        for (const [slot, bound] of Object.entries(match.slots)) {
          slots[slot] = bound.value;
          if (bound.free) free.push(slot);
          if (PLACE_SLOTS.has(slot)) score -= PLACE_BONUS * bound.text.length;
        }
        if (!this.fits(slots.name, entry.slots)) continue;
        // Strictly greater: on a tie the template declared first wins, so files can order their forms.
        // Weights like 1.2 − 0.2 are not exact in binary (3 × 1.2 − 3 × 0.2 < 3), so a tie is within SCORE_TIE.
        if (!best || score > best.score + SCORE_TIE) best = { entry, slots, score, free };
        break;
      }
    }
    return best;
  }

  /**
   * The templates naming a name or an area list, matched with those lists open; what each open
   * slot took is resolved to the closest registered name. The most alike reading wins (its least
   * alike slot decides), then the better template score, then the template declared first.
   */
  private bestNear(
    names: ReadonlyMap<string, NearNameIndex>,
    index: TemplateIndex,
    normal: string,
    minSimilarity: number,
  ): (Found & { confidence: number; near: NearName[] }) | undefined {
    let best: (Found & { confidence: number; near: NearName[] }) | undefined;
    // A reading is only worth having if it is at least as alike as the best so far (a tie may still
    // win on score), so the bar rises as readings are found and names below it are not looked for.
    // It only rises, so a span once rejected stays rejected and one once resolved keeps its answer.
    const resolved = new Map<string, NearResolution | undefined>();
    const resolve = (list: string, said: string): NearResolution | undefined => {
      const key = `${list}\u0001${said}`;
      if (!resolved.has(key)) resolved.set(key, names.get(list)?.resolve(said, Math.max(minSimilarity, best?.confidence ?? 0)));
      const found = resolved.get(key);
      return found !== undefined && found.similarity >= (best?.confidence ?? 0) ? found : undefined;
    };
    const open: OpenLists = { lists: NEAR_LISTS, accepts: (list, said) => resolve(list, said) !== undefined };
    for (const entry of candidatesFor(index, normal)) {
      if (!mayMatch(entry.edges, normal) || !entry.required.every((piece) => normal.includes(piece))) continue;
      for (const match of matchNormalised(entry.template, normal, open)) {
        const slots: Record<string, SlotValue> = {};
        const near: NearName[] = [];
        let confidence = 1;
        let resolvedAll = true;
        for (const [slot, bound] of Object.entries(match.slots)) {
          const list = entry.template.slotLists[slot] ?? slot;
          if (!NEAR_LISTS.has(list)) {
            slots[slot] = bound.value;
            continue;
          }
          const found = resolve(list, bound.text);
          if (found === undefined) {
            resolvedAll = false;
            break;
          }
          slots[slot] = found.value;
          confidence = Math.min(confidence, found.similarity);
          if (found.similarity < 1)
            near.push({ slot: list as NearName['slot'], said: bound.text, value: found.value, similarity: found.similarity });
        }
        if (!resolvedAll || !this.fits(slots.name, entry.slots)) continue;
        const better = !best || confidence > best.confidence || (confidence === best.confidence && match.score > best.score);
        if (better) best = { entry, slots, score: match.score, confidence, near };
      }
    }
    return best;
  }

  /** The slots as callers see them: fixed ones, durations split, domain and area filled in. */
  private finish(found: Found, context: RecogniseContext, confidence: number, near: NearName[], text: string): RecognisedIntent {
    const { [WHOLE_HOME_SLOT]: scope, ...fixed } = found.entry.slots;
    const slots: Record<string, SlotValue> = { ...fixed, ...found.slots };
    for (const slot of found.free ?? []) slots[slot] = asWritten(text, String(slots[slot]));
    splitDurations(slots);
    // A named device tells its domain and class; say them when the name is unambiguous.
    const known = slots.name === undefined ? undefined : this.domainsByName.get(String(slots.name));
    if (slots.domain === undefined && known?.size === 1) slots.domain = [...known][0] as string;
    const classes = slots.name === undefined ? undefined : this.classesByName.get(String(slots.name));
    if (slots.device_class === undefined && classes?.size === 1) slots.device_class = [...classes][0] as string;
    const saidWhere = 'area' in slots || 'floor' in slots || 'name' in slots;
    if (!saidWhere && scope !== WHOLE_HOME_VALUE && context.area !== undefined && AREA_INTENTS.has(found.entry.intent)) {
      slots.area = context.area;
    }
    const recognised: RecognisedIntent = { name: found.entry.intent, slots, score: found.score, confidence };
    if (near.length > 0) recognised.near = near;
    return recognised;
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
 * The words of `text` whose normal form is `normal`, as written ("play The Office" → "The Office",
 * "add Oat Milk to the list" → "Oat Milk"): a search query or a list item keeps its capitals.
 * Text without spaces (Chinese) has no case to keep, and a span not found stays as matched.
 */
function asWritten(text: string, normal: string): string {
  const words = [...text.matchAll(/\S+/gu)];
  for (let first = 0; first < words.length; first++) {
    for (let last = first; last < words.length; last++) {
      const start = words[first]?.index ?? 0;
      const end = (words[last]?.index ?? 0) + (words[last]?.[0].length ?? 0);
      const span = text.slice(start, end);
      const said = normalizeText(span);
      if (said === normal) return span.replace(EDGE_PUNCTUATION, '');
      if (said.length > normal.length) break;
    }
  }
  return normal;
}

/** Punctuation around a span that the normal form dropped ("The Office?" → "The Office"). */
const EDGE_PUNCTUATION = /^[\p{P}\s]+|[\p{P}\s]+$/gu;

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

/**
 * The local intent engine's one entry point (issue 26): what a sentence means, from the template
 * recogniser (exact Home Assistant-style templates) and the compositional one (compose/) together,
 * with the conversation's memory of its last target. Templates go first when they match exactly;
 * composition takes over when no template matches, when a template's reading fails the intent
 * schema ("start the ceiling fan" as a vacuum start, a list called "shopping list please", a
 * brightness for a plain relay), and when it explains more (a compound command). The answer is one
 * or more intents, a question back (several devices fit), a refusal that says what the device can
 * do, or nothing (the sentence is for the model).
 */
import { Composer, type Referent } from './compose/composer.js';
import { checkIntent, type Unsupported } from './compose/intent-schema.js';
import type { Meaning } from './compose/lexicon.js';
import { tidyItem } from './compose/list-items.js';
import { SpellingRepair } from './compose/spelling.js';
import type { IntentLanguage, IntentSentences } from './intent-sentences.js';
import { QUERY_INTENTS } from './query-intents.js';
import { type IntentHome, IntentRecognizer, type IntentRecognizerOptions, intentLanguageOf, type RecognisedIntent } from './recognizer.js';

export type Understanding =
  | { kind: 'intents'; intents: RecognisedIntent[]; confidence: number; source: 'template' | 'composed' }
  | { kind: 'ask'; candidates: string[] }
  | { kind: 'unsupported'; why: Unsupported; names: string[] }
  | { kind: 'none' };

export interface UnderstandContext {
  /** The area of the device that heard the request. */
  area?: string;
  /** The conversation the sentence belongs to: follow-ups refer to its last target. */
  conversation?: string;
  minSimilarity?: number;
  /** Milliseconds since the epoch; the clock of the follow-up quiet time. */
  now?: number;
}

export interface UnderstanderOptions extends IntentRecognizerOptions {
  /** After this long without a command the conversation's last target is forgotten (seconds). */
  followupQuietS?: number;
  /** At most this many conversations are remembered; the oldest goes first. */
  maxConversations?: number;
}

/** Defaults mirrored in the config schema (intent.followup_quiet_s). */
export const DEFAULT_FOLLOWUP_QUIET_S = 120;
const DEFAULT_MAX_CONVERSATIONS = 256;

/** Intents acting on a named list must name a list the home has; a template's free text may not. */
const LIST_INTENTS = new Set(['HassListAddItem', 'HassListCompleteItem']);
const ON_OFF_INTENTS = new Set(['HassTurnOn', 'HassTurnOff', 'HassToggle']);
/** Why the composer calls a sentence talk about the home rather than a request (its lexicon's blocks). */
const TALK = new Set(['past', 'why', 'condition', 'except', 'later', 'correction']);
/** Talk that is not a question either: "the lights in the kitchen are too bright" asks nothing. */
const NOT_A_QUESTION = new Set(['complaint']);

export class IntentUnderstander {
  readonly recognizer: IntentRecognizer;
  private composers = new Map<IntentLanguage, Composer>();
  private readonly sentences: readonly IntentSentences[];
  private spelling: SpellingRepair | undefined;
  private home: IntentHome;
  private readonly quietMs: number;
  private readonly maxConversations: number;
  private readonly memory = new Map<string, { referent: Referent; at: number }>();

  constructor(sentences: readonly IntentSentences[], home: IntentHome, options: UnderstanderOptions = {}) {
    this.recognizer = new IntentRecognizer(sentences, home, options);
    this.sentences = sentences;
    this.home = home;
    this.quietMs = (options.followupQuietS ?? DEFAULT_FOLLOWUP_QUIET_S) * 1000;
    this.maxConversations = options.maxConversations ?? DEFAULT_MAX_CONVERSATIONS;
  }

  setHome(home: IntentHome): void {
    this.recognizer.setHome(home);
    this.home = home;
    this.composers = new Map();
    this.spelling = undefined;
  }

  /** The names the home's lists are said by, for telling a list from an item ("购物清单上的鸡蛋"). */
  private listNames(): string[] {
    return this.home.entities.filter((e) => e.domain === 'todo').flatMap((e) => [e.name, ...(e.aliases ?? [])]);
  }

  private composer(lang: IntentLanguage): Composer {
    let composer = this.composers.get(lang);
    if (!composer) {
      composer = new Composer(this.home, lang);
      this.composers.set(lang, composer);
    }
    return composer;
  }

  /** Builds what the first sentence would (the bench's compile figure). */
  warm(): void {
    for (const lang of ['en', 'zh'] as const) this.composer(lang);
    this.spelling ??= new SpellingRepair(this.sentences, this.home);
  }

  understand(text: string, language: string, context: UnderstandContext = {}): Understanding {
    const lang = intentLanguageOf(language);
    if (lang === undefined) return { kind: 'none' };
    const now = context.now ?? Date.now();
    const remembered = context.conversation === undefined ? undefined : this.memory.get(context.conversation);
    const referent = remembered && now - remembered.at <= this.quietMs ? remembered.referent : undefined;
    let result = this.decide(text, lang, context, referent);
    // English slips: when the sentence as said is not understood for sure, its repaired spelling
    // is tried (free text such as a list item or a song title is never repaired in a sure match).
    if (lang === 'en' && (result.kind !== 'intents' || result.confidence < 1)) {
      this.spelling ??= new SpellingRepair(this.sentences, this.home);
      const { text: repaired, similarity } = this.spelling.repairWithSimilarity(text);
      if (repaired !== text) {
        const again = lowerConfidence(this.decide(repaired, lang, context, referent), similarity);
        const better = again.kind === 'intents' && (result.kind !== 'intents' || again.confidence > result.confidence);
        if (better || (result.kind === 'none' && again.kind !== 'none')) result = again;
      }
    }
    if (context.conversation !== undefined && result.kind === 'intents') {
      const last = [...result.intents].reverse().find((i) => ['name', 'area', 'floor', 'domain'].some((k) => k in i.slots));
      if (last) this.remember(context.conversation, { intent: last }, now);
    }
    return result;
  }

  private remember(conversation: string, referent: Referent, at: number): void {
    this.memory.delete(conversation);
    this.memory.set(conversation, { referent, at });
    while (this.memory.size > this.maxConversations) this.memory.delete(this.memory.keys().next().value as string);
  }

  /** Forgets a conversation's last target at once (the person said "never mind"). */
  forget(conversation: string): void {
    this.memory.delete(conversation);
  }

  private decide(text: string, lang: IntentLanguage, context: UnderstandContext, referent: Referent | undefined): Understanding {
    const composer = this.composer(lang);
    const composed = composer.compose(text, { ...(context.area !== undefined && { area: context.area }), ...(referent && { referent }) });
    let template = this.recognizer.recognise(text, lang, {
      ...(context.area !== undefined && { area: context.area }),
      ...(context.minSimilarity !== undefined && { minSimilarity: context.minSimilarity }),
    });
    if (template && !tidyListName(template, this.home)) template = undefined;
    if (template && typeof template.slots.item === 'string') template.slots.item = tidyItem(template.slots.item, lang, this.listNames());
    if (template) this.nameTheOne(template, composer);
    // A device named in a place it is not in ("the bedroom tv" with the TV in the living room) is no
    // reading: acting on the one elsewhere would be a guess.
    if (template && typeof template.slots.name === 'string' && template.slots.name !== 'all' && template.slots.area !== undefined) {
      // A scene or a device with no area of its own may be said with any place ("party mode in the kitchen").
      const named = this.home.entities.filter((e) => e.name === template?.slots.name);
      const placed = named.length > 0 && named.every((e) => e.area !== undefined);
      if (placed && !named.some((e) => e.area === template?.slots.area)) template = undefined;
    }
    // A story, a "why", a condition or an exception around a template's command words ("somebody
    // left the hall light on", "if it gets dark turn on …", "all the lights except …") is not that
    // command: nothing is done.
    if (template && composed.kind === 'none' && TALK.has(composed.why) && !QUERY_INTENTS.has(template.name)) template = undefined;
    if (template && composed.kind === 'none' && NOT_A_QUESTION.has(composed.why)) template = undefined;
    // "厨房的灯灭了吧": a template's question with no question form in the sentence, where the
    // composer reads a sure command that explains every word, is that command.
    if (
      template &&
      QUERY_INTENTS.has(template.name) &&
      composed.kind === 'intents' &&
      composed.confidence >= 1 &&
      composed.intents.every((i) => !QUERY_INTENTS.has(i.name)) &&
      !composer.asksSomething(text)
    ) {
      template = undefined;
    }
    // A template reading that selects no device ("lock the garage door": the garage has no lock)
    // gives way to the composer's account of what the device there can do.
    if (
      template &&
      composed.kind === 'unsupported' &&
      ON_OFF_INTENTS.has(template.name) &&
      hasTargetSlots(template) &&
      composer.targetsOf(template.slots).length === 0
    ) {
      return { kind: 'unsupported', why: composed.why, names: composed.names };
    }
    if (template) {
      const fits = this.fits(template, composer);
      if (fits === true) {
        const compound = composed.kind === 'intents' && isCompound(composed.intents);
        const sure = template.confidence >= 1;
        if (!compound && (sure || composed.kind !== 'intents' || composed.confidence <= template.confidence)) {
          // A device kind with several candidates and no place: ask rather than act on all of them.
          if (composed.kind === 'ask' && isBareDomain(template)) return { kind: 'ask', candidates: composed.candidates };
          // A near name guessed by a template ("big light" for Night Light) is weaker than the
          // composer's question about the devices the sentence does select.
          if (composed.kind === 'ask' && !sure) return { kind: 'ask', candidates: composed.candidates };
          return { kind: 'intents', intents: [template], confidence: template.confidence, source: 'template' };
        }
      } else if (composed.kind !== 'intents' && fits !== false) {
        return { kind: 'unsupported', why: fits.why, names: fits.names };
      }
    }
    switch (composed.kind) {
      case 'intents':
        return { kind: 'intents', intents: composed.intents, confidence: composed.confidence, source: 'composed' };
      case 'ask':
        return { kind: 'ask', candidates: composed.candidates };
      case 'unsupported':
        return { kind: 'unsupported', why: composed.why, names: composed.names };
      default:
        return { kind: 'none' };
    }
  }

  /**
   * A template reading that selects exactly one device by place and kind ("the bedroom curtain")
   * also names it, as the composer's readings do, so the executor and the referent memory agree.
   */
  private nameTheOne(intent: RecognisedIntent, composer: Composer): void {
    const s = intent.slots;
    // A question about "any light in the kitchen" is answered about the kitchen's lights, whatever their number.
    if (intent.name === 'HassGetState' || s.name !== undefined || (s.area === undefined && s.floor === undefined) || s.domain === undefined)
      return;
    const targets = composer.targetsOf(s);
    if (targets.length === 1) s.name = (targets[0] as { name: string }).name;
  }

  /** The schema check on a template's reading: true, false (not a reading at all), or what the device cannot do. */
  private fits(intent: RecognisedIntent, composer: Composer): true | false | { why: Unsupported; names: string[] } {
    if (
      intent.name === 'HassMediaSearchAndPlay' &&
      typeof intent.slots.search_query === 'string' &&
      !isSearch(intent.slots.search_query, composer)
    )
      return false;
    const targets = ['name', 'area', 'floor', 'domain'].some((k) => k in intent.slots) ? composer.targetsOf(intent.slots) : [];
    const check = checkIntent(intent, targets);
    if (check.ok) return true;
    return check.why === 'action' ? false : { why: check.why, names: check.entities.map((e) => e.name) };
  }
}

/**
 * Several intents that each act on their own target, or differ in kind: a real compound. A
 * template that read "1 hour, 15 minutes and 30 seconds" as one timer is not beaten by three.
 */
function isCompound(intents: readonly RecognisedIntent[]): boolean {
  if (intents.length < 2) return false;
  const targeted = intents.every((i) => ['name', 'area', 'floor', 'domain'].some((k) => k in i.slots));
  // Several items for a list ("milk and bread") are several adds.
  const items = intents.every((i) => 'item' in i.slots);
  return targeted || items || new Set(intents.map((i) => i.name)).size > 1;
}

/** Politeness a list template's free text took in ("the shopping list please"), and the shopping list said by name. */
const LIST_EDGE = /(\s+(please|thanks|thank you|for me|now|too)|吧|一下|啊|呢|哦)+$/u;
/** What people call the shopping list; the shopping-list intents act on it. */
export const SHOPPING = /^(the\s+)?(my\s+)?(shopping|grocery|groceries)(\s+list)?$|^购物(清单|单|列表)$/u;

function tidyListName(intent: RecognisedIntent, home: IntentHome): boolean {
  if (!LIST_INTENTS.has(intent.name) || typeof intent.slots.name !== 'string') return true;
  let name = intent.slots.name.replace(LIST_EDGE, '').trim();
  // "the chores list" for a list called "Chores": the word "list" was not part of its name.
  const lists = home.entities.filter((e) => e.domain === 'todo');
  // Compared without case, spaces or punctuation ("Trader Joe's" is said "trader joes").
  const plain = (text: string) => text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');
  const known = (said: string) => lists.find((e) => [e.name, ...(e.aliases ?? [])].some((n) => plain(n) === plain(said)));
  const bare = name.replace(/\s*(list|清单|列表)$/u, '');
  const found = known(name) ?? known(bare);
  if (found) name = plain(found.name) === plain(name) ? name : found.name;
  // A home whose lists are entities names them all: free text that is none of them is no list ("from the timer").
  else if (lists.length > 0 && !SHOPPING.test(name.toLowerCase())) return false;
  if (SHOPPING.test(name.toLowerCase())) {
    intent.name = intent.name === 'HassListAddItem' ? 'HassShoppingListAddItem' : 'HassShoppingListCompleteItem';
    delete intent.slots.name;
  } else intent.slots.name = name;
  return true;
}

/** Transport words: "play the next track" skips, it searches for nothing. */
const TRANSPORT_ACTIONS = new Set(['next', 'previous', 'pause', 'resume', 'stop']);

/**
 * Whether a "play …" template's free text is something to search for: not a transport command
 * ("the next track", "下一首") and not a thing the home has by name ("观影模式" is a scene to run).
 */
function isSearch(query: string, composer: Composer): boolean {
  // "the music again", "with the kids": a word that points back or talks about people is no title.
  const notATitle = (x: Meaning) => (x.t === 'action' && TRANSPORT_ACTIONS.has(x.action)) || x.t === 'also' || x.t === 'block';
  return !composer.mentions(query).some((m) => m.piece.t === 'entity' || (m.piece.t === 'word' && m.piece.meanings.some(notATitle)));
}

function hasTargetSlots(intent: RecognisedIntent): boolean {
  return ['name', 'area', 'floor', 'domain'].some((k) => k in intent.slots);
}

function isBareDomain(intent: RecognisedIntent): boolean {
  const s = intent.slots;
  return s.domain !== undefined && s.name === undefined && s.area === undefined && s.floor === undefined;
}

/** A reading of a repaired sentence is no surer than its least alike repaired word. */
function lowerConfidence(understanding: Understanding, similarity: number): Understanding {
  if (understanding.kind !== 'intents' || similarity >= 1) return understanding;
  return { ...understanding, confidence: Math.min(understanding.confidence, similarity) };
}

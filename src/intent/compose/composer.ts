/**
 * The compositional recogniser (issue 26): assembles intents from the parts the mention finder
 * found, by the intent schema, instead of matching a whole-sentence template. A sentence is split
 * into clauses (punctuation, "and then", "然后", a second action after a complete command); each
 * clause's action, targets (devices, areas, floors, kinds of device), values and question form make
 * its intent. A clause without an action takes the previous clause's ("turn off the lamp and the
 * fan"); a clause without a target takes the conversation's last one ("turn it off"). Words left
 * unexplained lower the confidence and too many refuse; a sentence that talks about the home
 * (past time, "why", opinions, negation) refuses outright; a kind of device with several candidates
 * and no place asks which one; a request the device cannot do says what it can.
 */
import type { IntentLanguage } from '../intent-sentences.js';
import type { HomeEntity, IntentHome, RecognisedIntent } from '../recognizer.js';
import type { SlotValue } from '../template-grammar.js';
import { checkIntent, IMPLIED_DOMAIN, intentFor, stateFor, type Unsupported } from './intent-schema.js';
import type { Action, DeviceWord, Keyword, Meaning } from './lexicon.js';
import { tidyItem } from './list-items.js';
import { type Mention, MentionFinder, type Value } from './mention-finder.js';

export type Composed =
  | { kind: 'intents'; intents: RecognisedIntent[]; confidence: number; usedMemory: boolean }
  | { kind: 'ask'; candidates: string[]; intent: string }
  | { kind: 'unsupported'; why: Unsupported; names: string[]; intent: string }
  | { kind: 'none'; why: string };

/** What the conversation remembers: the last intent and the targets it acted on. */
export interface Referent {
  intent: RecognisedIntent;
}

export interface ComposeContext {
  area?: string;
  referent?: Referent;
}

/** One target as a clause names it, before it is resolved against the home. */
interface TargetMention {
  names?: readonly string[];
  area?: string;
  floor?: string;
  device?: DeviceWord;
  /** The device word's own plural ("lights"): more than one is meant. */
  plural: boolean;
  /** No device was said, only a setting ("set the temperature to 21"): the devices it fits, wherever they are. */
  implied?: boolean;
}

interface Clause {
  mentions: Mention[];
}

/** Confidence below this refuses: too much of the sentence was not understood. */
export const MIN_COVERAGE = { en: 0.7, zh: 0.75 } as const;

const has = (m: Mention, t: Meaning['t']) => m.piece.t === 'word' && m.piece.meanings.some((x) => x.t === t);
const meaning = <T extends Meaning['t']>(m: Mention, t: T): Extract<Meaning, { t: T }> | undefined =>
  m.piece.t === 'word' ? (m.piece.meanings.find((x) => x.t === t) as Extract<Meaning, { t: T }> | undefined) : undefined;

const SPLIT = /[，,、;；。!！?？]/u;
const GREETING = /^(hey|hi|hello|ok|okay|喂|嘿|你好)$/u;

export class Composer {
  private readonly finder: MentionFinder;
  private readonly home: IntentHome;
  private readonly language: IntentLanguage;
  private readonly byName = new Map<string, HomeEntity[]>();
  private readonly floorOfArea = new Map<string, string>();

  constructor(home: IntentHome, language: IntentLanguage) {
    this.home = home;
    this.language = language;
    this.finder = new MentionFinder(home, language);
    for (const e of home.entities) this.byName.set(e.name, [...(this.byName.get(e.name) ?? []), e]);
    for (const a of home.areas) if (a.floor !== undefined) this.floorOfArea.set(a.name, a.floor);
  }

  /**
   * "turn on the telly for the kids", "put the kettle on for tea", "打开电视看新闻": what a whole
   * command is for, said after it, is left off — its words need no explaining and its people
   * ("the kids") do not make it a story. A tail with a target, a value or an action of its own stays.
   */
  private withoutPurpose(mentions: Mention[]): Mention[] {
    const starts = this.language === 'en' ? /^(for|so|so that|so we can|so i can|so they can)$/u : /^(给|看|听|泡|让|陪)$/u;
    for (let at = 1; at < mentions.length; at++) {
      const m = mentions[at] as Mention;
      const word = this.language === 'en' ? m.text : m.text.slice(0, 1);
      if (!starts.test(word) && !(this.language === 'zh' && starts.test(m.text))) continue;
      const head = mentions.slice(0, at);
      const tail = mentions.slice(at + 1);
      if (!isWholeCommand(head) || tail.length === 0 || isListish(head)) continue;
      const own = tail.some(
        (t) =>
          isTargetOrThing(t) ||
          // "给孩子看动画片": watching is what the command is for, not a second command.
          (isCommandPart(t) && meaning(t, 'action')?.action !== 'tell') ||
          has(t, 'break') ||
          has(t, 'partial') ||
          (t.piece.t === 'word' && t.piece.meanings.some((x) => x.t === 'block' && !CLAUSE_BLOCKS.has(x.why))),
      );
      // Chinese purposes are short ("看新闻", "给孩子看"); a long tail is more than a purpose.
      const short = this.language === 'en' || tail.reduce((n, t) => n + t.text.length, 0) <= 8;
      if (!own && short) return head;
    }
    return mentions;
  }

  /** Whether the sentence has a question form at all (is, are, which, 吗, 有没有, a question mark). */
  asksSomething(text: string): boolean {
    return /[?？]/u.test(text) || this.mentions(text).some((m) => has(m, 'question') || meaning(m, 'keyword')?.keyword === 'left');
  }

  private isList(name: string): boolean {
    return this.byName.get(name)?.some((e) => e.domain === 'todo') ?? false;
  }

  /** The entities the slots of an intent select (name, area, floor, domain, class), for the schema check. */
  targetsOf(slots: Readonly<Record<string, unknown>>): HomeEntity[] {
    // "all" is a template's way of saying every device of the kind, not a name.
    const name = slots.name === undefined || slots.name === 'all' ? undefined : String(slots.name);
    return this.home.entities.filter(
      (e) =>
        (name === undefined || e.name === name) &&
        (slots.area === undefined || e.area === slots.area) &&
        (slots.floor === undefined || (e.area !== undefined && this.floorOfArea.get(e.area) === slots.floor)) &&
        (slots.domain === undefined || e.domain === slots.domain) &&
        (slots.device_class === undefined || e.device_class === slots.device_class || e.domain === 'lock'),
    );
  }

  mentions(text: string): Mention[] {
    const out: Mention[] = [];
    // "锁没锁", "开没开", "亮不亮": a Chinese yes-or-no question said as the verb, 没/不, the verb again;
    // read as the verb with 了没 ("锁了没"), which the lexicon asks with.
    const said = this.language === 'zh' ? text.replace(/([锁开关亮灭停拉合升降动转])[没不]\1/gu, '$1了没') : text;
    for (const part of said.split(SPLIT)) {
      if (part.trim() === '') continue;
      if (out.length > 0) out.push({ piece: { t: 'word', meanings: [{ t: 'break' }], plural: false }, start: -1, end: -1, text: ',' });
      out.push(...this.finder.find(part));
    }
    return out;
  }

  compose(text: string, context: ComposeContext = {}): Composed {
    let mentions = this.mentions(text);
    // A greeting before a command or question ("hey, is the door locked") is not part of it.
    while (mentions.length > 1 && (GREETING.test(mentions[0]?.text ?? '') || has(mentions[0] as Mention, 'break')))
      mentions = mentions.slice(1);
    if (mentions.length === 0) return { kind: 'none', why: 'empty' };
    // "一个小时前关了窗户": a length of time followed by 前 ("before") is when it happened, a story.
    if (mentions.some((m, at) => m.piece.t === 'value' && m.piece.value.kind === 'duration' && mentions[at + 1]?.text === '前'))
      return { kind: 'none', why: 'past' };
    const hasAction = mentions.some((m) => has(m, 'action') || has(m, 'verb'));
    const asked = /[?？]\s*$/u.test(text);
    mentions = this.withoutPurpose(mentions);
    // "add flour, sugar and salt to the shopping list": the commas and "and" separate items, not commands.
    const clauses = this.isListCommand(mentions) ? [{ mentions }] : this.clauses(mentions);
    // A reason said beside a whole command ("the kids are asleep, turn off the hall light", "我要睡觉了，
    // 把床头灯关了") is not talk about the home: its statement, chat, opinion or complaint words stay in it.
    const wholeCommands = clauses.filter((c) => isWholeCommand(c.mentions)).length;
    const reasons = new Set(wholeCommands > 0 && clauses.length > 1 ? clauses.filter((c) => isReason(c.mentions)) : []);
    for (const clause of clauses) {
      for (const m of clause.mentions) {
        const block = meaning(m, 'block');
        if (!block) continue;
        // "later" said before the command defers it ("晚点，再关灯"); said after, it is about the speaker.
        const afterCommand = clauses.findIndex((c) => isWholeCommand(c.mentions)) < clauses.indexOf(clause);
        if (reasons.has(clause) && CLAUSE_BLOCKS.has(block.why) && (block.why !== 'later' || afterCommand)) continue;
        // A complaint beside a command is its reason ("too hot in here, turn on the fan").
        if (block.why === 'complaint' && hasAction) continue;
        // Thanks beside a command do not make it talk; everything else does.
        if (!(block.why === 'chat' && hasAction && /^(thanks|thank you|谢谢|please)$/u.test(m.text)))
          return { kind: 'none', why: block.why };
      }
    }
    const intents: RecognisedIntent[] = [];
    let previousAction: Action | undefined;
    let previousDevice: DeviceWord | undefined;
    let previousTargets: TargetMention[] = [];
    let usedMemory = false;
    let explained = 0;
    let unexplained = 0;
    let lowest = 1;
    const commands = clauses.filter((c) => c.mentions.some((m) => has(m, 'action') || has(m, 'verb'))).length;
    for (const clause of clauses) {
      // Its reason asks for nothing: none of its words needed explaining.
      if (reasons.has(clause)) continue;
      // "it's hot in here, turn on the fan", "好热啊，开一下吊扇": a remark beside a command — no action,
      // no question, no target — is its reason, not a question to answer. Its unknown words still count.
      if (commands > 0 && clauses.length > 1 && isRemark(clause.mentions)) {
        unexplained += clause.mentions.filter(isUnknownWord).reduce((n, m) => n + (this.language === 'en' ? 1 : m.text.length), 0);
        continue;
      }
      const result = this.clause(
        clause,
        context,
        previousAction,
        previousDevice,
        previousTargets,
        asked && clause === clauses[clauses.length - 1],
      );
      // "turn on the basement light", "锁上侧门": a word the home does not know right before the kind
      // of device names one it does not have; asking which of the others is meant would be a guess.
      if (result.kind === 'ask' && unknownModifier(clause.mentions)) return { kind: 'none', why: 'unknown target' };
      if (result.kind !== 'intents') return result;
      // "the big light in the kitchen", "客厅的大灯": a word the home does not know narrows the place's
      // devices of the kind to one it cannot tell; with several there, ask which rather than act on all.
      if (unknownModifier(clause.mentions)) {
        const placed = result.intents.find((i) => i.slots.area !== undefined && (i.slots.name === undefined || i.slots.name === 'all'));
        const candidates = placed ? this.targetsOf(placed.slots).map((e) => e.name) : [];
        if (candidates.length > 1) return { kind: 'ask', candidates, intent: placed?.name ?? 'device' };
      }
      explained += result.explained;
      unexplained += result.unexplained;
      lowest = Math.min(lowest, result.similarity);
      intents.push(...result.intents);
      usedMemory ||= result.usedMemory;
      previousAction = result.action ?? previousAction;
      previousDevice = result.device ?? previousDevice;
      if (result.targets !== undefined && result.targets.length > 0) previousTargets = result.targets;
    }
    if (intents.length === 0) return { kind: 'none', why: 'no intent' };
    // "台灯台灯，打开": the same command said twice is done once.
    const unique = intents.filter(
      (x, at) => intents.findIndex((y) => y.name === x.name && JSON.stringify(y.slots) === JSON.stringify(x.slots)) === at,
    );
    intents.splice(0, intents.length, ...unique);
    const coverage = explained + unexplained === 0 ? 0 : explained / (explained + unexplained);
    const limit = MIN_COVERAGE[this.language];
    if (coverage < limit || unexplained >= (this.language === 'en' ? 2 : 3)) return { kind: 'none', why: 'not understood' };
    return { kind: 'intents', intents, confidence: Math.min(coverage, lowest), usedMemory };
  }

  /** Clauses at breaks, and before a second action once a clause has an action and a target. */
  private clauses(mentions: readonly Mention[]): Clause[] {
    const clauses: Clause[] = [];
    let current: Mention[] = [];
    // A verb without its particle is not a command yet ("switch the lamp and the kettle off": the
    // "and" joins targets); an action word or a particle is ("lamp off and close the curtains").
    const complete = () => current.some((m) => has(m, 'action') || has(m, 'particle')) && current.some(isTarget);
    mentions.forEach((m, at) => {
      const breaks = has(m, 'break') && !(has(m, 'and') && !complete());
      // A second action starts a command only if a target of its own follows ("开始扫地" after the vacuum does not).
      const ownTarget = () => {
        for (const later of mentions.slice(at + 1)) {
          if (has(later, 'break')) return false;
          if (isTarget(later)) return true;
        }
        return false;
      };
      const secondAction = (has(m, 'action') || has(m, 'verb')) && complete() && !isParticleLike(m) && ownTarget();
      if (breaks || secondAction) {
        if (current.length > 0) clauses.push({ mentions: current });
        current = breaks ? [] : [m];
        return;
      }
      current.push(m);
    });
    if (current.length > 0) clauses.push({ mentions: current });
    // A piece with neither an action nor a target ("15 minutes", "and 30 seconds") belongs to the clause before.
    const merged: Clause[] = [];
    for (const clause of clauses) {
      const bare = !clause.mentions.some((m) => has(m, 'action') || has(m, 'verb') || isTarget(m) || has(m, 'it') || has(m, 'also'));
      const onlyValues = clause.mentions.some((m) => m.piece.t === 'value');
      const last = merged[merged.length - 1];
      if (bare && onlyValues && last) last.mentions.push(...clause.mentions);
      else merged.push(clause);
    }
    // "robot vacuum, go back to the charger", "扫地机，回去充电": a clause that only names a target,
    // said before a command that names none, is who the command is for.
    const addressed: Clause[] = [];
    for (let i = 0; i < merged.length; i++) {
      const clause = merged[i] as Clause;
      const next = merged[i + 1];
      const namesOnly = clause.mentions.some(isTargetOrThing) && clause.mentions.every((m) => !isCommandPart(m));
      // "客厅窗帘开一点，开到20%": "a little" said first, the amount after it.
      const partialThenAmount =
        next !== undefined &&
        isPartial(clause.mentions) &&
        !clause.mentions.some((m) => m.piece.t === 'value') &&
        next.mentions.some((m) => m.piece.t === 'value') &&
        !next.mentions.some(isTargetOrThing);
      if (next !== undefined && partialThenAmount) {
        addressed.push({ mentions: [...clause.mentions.filter((m) => !isPartialWord(m)), ...next.mentions] });
        i += 1;
        continue;
      }
      const commandWithout =
        next?.mentions.some((m) => has(m, 'action') || has(m, 'verb')) === true && !next.mentions.some(isTargetOrThing);
      if (next !== undefined && namesOnly && commandWithout) {
        const joined = { mentions: [...clause.mentions, ...next.mentions.filter((m) => !has(m, 'it'))] };
        addressed.push(joined);
        i += 1;
      } else addressed.push(clause);
    }
    // "switch off the living room and kitchen lights", "把客厅和厨房的灯关了": a bare place joined to a
    // place with a kind of device shares that kind; it never means everything in the first place.
    for (let i = 0; i + 1 < addressed.length; i++) {
      const here = (addressed[i] as Clause).mentions;
      const next = (addressed[i + 1] as Clause).mentions;
      const barePlace =
        here.some((m) => m.piece.t === 'area' || m.piece.t === 'floor') &&
        !here.some((m) => m.piece.t === 'entity' || (has(m, 'device') && !has(m, 'verb') && !has(m, 'action')));
      const nextActs = next.some((m) => has(m, 'action') || has(m, 'verb'));
      const kind = next.find((m) => has(m, 'device'));
      if (barePlace && !nextActs && kind && next.some((m) => m.piece.t === 'area' || m.piece.t === 'floor')) here.push(kind);
    }
    return addressed;
  }

  private clause(
    clause: Clause,
    context: ComposeContext,
    previousAction: Action | undefined,
    previousDevice: DeviceWord | undefined,
    previousTargets: readonly TargetMention[] = [],
    /** The sentence ends in a question mark ("front door locked?"). */
    questionMark = false,
  ):
    | {
        kind: 'intents';
        intents: RecognisedIntent[];
        explained: number;
        unexplained: number;
        similarity: number;
        usedMemory: boolean;
        action?: Action;
        device?: DeviceWord;
        /** The devices the clause acted on, for a next clause that names none ("open the curtains a bit, to 20 %"). */
        targets?: TargetMention[];
      }
    | Exclude<Composed, { kind: 'intents' }> {
    const ms = clause.mentions;
    const keywords = new Set<Keyword>();
    const values: Value[] = [];
    let color: string | undefined;
    let question = questionMark;
    let state: string | undefined;
    let all = false;
    let it = false;
    let also = false;
    let ensure = false;
    let partial = false;
    let similarity = 1;
    let explained = 0;
    let unexplained = 0;
    const targets: TargetMention[] = [];
    const devices: Array<{ device: DeviceWord; plural: boolean }> = [];
    for (const m of ms) {
      const p = m.piece;
      if (p.t === 'unknown') {
        if (!p.light) unexplained += this.language === 'en' ? 1 : m.text.length;
        continue;
      }
      explained += this.language === 'en' ? m.text.split(' ').length : m.text.length;
      if (p.t === 'entity') {
        targets.push({ names: p.names, plural: false });
        similarity = Math.min(similarity, p.similarity);
      } else if (p.t === 'area') {
        targets.push({ area: p.name, plural: false });
        similarity = Math.min(similarity, p.similarity);
      } else if (p.t === 'floor') {
        targets.push({ floor: p.name, plural: false });
        similarity = Math.min(similarity, p.similarity);
      } else if (p.t === 'value') values.push(p.value);
      else if (p.t === 'color') color = p.color;
      else {
        for (const x of p.meanings) {
          if (x.t === 'keyword') keywords.add(x.keyword);
          else if (x.t === 'question') question = true;
          else if (x.t === 'state') state ??= x.state;
          else if (x.t === 'all') all = true;
          else if (x.t === 'it') it = true;
          else if (x.t === 'also') also = true;
          else if (x.t === 'ensure') ensure = true;
          else if (x.t === 'partial') partial = true;
        }
        const device = meaning(m, 'device');
        // A word that is also an action ("lock", "switch") is a device only where no action reading is wanted.
        if (device && !(has(m, 'action') || has(m, 'verb'))) devices.push({ device: device.device, plural: p.plural });
        else if (device && devices.length === 0 && ms.some((o) => o !== m && (has(o, 'action') || has(o, 'verb')))) {
          const firstAction = ms.find((o) => has(o, 'action') || has(o, 'verb'));
          // "the vacuum can go back now": another action word that is no device's name makes this one the device.
          const otherAction = ms.some((o) => o !== m && (has(o, 'action') || has(o, 'verb')) && !has(o, 'device'));
          if (firstAction !== m || otherAction) devices.push({ device: device.device, plural: p.plural });
        }
      }
    }
    // "开一点", "拉开一点儿": 一点 right after the action is a little of the way.
    if (isPartial(ms)) partial = true;
    // "不要计时", "停止计时": an action word that names the timer in itself.
    if (ms.some((m) => has(m, 'action') && /计时|timer/u.test(m.text))) keywords.add('timer');
    // "make sure the back door is locked": the state is wanted, the "is" asks nothing.
    if (ensure) question = false;
    // "can you turn on the hall light?", "可以帮我打开台灯吗": a request put as a question asks for the
    // action said, not whether it is done (a "tell me"/"看看" request still asks).
    const request = ms.some((m) => has(m, 'request'));
    const acting = ms.some((m) => (has(m, 'action') && !has(m, 'state') && meaning(m, 'action')?.action !== 'tell') || has(m, 'verb'));
    if (request && acting && !ms.some((m) => isAskWord(m))) question = false;
    const action = this.actionOf(ms, keywords, values, color) ?? (ensure && state !== undefined ? 'set' : undefined);
    // "what time is it", "tell me the time": the word "time" is the clock's unless something says
    // timer — a word for one, the time left, a length, or an action only a timer takes.
    const timerWord = ms.some((m) => meaning(m, 'keyword')?.keyword === 'timer' && !isClockWord(m));
    const timerAction = action !== undefined && ['cancel', 'pause', 'resume', 'stop', 'add', 'raise', 'lower'].includes(action);
    if (keywords.has('timer') && keywords.has('time') && !timerWord && !keywords.has('left') && !timerAction && values.length === 0)
      keywords.delete('timer');
    // "the lights in the cellar", "地下室的灯": a place the home does not have is no place to act in.
    if (this.unknownPlace(ms)) return { kind: 'none', why: 'unknown place' };
    const base = { explained, unexplained, similarity, usedMemory: false };
    const done = (
      intents: RecognisedIntent[],
      extra: { usedMemory?: boolean; device?: DeviceWord; explained?: number; unexplained?: number; targets?: TargetMention[] } = {},
    ) => ({
      kind: 'intents' as const,
      ...base,
      ...extra,
      intents,
      ...(action !== undefined && { action }),
    });
    const intent = (name: string, slots: Record<string, SlotValue>): RecognisedIntent => ({
      name,
      slots,
      score: explained,
      confidence: similarity,
    });

    // Things the home has that are not devices: timers, lists, the time, the weather.
    const durations = values.filter((v): v is Extract<Value, { kind: 'duration' }> => v.kind === 'duration');
    const duration =
      durations.length === 0 ? undefined : { kind: 'duration' as const, seconds: durations.reduce((sum, v) => sum + v.seconds, 0) };
    const listTarget = targets.find((t) => t.names?.some((n) => this.byName.get(n)?.some((e) => e.domain === 'todo')));
    if (listTarget || (keywords.has('list') && (action === 'add' || action === 'complete'))) {
      return this.listIntent(ms, action, listTarget, done, intent);
    }
    const deviceTargets = targets.filter((t) => t !== listTarget);
    const placesOnly = deviceTargets.every((t) => t.names === undefined) && devices.length === 0;
    if ((keywords.has('timer') && placesOnly) || (duration && deviceTargets.length === 0 && devices.length === 0)) {
      // "add a timer of 10 minutes", "put a timer on", "再加一个计时器": a timer said with "a" is a new one.
      const timerAt = ms.findIndex((m) => meaning(m, 'keyword')?.keyword === 'timer');
      let before = timerAt - 1;
      // "a 10 minute timer", "一个十分钟的计时器": the article comes before the length.
      while (before > 0 && ((ms[before] as Mention).piece.t === 'value' || (ms[before] as Mention).text === '的')) before -= 1;
      const newTimer = timerAt > 0 && before >= 0 && /^(a|an|another|new|一个|个|新的|新)$/u.test((ms[before] as Mention).text);
      const timer = timerIntent(
        newTimer && (action === 'add' || action === 'raise') ? 'start' : action,
        keywords,
        question,
        all,
        duration,
        intent,
      );
      if (timer) {
        // "a tea timer", "饺子的计时": the words just before the timer name it.
        const named = this.timerName(ms);
        if (named === undefined) return done([timer]);
        timer.slots.name = named.name;
        return done([timer], { explained: explained + named.size, unexplained: Math.max(0, unexplained - named.size) });
      }
    }
    if (deviceTargets.length === 0 && devices.length === 0) {
      if (keywords.has('time') && !keywords.has('timer') && (question || action === 'tell' || action === undefined)) {
        return done([intent('HassGetCurrentTime', {})]);
      }
      // "what's today?", "今天呢？" ask the date; "and now?", "现在呢？" ask nothing of the calendar.
      const todaySaid = ms.some((m) => m.text === 'today' || m.text === '今天');
      const dateAsked = keywords.has('date') || (todaySaid && question && keywords.size === 1);
      if (dateAsked && (question || action === 'tell' || action === undefined || keywords.has('today'))) {
        return done([intent('HassGetCurrentDate', {})]);
      }
      if (keywords.has('weather') && (question || action === 'tell' || action === undefined)) return done([intent('HassGetWeather', {})]);
      if (keywords.has('left') && (question || this.language === 'zh') && action === undefined)
        return done([intent('HassTimerStatus', {})]);
    }
    // Temperature and humidity asked about a place (or a sensor of one).
    const sensorOf = (cls: string) =>
      deviceTargets
        .flatMap((t) => t.names ?? [])
        .flatMap((n) => this.byName.get(n) ?? [])
        .find((e) => e.domain === 'sensor' && e.device_class === cls);
    const tempSensor = sensorOf('temperature');
    const areaSaid = deviceTargets.find((t) => t.area !== undefined)?.area ?? tempSensor?.area;
    if ((keywords.has('temperature') || tempSensor) && values.length === 0 && action !== 'set' && !color) {
      if (question || action === 'tell' || action === undefined) {
        const area = areaSaid ?? context.area;
        return done([intent('HassClimateGetTemperature', area === undefined ? {} : { area })]);
      }
    }
    const humiditySensor = sensorOf('humidity');
    if ((keywords.has('humidity') || humiditySensor) && values.length === 0 && (question || action === 'tell' || action === undefined)) {
      const area = deviceTargets.find((t) => t.area !== undefined)?.area ?? humiditySensor?.area ?? context.area;
      const slots: Record<string, SlotValue> = { domain: 'sensor', device_class: 'humidity' };
      if (humiditySensor) slots.name = humiditySensor.name;
      if (area !== undefined) slots.area = area;
      return done([intent('HassGetState', slots)]);
    }

    // Devices: the targets of the clause, or the conversation's.
    let clauseTargets = this.targetsOf2(
      deviceTargets,
      devices,
      previousDevice,
      action,
      ms.some((m) => has(m, 'and')),
    );
    // "客厅窗帘开一点，开到20%": a command without a target after one with a target in the same sentence acts on it.
    if (
      clauseTargets.length === 0 &&
      previousTargets.length > 0 &&
      !question &&
      (action !== undefined || values.length > 0) &&
      (action === undefined || IMPLIED_DOMAIN[action] === undefined)
    )
      clauseTargets = [...previousTargets];
    let usedMemory = false;
    const referent = context.referent?.intent;
    if (clauseTargets.length === 0 && (it || also || action !== undefined || values.length > 0) && referent && !question) {
      const implied = action === undefined ? undefined : IMPLIED_DOMAIN[action];
      // "resume it" after the speaker was named: the speaker, for actions with a domain of their own too.
      if ((action !== undefined && implied === undefined) || (it && implied !== undefined && referent.slots.domain === implied)) {
        clauseTargets = [referentTarget(referent)];
        usedMemory = true;
      } else if (action === undefined) clauseTargets = [];
    }
    // A follow-up naming only a new target ("and the bedroom", "还有卧室的", "make it 80"): the last intent again.
    const effectiveAction = action ?? (clauseTargets.length > 0 || values.length > 0 ? previousAction : undefined);
    if (
      action === undefined &&
      previousAction === undefined &&
      referent &&
      (also || it || values.length > 0 || clauseTargets.length > 0) &&
      !question
    ) {
      return this.repeatReferent(referent, clauseTargets, values, color, done, intent);
    }
    // "回家了，开一下客厅的灯": "home", "回去", "return" send a vacuum to its dock only when one is named.
    const weakDock =
      effectiveAction === 'dock' && ms.every((m) => !has(m, 'action') || WEAK_DOCK.test(m.text) || meaning(m, 'action')?.action !== 'dock');
    if (clauseTargets.length === 0 && weakDock) return { kind: 'none', why: 'no target' };
    if (clauseTargets.length === 0 && effectiveAction !== undefined && IMPLIED_DOMAIN[effectiveAction] !== undefined) {
      clauseTargets = [{ device: { domains: [IMPLIED_DOMAIN[effectiveAction] as string] }, plural: false }];
    }
    // A colour names a setting only beside the word for it ("change the colour to red"): alone it is
    // more often a description ("make a picture of a red house", "画一个红色的风筝") than a command.
    const settingSaid =
      (color !== undefined && keywords.has('color')) ||
      keywords.has('volume') ||
      keywords.has('brightness') ||
      keywords.has('temperature') ||
      values.some((v) => v.kind === 'percent' || v.kind === 'temperature');
    if (clauseTargets.length === 0 && settingSaid && !question) {
      // "set the brightness to 20%", "音量调到15": the satellite's room.
      const domain = keywords.has('volume')
        ? 'media_player'
        : keywords.has('temperature') || values.some((v) => v.kind === 'temperature')
          ? 'climate'
          : 'light';
      clauseTargets = [{ device: { domains: [domain] }, plural: true, implied: true }];
    }
    if (clauseTargets.length === 0) return { kind: 'none', why: 'no target' };
    // "turn the hall light on for a minute", "把风扇开一个小时": a device command for a length of time
    // needs a second command when it ends; doing the first alone would leave it on for good.
    // ("hold the music for a sec" is a pause all the same.)
    if (duration && !question && !(effectiveAction !== undefined && TRANSPORT.has(effectiveAction))) return { kind: 'none', why: 'timed' };

    const out: RecognisedIntent[] = [];
    for (const target of clauseTargets) {
      const actionIsDevice = ms.filter((m) => has(m, 'action')).every((m) => has(m, 'device'));
      const homeAfterDevice = ms.some((m, at) => m.text === 'home' && at > 0 && isTarget(ms[at - 1] as Mention));
      const built = this.deviceIntent(target, effectiveAction, {
        values,
        color,
        keywords,
        question,
        state,
        all,
        it,
        partial,
        actionIsDevice,
        homeAfterDevice,
        context,
      });
      if (built.kind !== 'intents') return built;
      out.push(...built.intents.map((i) => ({ ...i, score: explained, confidence: similarity })));
    }
    return done(out, { usedMemory, targets: clauseTargets, ...(devices[0] && { device: devices[0].device }) });
  }

  private actionOf(
    ms: readonly Mention[],
    keywords: ReadonlySet<Keyword>,
    values: readonly Value[],
    color: string | undefined,
  ): Action | undefined {
    let verb = false;
    let particle: string | undefined;
    let action: Action | undefined;
    /** The action word is also a verb its particle completes ("put … on", "shut … off"). */
    let actionIsVerb = false;
    const actions: Action[] = [];
    for (const m of ms) {
      if (has(m, 'verb')) verb = true;
      const p = meaning(m, 'particle');
      if (p && particle === undefined) particle = p.particle;
      const a = meaning(m, 'action');
      // "the vacuum can go back now": a device's name that is also an action word ("vacuum") gives
      // way to another action said beside it.
      const deviceName = has(m, 'device') && ms.some((o) => o !== m && has(o, 'action') && !has(o, 'device'));
      if (a && action === undefined && !deviceName) {
        action = a.action;
        actionIsVerb = has(m, 'verb');
      }
      if (m.piece.t === 'word') for (const x of m.piece.meanings) if (x.t === 'action') actions.push(x.action);
    }
    const listSaid = keywords.has('list') || ms.some((m) => m.piece.t === 'entity' && m.piece.names.some((n) => this.isList(n)));
    // "加" is "add" and "raise": beside a list it adds, beside a timer it adds time.
    if (listSaid) {
      const listAction = actions.find((x) => x === 'add' || x === 'complete');
      if (listAction) return listAction;
    }
    // "开始扫地", "start cleaning": a generic start before the action that says what is started.
    if (action === 'start' || (action === 'set' && values.length === 0 && !color)) {
      const specific = actions.find((x) => IMPLIED_DOMAIN[x] !== undefined && x !== 'pause' && x !== 'resume');
      if (specific) action = specific;
    }
    // "put the thermostat on 21", "put the blinds at 30%": "put" adds only to a list or a timer.
    if (action === 'add' && actionIsVerb && !listSaid && !keywords.has('timer')) action = undefined;
    // "turn of the lamp": "off" with a letter lost.
    if (action === undefined && verb && particle === undefined && ms.some((m) => m.text === 'of')) particle = 'off';
    if (action === undefined && (verb || particle !== undefined)) {
      // "put the thermostat on 21": a verb with a value sets it, whatever particle comes with it.
      // "twenty five percent on the floor lamp": a value put on a device sets it too.
      if ((verb || particle === 'on') && particle !== 'off' && values.some((v) => v.kind !== 'duration')) action = 'set';
      else if (particle === 'on') action = 'on';
      else if (particle === 'off') action = 'off';
      // "turn the heating up to 23": up or down to a value sets it.
      else if ((particle === 'up' || particle === 'down') && values.some((v) => v.kind !== 'duration')) action = 'set';
      else if (particle === 'up') action = keywords.has('volume') || keywords.has('brightness') ? 'raise' : 'on';
      else if (particle === 'down') action = keywords.has('volume') || keywords.has('brightness') ? 'lower' : 'off';
      else if (verb && (values.length > 0 || color)) action = 'set';
    }
    // "turn the lamp off" after a generic action word such as "set"/"make", "flip the light off":
    // the particle decides.
    if (
      (action === 'set' || action === 'start' || action === 'toggle' || actionIsVerb) &&
      values.length === 0 &&
      !color &&
      (particle === 'on' || particle === 'off')
    )
      action = particle;
    return action;
  }

  /** Kinds of device a clause names, paired with its places; a bare place borrows the previous clause's device. */
  private targetsOf2(
    targets: readonly TargetMention[],
    devices: ReadonlyArray<{ device: DeviceWord; plural: boolean }>,
    previousDevice: DeviceWord | undefined,
    action: Action | undefined,
    /** "和"/"and" joined targets in the clause: a place with a kind is then a target of its own. */
    joined = false,
  ): TargetMention[] {
    const device = devices[0];
    const out: TargetMention[] = [];
    const named = targets.filter((t) => t.names !== undefined);
    for (const t of named) out.push(t);
    const places = targets.filter((t) => t.names === undefined);
    // "把客厅的灯和电视都关了": the living room's lights and the TV, not the TV narrowed to the living room.
    if (named.length > 0 && joined && places.length > 0 && device) {
      for (const p of places) out.push({ ...p, device: device.device, plural: true });
      return out;
    }
    if (named.length > 0) {
      // A place beside a named device narrows it ("the fan in the bedroom" when several share a name).
      return out.map((t) => ({
        ...t,
        ...(places[0]?.area !== undefined && { area: places[0].area }),
        ...(device && { device: device.device }),
      }));
    }
    for (const p of places)
      out.push({ ...p, ...(device ? { device: device.device, plural: device.plural } : previousDevice ? { device: previousDevice } : {}) });
    if (places.length === 0 && device) out.push({ device: device.device, plural: device.plural || devices.length > 1 });
    if (out.length > 0 && action === undefined) return out;
    return out;
  }

  private deviceIntent(
    target: TargetMention,
    action: Action | undefined,
    said: {
      values: readonly Value[];
      color: string | undefined;
      keywords: ReadonlySet<Keyword>;
      question: boolean;
      state: string | undefined;
      all: boolean;
      /** "it", "this one" was said: a thing the conversation named, never whatever happens to play. */
      it: boolean;
      /** "a bit", "开一点点": part of the way, by an amount not said. */
      partial?: boolean;
      /** The only action word is the device's name too ("vacuum"): it names the device more than it asks. */
      actionIsDevice?: boolean;
      /** "home" said right after the device ("send the vacuum home"): where it goes, not what to clean. */
      homeAfterDevice?: boolean;
      context: ComposeContext;
    },
  ): Composed {
    const { values, color, keywords, question } = said;
    // Which domains the request could mean: the device word's, narrowed by what the action applies to.
    const number = values.find((v) => v.kind !== 'duration');
    const pool = this.pool(target);
    if (pool.length === 0) return { kind: 'none', why: 'no such device' };
    const domainsHere = new Set(pool.map((e) => e.domain));
    // Questions: "is the front door locked", "did i lock it", "有没有开着的灯".
    if (question) {
      let state = said.state ?? stateFor(action, [...domainsHere][0]);
      if (state === 'open' && domainsHere.has('lock') && !domainsHere.has('cover')) state = 'unlocked';
      // "车库门开着吗": a cover or a valve that is "on" is open, "off" is closed.
      const opens = [...domainsHere].every((d) => d === 'cover' || d === 'valve');
      if (opens && state === 'on') state = 'open';
      if (opens && state === 'off') state = 'closed';
      const lockish = state === 'locked' || state === 'unlocked';
      const queried = lockish ? pool.filter((e) => e.domain === 'lock') : pool;
      if (queried.length === 0) return { kind: 'none', why: 'no such device' };
      const slots = this.slotsFor(target, queried, said, true);
      if (slots.kind !== 'slots') return slots;
      if (state !== undefined) slots.slots.state = state;
      return {
        kind: 'intents',
        intents: [{ name: 'HassGetState', slots: slots.slots, score: 0, confidence: 1 }],
        confidence: 1,
        usedMemory: false,
      };
    }
    let act = action;
    if (act === 'set' && values.length === 0 && !color && said.state !== undefined) {
      act =
        said.state === 'locked'
          ? 'lock'
          : said.state === 'unlocked'
            ? 'unlock'
            : said.state === 'on'
              ? 'on'
              : said.state === 'open'
                ? 'open'
                : said.state === 'closed'
                  ? 'close'
                  : said.state === 'off'
                    ? 'off'
                    : act;
    }
    if (act === undefined && (number || color)) act = 'set';
    // "send the vacuum home": home is its dock.
    if ((act === undefined || said.actionIsDevice) && said.homeAfterDevice && pool.length > 0 && pool.every((e) => e.domain === 'vacuum'))
      act = 'dock';
    // "open the blinds a bit", "窗帘开一点点": some of the way, by an amount nobody said — never all the way.
    if (
      said.partial &&
      !number &&
      (act === 'open' || act === 'close' || act === 'on' || act === 'off') &&
      pool.every((e) => e.domain === 'cover')
    )
      return { kind: 'none', why: 'partial' };
    // "movie night please", "晚安模式": a scene or a script said by name alone is run, the one thing it does.
    if (
      act === undefined &&
      target.names !== undefined &&
      pool.length > 0 &&
      pool.every((e) => e.domain === 'scene' || e.domain === 'script')
    )
      act = 'activate';
    if (act === undefined) return { kind: 'none', why: 'no action' };
    // "open the blinds to 40 percent", "halfway": a position. "Close them 30 %" could mean either
    // way up; that is the model's to ask, never a full close.
    const coversOnly = pool.every((e) => e.domain === 'cover' || e.domain === 'valve');
    if (number && coversOnly && (act === 'open' || act === 'on')) act = 'set';
    if (number && coversOnly && (act === 'close' || act === 'off')) return { kind: 'none', why: 'close by a share' };
    // Settings with a value: brightness, colour, position, volume, temperature.
    if ((act === 'set' || act === 'raise' || act === 'lower') && (number || color)) {
      let name: string;
      let slot: string;
      let domains: string[];
      if (color) [name, slot, domains] = ['HassLightSet', 'color', ['light']];
      else if (keywords.has('volume') || (domainsHere.has('media_player') && domainsHere.size === 1))
        [name, slot, domains] = ['HassSetVolume', 'volume_level', ['media_player']];
      else if (number?.kind === 'temperature' || keywords.has('temperature') || (domainsHere.has('climate') && domainsHere.size === 1)) {
        [name, slot, domains] = ['HassClimateSetTemperature', 'temperature', ['climate']];
      } else if ([...domainsHere].every((d) => d === 'cover' || d === 'valve'))
        [name, slot, domains] = ['HassSetPosition', 'position', ['cover', 'valve']];
      else [name, slot, domains] = ['HassLightSet', 'brightness', ['light']];
      let fitting = pool.filter((e) => domains.includes(e.domain));
      if (name === 'HassClimateSetTemperature' && fitting.length === 0 && target.area !== undefined)
        fitting = this.pool({ area: target.area, plural: true, device: { domains: ['climate'] } });
      if (fitting.length === 0)
        return {
          kind: 'unsupported',
          why: name === 'HassLightSet' ? (color ? 'color' : 'brightness') : 'action',
          names: pool.map((e) => e.name),
          intent: name,
        };
      const slots = this.slotsFor({ ...target, device: { domains } }, fitting, said, false);
      if (slots.kind !== 'slots') return slots;
      if (name === 'HassClimateSetTemperature') delete slots.slots.domain;
      const amount = (number as { value: number } | undefined)?.value;
      // A brightness, position or volume is a share of the whole: "500%" was misheard, not meant.
      if (amount !== undefined && slot !== 'temperature' && (amount < 0 || amount > 100)) return { kind: 'none', why: 'out of range' };
      slots.slots[slot] = color ?? (amount as number);
      const built = { name, slots: slots.slots };
      const check = checkIntent(built, fitting);
      if (!check.ok) return { kind: 'unsupported', why: check.why, names: check.entities.map((e) => e.name), intent: name };
      return { kind: 'intents', intents: [{ ...built, score: 0, confidence: 1 }], confidence: 1, usedMemory: false };
    }
    if ((act === 'raise' || act === 'lower') && !number) {
      const lights = pool.filter((e) => e.domain === 'light');
      if (lights.length > 0 && lights.length === pool.length) {
        const check = checkIntent({ name: 'HassLightSet', slots: { brightness: 0 } }, lights);
        if (!check.ok) return { kind: 'unsupported', why: 'brightness', names: lights.map((e) => e.name), intent: 'HassLightSet' };
        return { kind: 'none', why: 'relative brightness' };
      }
    }
    // "turn the music off", "音乐关了": the music, not the speaker — what plays is paused.
    const bareTarget = target.names === undefined && target.area === undefined && target.floor === undefined;
    if ((act === 'off' || act === 'stop') && keywords.has('song') && bareTarget && pool.every((e) => e.domain === 'media_player'))
      act = 'pause';
    // "打开后门的锁": opening a lock is unlocking it.
    if ((act === 'on' || act === 'open') && target.device?.domains.length === 1 && target.device.domains[0] === 'lock') act = 'unlock';
    const able = pool.filter((e) => intentFor(act as Action, e.domain) !== undefined);
    if (able.length === 0) return { kind: 'unsupported', why: 'action', names: pool.map((e) => e.name), intent: act };
    const names = new Set(able.map((e) => intentFor(act as Action, e.domain)));
    if (names.size > 1) {
      // One action meaning two intents on the devices meant ("open the door": the lock or the garage?): ask.
      return { kind: 'ask', candidates: able.map((e) => e.name), intent: act };
    }
    const name = [...names][0] as string;
    // "next song", "pause the music" with no player said: the executor takes the one playing, as Home Assistant does.
    const bare = target.names === undefined && target.area === undefined && target.floor === undefined;
    // "skip it", "skip this track": for a skip, "it" is the song playing, not a device.
    const itIsTheSong = act === 'next' || act === 'previous';
    if (bare && (!said.it || itIsTheSong) && TRANSPORT.has(act) && able.every((e) => e.domain === 'media_player')) {
      const here = said.context.area !== undefined && able.some((e) => e.area === said.context.area);
      return {
        kind: 'intents',
        intents: [{ name, slots: here ? { area: said.context.area as string } : {}, score: 0, confidence: 1 }],
        confidence: 1,
        usedMemory: false,
      };
    }
    const slots = this.slotsFor(target, able, said, false);
    if (slots.kind !== 'slots') return slots;
    if (name === 'HassTurnOn' || name === 'HassTurnOff' || name === 'HassToggle') {
      const domains = new Set(able.map((e) => e.domain));
      if (domains.size === 1 && slots.slots.domain === undefined) slots.slots.domain = [...domains][0] as string;
    }
    return { kind: 'intents', intents: [{ name, slots: slots.slots, score: 0, confidence: 1 }], confidence: 1, usedMemory: false };
  }

  /** The entities a target can mean, before the action narrows them. */
  private pool(target: TargetMention): HomeEntity[] {
    const device = target.device;
    const fitsDevice = (e: HomeEntity) =>
      device === undefined ||
      (device.domains.includes(e.domain) &&
        (device.device_class === undefined ||
          e.domain === 'lock' ||
          e.domain === 'media_player' ||
          classFits(device.device_class, e.device_class, target.area !== undefined)));
    let entities: HomeEntity[];
    if (target.names !== undefined) {
      entities = target.names.flatMap((n) => this.byName.get(n) ?? []);
      // "turn on the tv in the bedroom" when the TV is in the living room: that device is not there.
      if (target.area !== undefined && entities.every((e) => e.area !== undefined) && !entities.some((e) => e.area === target.area))
        return [];
      const narrowed = entities.filter((e) => fitsDevice(e) && (target.area === undefined || e.area === target.area));
      if (narrowed.length > 0) entities = narrowed;
    } else {
      entities = this.home.entities.filter(
        (e) =>
          fitsDevice(e) &&
          device !== undefined &&
          (target.area === undefined || e.area === target.area) &&
          (target.floor === undefined || (e.area !== undefined && this.floorOfArea.get(e.area) === target.floor)),
      );
      if (target.area !== undefined && device === undefined) entities = this.home.entities.filter((e) => e.area === target.area);
    }
    return entities.filter((e) => e.domain !== 'todo' && e.domain !== 'weather');
  }

  /** The slots naming `entities` as the sentence did: a name, a place and a kind, or ask which one. */
  private slotsFor(
    target: TargetMention,
    entities: readonly HomeEntity[],
    said: { all: boolean; keywords: ReadonlySet<Keyword>; context: ComposeContext },
    query: boolean,
  ): { kind: 'slots'; slots: Record<string, SlotValue> } | Extract<Composed, { kind: 'ask' | 'none' }> {
    const slots: Record<string, SlotValue> = {};
    const domains = [...new Set(entities.map((e) => e.domain))];
    const domain = domains.length === 1 ? (domains[0] as string) : undefined;
    if (target.names !== undefined) {
      const names = [...new Set(entities.map((e) => e.name))];
      if (names.length > 1) return { kind: 'ask', candidates: names, intent: 'name' };
      slots.name = names[0] as string;
      if (domain) slots.domain = domain;
      return { kind: 'slots', slots };
    }
    if (domain) slots.domain = domain;
    // "车库的门" said "door" of a garage door: the slot names the class the devices have.
    const classes = [...new Set(entities.map((e) => e.device_class))];
    const saidClass = target.device?.device_class;
    const cls = saidClass === 'door' && classes.length === 1 && classes[0] !== undefined ? classes[0] : saidClass;
    if (cls !== undefined && domain !== 'lock' && domain !== 'media_player') slots.device_class = cls;
    if (target.area !== undefined || target.floor !== undefined) {
      if (target.area !== undefined) slots.area = target.area;
      if (target.floor !== undefined) slots.floor = target.floor;
      if (said.all && !query) slots.name = 'all';
      else if (entities.length === 1) slots.name = (entities[0] as HomeEntity).name;
      return { kind: 'slots', slots };
    }
    // Home Assistant's way of saying every device of the kind; the executor reads it so.
    if (said.all && !query) slots.name = 'all';
    // "heat the house to 22" with one thermostat: the house's one device of the kind is that device.
    if (said.keywords.has('home') && !said.all && !query && entities.length === 1) slots.name = (entities[0] as HomeEntity).name;
    if (said.all || said.keywords.has('home') || query) return { kind: 'slots', slots };
    const here = said.context.area === undefined ? [] : entities.filter((e) => e.area === said.context.area);
    if (here.length > 0) {
      slots.area = said.context.area as string;
      if (here.length === 1) slots.name = (here[0] as HomeEntity).name;
      return { kind: 'slots', slots };
    }
    if (entities.length === 1) {
      slots.name = (entities[0] as HomeEntity).name;
      return { kind: 'slots', slots };
    }
    // "close the blinds" with blinds in several rooms and no room said or heard from: which room?
    // Acting on every one of them is what "all the blinds" asks for, not "the blinds".
    const rooms = new Set(entities.map((e) => e.area));
    if (target.plural && (rooms.size <= 1 || query || target.implied)) return { kind: 'slots', slots };
    return { kind: 'ask', candidates: entities.map((e) => e.name), intent: domain ?? 'device' };
  }

  /**
   * A sentence that names a list and adds to or ticks off one; words inside the items may read as
   * actions ("salt" for "halt") and do not count, any other action makes it a compound.
   */
  private isListCommand(ms: readonly Mention[]): boolean {
    const listAt = ms.findIndex(
      (m) =>
        meaning(m, 'keyword')?.keyword === 'list' ||
        (m.piece.t === 'entity' && m.piece.names.some((n) => this.byName.get(n)?.some((e) => e.domain === 'todo'))),
    );
    const listAction = (m: Mention) =>
      m.piece.t === 'word' && m.piece.meanings.some((x) => x.t === 'action' && (x.action === 'add' || x.action === 'complete'));
    const actionAt = ms.findIndex(listAction);
    if (listAt < 0 || actionAt < 0) return false;
    const inItems = (at: number) => (actionAt < listAt ? at > actionAt && at < listAt : at > actionAt);
    return ms.every((m, at) => inItems(at) || !(has(m, 'action') || has(m, 'verb')) || listAction(m));
  }

  /** Words the home does not know where a place belongs: after "in"/"at" (English), before "的" and a device (Chinese). */
  private unknownPlace(ms: readonly Mention[]): boolean {
    const content = (m: Mention | undefined) => m !== undefined && isUnknownWord(m);
    for (let i = 0; i < ms.length; i++) {
      const m = ms[i] as Mention;
      if (this.language === 'en') {
        if (!/^(in|at|inside)$/u.test(m.text)) continue;
        const next = /^(the|my|our)$/u.test(ms[i + 1]?.text ?? '') ? ms[i + 2] : ms[i + 1];
        if (content(next)) return true;
      } else if (m.text === '的' && content(ms[i - 1]) && ms[i + 1] !== undefined && has(ms[i + 1] as Mention, 'device')) {
        // Two or more unknown characters back to the action: a place or an owner the home does not have ("阁楼的灯").
        let unknown = 0;
        for (let j = i - 1; j >= 0; j--) {
          const before = ms[j] as Mention;
          if (content(before)) unknown += before.text.length;
          else if (!has(before, 'filler') || has(before, 'action')) break;
        }
        if (unknown >= 2) return true;
      }
    }
    return false;
  }

  /** The name a timer is given by the unknown words just before "timer" ("tea timer", "泡茶计时器", "饺子的计时"). */
  private timerName(ms: readonly Mention[]): { name: string; size: number } | undefined {
    const at = ms.findIndex((m) => meaning(m, 'keyword')?.keyword === 'timer');
    if (at <= 0) return undefined;
    let end = at;
    if (this.language === 'zh' && ms[end - 1]?.text === '的') end -= 1;
    let start = end;
    while (start > 0 && isUnknownWord(ms[start - 1] as Mention)) start -= 1;
    if (start === end || end - start > (this.language === 'en' ? 2 : 4)) return undefined;
    const words = ms.slice(start, end).map((m) => m.text);
    return { name: words.join(this.language === 'en' ? ' ' : ''), size: this.language === 'en' ? words.length : words.join('').length };
  }

  private listIntent(
    ms: readonly Mention[],
    action: Action | undefined,
    listTarget: TargetMention | undefined,
    done: (intents: RecognisedIntent[], extra?: { explained?: number; unexplained?: number }) => ReturnType<Composer['clause']>,
    intent: (name: string, slots: Record<string, SlotValue>) => RecognisedIntent,
  ): ReturnType<Composer['clause']> {
    const listName = listTarget?.names?.find((n) => this.byName.get(n)?.some((e) => e.domain === 'todo'));
    const shopping = listName === undefined || /shopping|grocer|购物/iu.test(listName);
    if (action !== 'add' && action !== 'complete') return { kind: 'none', why: 'list without action' };
    // The items: what lies between the action and the list (or after both), with connecting words trimmed.
    const actionAt = ms.findIndex((m) => m.piece.t === 'word' && m.piece.meanings.some((x) => x.t === 'action' && x.action === action));
    const listAt = ms.findIndex((m) =>
      listTarget ? m.piece.t === 'entity' && m.piece.names === listTarget.names : meaning(m, 'keyword')?.keyword === 'list',
    );
    const between = actionAt < listAt ? ms.slice(actionAt + 1, listAt) : ms.slice(actionAt + 1);
    const before = actionAt > listAt ? [] : ms.slice(0, actionAt).filter((m) => m.text !== '把' && !has(m, 'filler'));
    const region = between.length > 0 ? between : before;
    // "milk and bread", "土豆、青椒和豆腐": one item per part.
    const parts: Mention[][] = [[]];
    for (const m of region) {
      if (has(m, 'break') || has(m, 'and')) parts.push([]);
      else parts[parts.length - 1]?.push(m);
    }
    const edge =
      /^(to|on|onto|the|my|a|an|in|into|from|off|of|as done|as|done|please|some|also|把|到|里|上|在|往|吧|一下|个|一个|一些|点)$/u;
    const items: string[] = [];
    for (const part of parts) {
      let words = part.map((m) => m.text);
      while (words.length > 0 && edge.test(words[words.length - 1] as string)) words = words.slice(0, -1);
      while (words.length > 0 && edge.test(words[0] as string)) words = words.slice(1);
      const item = tidyItem(words.join(this.language === 'en' ? ' ' : '').trim(), this.language);
      if (/^(it|them|that)$/u.test(item)) return { kind: 'none', why: 'no item' };
      if (item !== '') items.push(item);
    }
    if (items.length === 0) return { kind: 'none', why: 'no item' };
    // The items are free text: only words outside them can be left unexplained.
    const size = (m: Mention) => (this.language === 'en' ? m.text.split(' ').length : m.text.length);
    const outside = ms.filter((m) => !region.includes(m));
    const unexplained = outside.filter(isUnknownWord).reduce((n, m) => n + size(m), 0);
    const explained = ms.reduce((n, m) => n + size(m), 0) - unexplained;
    const add = action === 'add';
    const name = shopping
      ? add
        ? 'HassShoppingListAddItem'
        : 'HassShoppingListCompleteItem'
      : add
        ? 'HassListAddItem'
        : 'HassListCompleteItem';
    const slots = (item: string): Record<string, SlotValue> => (shopping ? { item } : { item, name: listName as string });
    return done(
      items.map((item) => intent(name, slots(item))),
      { explained, unexplained },
    );
  }

  private repeatReferent(
    referent: RecognisedIntent,
    targets: readonly TargetMention[],
    values: readonly Value[],
    color: string | undefined,
    done: (intents: RecognisedIntent[], extra?: { usedMemory?: boolean }) => ReturnType<Composer['clause']>,
    intent: (name: string, slots: Record<string, SlotValue>) => RecognisedIntent,
  ): ReturnType<Composer['clause']> {
    const slots: Record<string, SlotValue> = { ...(referent.slots as Record<string, SlotValue>) };
    const number = values.find((v) => v.kind !== 'duration');
    if (number) {
      const slot = ['brightness', 'position', 'volume_level', 'temperature'].find((s) => s in slots);
      if (slot === undefined) return { kind: 'none', why: 'value without setting' };
      slots[slot] = (number as { value: number }).value;
      return done([intent(referent.name, slots)], { usedMemory: true });
    }
    if (color && 'color' in slots) return done([intent(referent.name, { ...slots, color })], { usedMemory: true });
    const target = targets[0];
    // "and in the living room", "客厅呢" after a question about a place: the same question there.
    if (target && QUERY.has(referent.name) && target.names === undefined && (target.area !== undefined || target.floor !== undefined)) {
      if (!('area' in slots) && !('floor' in slots)) return { kind: 'none', why: 'nothing to repeat' };
      const asked: Record<string, SlotValue> = { ...slots };
      delete asked.area;
      delete asked.floor;
      delete asked.name;
      if (target.area) asked.area = target.area;
      if (target.floor) asked.floor = target.floor;
      return done([intent(referent.name, asked)], { usedMemory: true });
    }
    if (!target || QUERY.has(referent.name)) return { kind: 'none', why: 'nothing to repeat' };
    for (const key of ['name', 'area', 'floor']) delete slots[key];
    if (target.names) slots.name = target.names[0] as string;
    if (target.area) slots.area = target.area;
    if (target.floor) slots.floor = target.floor;
    const check = checkIntent({ name: referent.name, slots }, this.targetsOf(slots));
    if (!check.ok || this.targetsOf(slots).length === 0) return { kind: 'none', why: 'follow-up does not fit' };
    return done([intent(referent.name, slots)], { usedMemory: true });
  }
}

/** Words that mean "go home" to a vacuum only when it is named; alone they are about the person. */
const WEAK_DOCK = /^(回家|回去|返回|go home|return|go back to|back)$/u;

/** Transport controls: without a player said they go to whatever plays (intent-executor.ts #players). */
const TRANSPORT: ReadonlySet<Action> = new Set(['pause', 'resume', 'next', 'previous', 'stop']);

const QUERY = new Set(['HassGetState', 'HassClimateGetTemperature', 'HassGetCurrentTime', 'HassGetCurrentDate', 'HassGetWeather']);

/**
 * A garage door or a gate is a door too when a place says which ("车库的门": the garage's door);
 * "open the door" alone never reaches the garage. Other classes are only themselves.
 */
const DOOR_LIKE = new Set(['door', 'garage', 'gate']);
function classFits(said: string, has: string | undefined, placed: boolean): boolean {
  return said === has || (placed && said === 'door' && has !== undefined && DOOR_LIKE.has(has));
}

/** "a bit", "slightly", or 一点 right after an action ("开一点"). */
function isPartialWord(m: Mention): boolean {
  return m.piece.t === 'word' && m.piece.meanings.some((x) => x.t === 'partial');
}
function isPartial(mentions: readonly Mention[]): boolean {
  return mentions.some((m, at) => isPartialWord(m) || (/^一点儿?$/u.test(m.text) && at > 0 && has(mentions[at - 1] as Mention, 'action')));
}

/** A list or a timer command: its "for" says how long or for what item, never a purpose. */
function isListish(mentions: readonly Mention[]): boolean {
  return mentions.some(
    (m) => m.piece.t === 'word' && m.piece.meanings.some((x) => x.t === 'keyword' && (x.keyword === 'list' || x.keyword === 'timer')),
  );
}

/** Question words that ask whatever the frame ("check if", "which", "how many"): not undone by a request. */
function isAskWord(m: Mention): boolean {
  return m.piece.t === 'word' && m.piece.meanings.some((x) => x.t === 'question' && x.question !== 'yes_no');
}

/** Talk that stays inside its own clause when a whole command is said beside it. */
const CLAUSE_BLOCKS = new Set(['statement', 'chat', 'opinion', 'complaint', 'later']);

/** An action and a target of its own: a command that needs no other clause. */
function isWholeCommand(mentions: readonly Mention[]): boolean {
  const timerWithLength =
    mentions.some((m) => meaning(m, 'keyword')?.keyword === 'timer') &&
    mentions.some((m) => m.piece.t === 'value' && m.piece.value.kind === 'duration');
  return timerWithLength || (mentions.some((m) => has(m, 'action') || has(m, 'verb') || has(m, 'particle')) && mentions.some(isTarget));
}

/**
 * A clause that gives a reason and asks for nothing: no action, target, value, setting, state or
 * reference, and no question about a thing of the home (the time, the weather, a temperature).
 */
function isReason(mentions: readonly Mention[]): boolean {
  // "那个，帮我开下台灯", "um, so": a hesitation before the command points at nothing.
  if (mentions.every((m) => /^(那个|这个|那|嗯|呃|额|um|uh|so|well|right|ok|okay|alright)$/u.test(m.text) || has(m, 'break'))) return true;
  // A word repaired into a name or a kind ("heading" → heating, "night night" → Night Light) beside a
  // whole command is more likely the reason's own word than a second target.
  return !mentions.some(
    (m) =>
      (m.repaired === undefined && isTargetOrThing(m)) ||
      m.piece.t === 'value' ||
      m.piece.t === 'color' ||
      (m.piece.t === 'word' &&
        m.piece.meanings.some(
          (x) =>
            ['action', 'verb', 'particle', 'state', 'ensure', 'partial'].includes(x.t) ||
            (x.t === 'also' && m.text !== 'now') ||
            (x.t === 'it' && m.text !== 'its') ||
            (x.t === 'keyword' && x.keyword !== 'today' && x.keyword !== 'home'),
        )),
  );
}

/** A clause that asks and orders nothing and names no target: a remark such as "it's hot in here". */
function isRemark(mentions: readonly Mention[]): boolean {
  // "it's" (said "its") is the weather's "it", not a device the conversation named.
  return !mentions.some((m) => isTargetOrThing(m) || isCommandPart(m) || (has(m, 'it') && m.text !== 'its') || has(m, 'also'));
}

/** A word that is a timer word only because it is also the clock's ("time", "时间"). */
function isClockWord(m: Mention): boolean {
  return m.piece.t === 'word' && m.piece.meanings.some((x) => x.t === 'keyword' && x.keyword === 'time');
}

/** An unplaced content word directly before a device word ("basement light", "侧门"), "的" between allowed. */
function unknownModifier(mentions: readonly Mention[]): boolean {
  return mentions.some((m, at) => {
    if (!isUnknownWord(m)) return false;
    const next = mentions[at + 1]?.text === '的' ? mentions[at + 2] : mentions[at + 1];
    return next !== undefined && next.piece.t === 'word' && next.piece.meanings.some((x) => x.t === 'device');
  });
}

/** A word the finder could not place and that is not a light word ("the", "的"): content left unexplained. */
function isUnknownWord(m: Mention): boolean {
  return m.piece.t === 'unknown' && !m.piece.light;
}

/** A target, or a thing of the home that is not a device (a timer, a list). */
function isTargetOrThing(m: Mention): boolean {
  return (
    isTarget(m) ||
    (m.piece.t === 'word' && m.piece.meanings.some((x) => x.t === 'keyword' && (x.keyword === 'timer' || x.keyword === 'list')))
  );
}

/** Words that make a clause a command or a question of its own. */
function isCommandPart(m: Mention): boolean {
  return (
    m.piece.t === 'value' ||
    (m.piece.t === 'word' && m.piece.meanings.some((x) => ['action', 'verb', 'particle', 'question', 'state', 'color'].includes(x.t)))
  );
}

function isTarget(m: Mention): boolean {
  return m.piece.t === 'entity' || m.piece.t === 'area' || m.piece.t === 'floor' || has(m, 'device');
}

/** "on"/"off" after a verb belong to it, never start a new command. */
function isParticleLike(m: Mention): boolean {
  return has(m, 'particle') && !has(m, 'action');
}

function referentTarget(referent: RecognisedIntent): TargetMention {
  const s = referent.slots;
  const target: TargetMention = { plural: true };
  if (s.name !== undefined) target.names = [String(s.name)];
  if (s.area !== undefined) target.area = String(s.area);
  if (s.floor !== undefined) target.floor = String(s.floor);
  if (s.domain !== undefined)
    target.device = { domains: [String(s.domain)], ...(s.device_class !== undefined && { device_class: String(s.device_class) }) };
  return target;
}

function timerIntent(
  action: Action | undefined,
  keywords: ReadonlySet<Keyword>,
  question: boolean,
  all: boolean,
  duration: Extract<Value, { kind: 'duration' }> | undefined,
  intent: (name: string, slots: Record<string, SlotValue>) => RecognisedIntent,
): RecognisedIntent | undefined {
  const parts = (seconds: number): Record<string, SlotValue> => {
    const out: Record<string, SlotValue> = {};
    const h = Math.floor(seconds / 3600);
    const m = Math.floor((seconds % 3600) / 60);
    const s = Math.round(seconds % 60);
    if (h > 0) out.hours = h;
    if (m > 0) out.minutes = m;
    if (s > 0) out.seconds = s;
    return out;
  };
  if (action === 'cancel' || (action === 'stop' && !duration) || (action === 'off' && !duration)) {
    return intent(all ? 'HassCancelAllTimers' : 'HassCancelTimer', {});
  }
  if (action === 'pause') return intent('HassPauseTimer', {});
  if (action === 'resume') return intent('HassUnpauseTimer', {});
  if (duration && (action === 'raise' || (action === 'add' && keywords.has('timer'))))
    return intent('HassIncreaseTimer', parts(duration.seconds));
  if (duration && (action === 'lower' || action === 'complete')) return intent('HassDecreaseTimer', parts(duration.seconds));
  if (!duration && (question || keywords.has('left'))) return intent('HassTimerStatus', {});
  // "一小时的计时器还剩多久": a length beside "left" names the timer asked about, it starts none.
  if (keywords.has('left') && (action === undefined || action === 'tell')) return intent('HassTimerStatus', {});
  if (duration && (action === undefined || action === 'start' || action === 'set' || action === 'tell' || action === 'on')) {
    return intent('HassStartTimer', parts(duration.seconds));
  }
  return undefined;
}

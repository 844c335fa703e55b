/**
 * A dependency parser for Chinese made of POS templates, used until a trained model is configured.
 * It reads a sentence as clauses (split at ，；：) of the shape
 *   [subject NP] [adverbials, time words, 在/对/从 + NP] predicate [complement 到/在] [了] [object]
 * where the object is a noun phrase or, after verbs like 喜欢, a verb phrase of the same shape, and
 * a later clause without a subject shares the first clause's (我叫王芳，今年32岁). Noun phrases
 * keep their modifiers (我的, 一只, relative clauses ending in 的) as ATT arcs under the last noun.
 * Anything it does not understand is attached as an adverbial, so extraction stays quiet on it.
 */
import type { DependencyArc, DependencyLabel, DependencyParse, DependencyParser } from './dependency-parser.js';
import { isPunctuation } from './latin-words.js';
import type { TaggedWord } from './types.js';

type Category = 'punct' | 'noun' | 'pron' | 'verb' | 'vn' | 'adj' | 'adv' | 'prep' | 'conj' | 'quant' | 'time' | 'de' | 'particle' | 'loc';

/** Verbs that modify the next verb rather than head the clause (要去, 想买). */
const MODALS = new Set(['要', '想', '会', '能', '可以', '应该', '得', '愿意', '打算', '准备', '需要', '必须', '可能', '敢', '肯']);
/** Verb complements that join the verb into the predicate: 住在, 搬到, 送给. */
const COMPLEMENTS = new Set(['到', '在', '给', '成', '进', '往', '去']);
/**
 * Verbs that take a verb phrase as their object (喜欢[看京剧]). After any other verb a second verb
 * starts a serial predicate sharing the subject (去超市 / 买水果).
 */
const VERB_PHRASE_OBJECT_VERBS = new Set(
  '喜欢 爱 热爱 喜爱 爱好 讨厌 厌恶 反感 受不了 负责 开始 学 学习 习惯 擅长 坚持 继续 停止 害怕 怕 享受 决定 希望 觉得 认为 说'.split(' '),
);
/** Verbs that take no object: a noun after them starts something else (起床 / 跑步). */
const INTRANSITIVE_VERBS = new Set(['起床', '睡觉', '出门', '回家', '散步', '休息', '出差', '洗澡', '下班', '放学', '上班', '过敏']);
/** Verbs whose object is a name, which jieba rarely segments as one word. */
const NAME_VERBS = new Set(['叫', '名叫', '叫做', '称为', '称作']);
const COORDINATORS = new Set(['和', '与', '及', '以及', '或', '或者', '跟', '、']);
const CLAUSE_BREAKS = new Set(['，', ',', '；', ';', '：', ':', '。', '！', '？', '!', '?', '.', '…']);
/** Locatives that can stand in for a verb when nothing else does: 儿子明年上小学. */
const VERBAL_LOCATIVES = new Set(['上', '下', '进', '回']);
const AGE_WORD = /^(?:\p{N}+|[零〇一二两三四五六七八九十百]+)周?岁$/u;

function categorize(word: TaggedWord): Category {
  const { tag } = word;
  if (tag === 'x' || tag === 'w' || isPunctuation(word.word)) return COORDINATORS.has(word.word) ? 'conj' : 'punct';
  if (word.word === '的' || word.word === '之') return 'de';
  if (tag === 'p') return 'prep';
  if (tag === 'c') return COORDINATORS.has(word.word) ? 'conj' : 'adv';
  if (tag === 'r') return 'pron';
  if (tag === 'vn') return 'vn';
  if (tag.startsWith('v')) return 'verb';
  if (tag === 'd' || tag === 'ad') return 'adv';
  if (tag === 'a' || tag === 'b' || tag === 'z' || tag === 'ag') return 'adj';
  if (tag === 't' || tag === 'tg') return 'time';
  if (tag === 'm' || tag === 'q' || tag === 'mq') return 'quant';
  if (tag === 'f') return 'loc';
  if (tag.startsWith('u') || tag === 'y' || tag === 'e' || tag === 'k') return 'particle';
  return 'noun';
}

/** Parse state for one sentence: words, categories and the arcs being filled in (0-based heads, -1 = root). */
class SentenceParse {
  readonly cats: Category[];
  readonly heads: number[];
  readonly labels: DependencyLabel[];

  constructor(readonly words: readonly TaggedWord[]) {
    this.cats = words.map(categorize);
    this.heads = words.map(() => -1);
    this.labels = words.map((): DependencyLabel => 'ADV');
    this.resolveVerbalNouns();
  }

  word(i: number): string {
    return this.words[i]?.word ?? '';
  }

  attach(child: number, head: number, label: DependencyLabel): void {
    this.heads[child] = head;
    this.labels[child] = label;
  }

  /** 工作 is a noun in 我的工作是 and a verb in 在银行工作. */
  private resolveVerbalNouns(): void {
    for (let i = 0; i < this.cats.length; i++) {
      if (this.cats[i] !== 'vn') continue;
      const before = this.word(i - 1);
      const after = this.word(i + 1);
      this.cats[i] = before === '的' || after === '的' || after === '是' ? 'noun' : 'verb';
    }
  }

  isVerb(i: number): boolean {
    return this.cats[i] === 'verb';
  }

  /** A verb that modifies a noun through 的 (最喜欢的颜色): part of a noun phrase. */
  isRelativeVerb(i: number, end: number): boolean {
    return this.isVerb(i) && i + 1 < end && this.cats[i + 1] === 'de';
  }

  isModal(i: number, end: number): boolean {
    if (!MODALS.has(this.word(i))) return false;
    let j = i + 1;
    while (j < end && this.cats[j] === 'adv') j++;
    return j < end && this.isVerb(j);
  }

  /** Tokens that can be inside a noun phrase starting at or continuing through `i`. */
  isNounPhrasePart(i: number, end: number): boolean {
    const cat = this.cats[i];
    switch (cat) {
      case 'noun':
      case 'pron':
      case 'quant':
      case 'de':
        return true;
      case 'adj':
        return i + 1 < end && (this.cats[i + 1] === 'de' || this.cats[i + 1] === 'noun' || this.cats[i + 1] === 'adj');
      case 'time': {
        // 小红的生日, 周六下午三点: a time word is a noun phrase of its own or tied by 的, but it
        // never extends a noun phrase (爸爸 / 每天早上 / 喝咖啡).
        const before = this.cats[i - 1];
        const after = i + 1 < end ? this.cats[i + 1] : undefined;
        if (before === 'de' || after === 'de') return true;
        if (before === 'noun' || before === 'pron') return false;
        return before === 'time' || after === 'quant' || after === 'time';
      }
      case 'verb':
        // 一名退休教师, 一名警察/v: after a count word a verb is a modifier or a mis-tagged noun.
        return this.isRelativeVerb(i, end) || (this.cats[i - 1] === 'quant' && (i + 1 >= end || this.cats[i + 1] !== 'de'));
      case 'adv': {
        let j = i + 1;
        while (j < end && this.cats[j] === 'adv') j++;
        return j < end && this.isRelativeVerb(j, end);
      }
      default:
        return false;
    }
  }

  /** End (exclusive) of the noun phrase starting at `i`. */
  nounPhraseEnd(i: number, end: number): number {
    let j = i;
    while (j < end && this.isNounPhrasePart(j, end)) j++;
    return j;
  }

  /** The head of a noun phrase: its last noun-like word. */
  nounPhraseHead(start: number, end: number): number {
    for (let i = end - 1; i >= start; i--) {
      const cat = this.cats[i];
      if (cat === 'noun' || cat === 'pron' || cat === 'quant' || cat === 'time') return i;
    }
    return end - 1;
  }

  /** Arcs inside a noun phrase: modifiers under the head, 的 under the word before it. */
  attachNounPhrase(start: number, end: number, head: number): void {
    for (let i = start; i < end; i++) {
      if (i === head) continue;
      if (this.cats[i] === 'de' && i > start) this.attach(i, i - 1, 'RAD');
      else if (this.cats[i] === 'adv' && i + 1 < end) this.attach(i, i + 1, 'ADV');
      else this.attach(i, head, 'ATT');
    }
  }

  /** The word that heads the clause [start, end), or -1 for a clause without one. */
  findPredicate(start: number, end: number): number {
    for (let i = start; i < end; i++) {
      if (this.isVerb(i) && !this.isRelativeVerb(i, end) && !this.isModal(i, end)) return i;
    }
    for (let i = start; i < end; i++) {
      const next = this.cats[i + 1];
      if (this.cats[i] === 'loc' && VERBAL_LOCATIVES.has(this.word(i)) && i > start && (next === 'noun' || next === 'quant')) {
        this.cats[i] = 'verb';
        return i;
      }
    }
    for (let i = start; i < end; i++) if (this.cats[i] === 'quant' && AGE_WORD.test(this.word(i))) return i;
    // 我老家在湖南: without another verb, 在 is the verb "to be at".
    for (let i = start + 1; i < end; i++) {
      if (this.word(i) === '在' && this.isNounPhrasePart(i - 1, i) && this.nounPhraseEnd(i + 1, end) === end && i + 1 < end) {
        this.cats[i] = 'verb';
        return i;
      }
    }
    for (let i = start; i < end; i++) if (this.cats[i] === 'adj' && !this.isNounPhrasePart(i, end)) return i;
    return -1;
  }

  /** Subject, adverbials and prepositional phrases before the predicate. */
  parseBeforePredicate(start: number, predicate: number): void {
    const nounPhraseHeads: number[] = [];
    let i = start;
    while (i < predicate) {
      const cat = this.cats[i];
      if (cat === 'prep') {
        const objectEnd = this.nounPhraseEnd(i + 1, predicate);
        this.attach(i, predicate, 'ADV');
        if (objectEnd > i + 1) {
          const head = this.nounPhraseHead(i + 1, objectEnd);
          this.attach(head, i, 'POB');
          this.attachNounPhrase(i + 1, objectEnd, head);
        }
        i = Math.max(objectEnd, i + 1);
        continue;
      }
      // Before the verb, time words are adverbials (明天早上八点), unless 的 ties them to a noun.
      const next = this.cats[i + 1];
      const timeAdverbial =
        (cat === 'time' && next !== 'de' && this.cats[i - 1] !== 'de') ||
        (cat === 'quant' && next !== 'de' && next !== 'noun' && next !== 'pron' && next !== 'adj');
      if (!timeAdverbial && this.isNounPhrasePart(i, predicate)) {
        const phraseEnd = this.nounPhraseEnd(i, predicate);
        const head = this.nounPhraseHead(i, phraseEnd);
        this.attachNounPhrase(i, phraseEnd, head);
        const previous = nounPhraseHeads[nounPhraseHeads.length - 1];
        // 爸爸和妈妈: the second subject is coordinated with the first.
        if (previous !== undefined && this.cats[i - 1] === 'conj') {
          this.attach(head, previous, 'COO');
          this.attach(i - 1, head, 'LAD');
        } else {
          nounPhraseHeads.push(head);
        }
        i = phraseEnd;
        continue;
      }
      this.attach(i, predicate, cat === 'particle' ? 'RAD' : 'ADV');
      i++;
    }
    const subject = nounPhraseHeads.pop();
    if (subject !== undefined) this.attach(subject, predicate, 'SBV');
    // An earlier noun phrase is a topic (那本书我看过): an adverbial here.
    for (const topic of nounPhraseHeads) this.attach(topic, predicate, 'ADV');
  }

  /** Complements, aspect particles and the object after a predicate; returns where it stopped. */
  parseAfterPredicate(predicate: number, end: number): number {
    let i = predicate + 1;
    let governor = predicate;
    let label: DependencyLabel = 'VOB';
    if (i < end && COMPLEMENTS.has(this.word(i)) && (this.cats[i] === 'verb' || this.cats[i] === 'prep')) {
      this.attach(i, predicate, 'CMP');
      governor = i;
      label = 'POB';
      i++;
    }
    while (
      i < end &&
      (this.cats[i] === 'particle' || this.cats[i] === 'adv' || (this.cats[i] === 'time' && !this.isNounPhrasePart(i, end)))
    ) {
      this.attach(i, predicate, this.cats[i] === 'particle' ? 'RAD' : 'ADV');
      i++;
    }
    if (i >= end || (governor === predicate && INTRANSITIVE_VERBS.has(this.word(predicate)))) return i;
    if (NAME_VERBS.has(this.word(predicate))) return this.parseName(i, end, predicate);
    return this.parseObjects(i, end, predicate, governor, label);
  }

  /** After 叫 the rest of the clause is the name, however jieba cut it. */
  private parseName(start: number, end: number, predicate: number): number {
    let last = end - 1;
    while (last > start && (this.cats[last] === 'particle' || this.cats[last] === 'punct')) {
      this.attach(last, predicate, 'RAD');
      last--;
    }
    this.attach(last, predicate, 'VOB');
    for (let i = start; i < last; i++) this.attach(i, last, 'ATT');
    return end;
  }

  /** One object, or several joined by 和/、: the first under the governor, the others COO under the first. */
  private parseObjects(start: number, end: number, predicate: number, governor: number, label: DependencyLabel): number {
    const first = this.parseOneObject(start, end, predicate, governor, label);
    if (first === undefined) return start;
    let i = first.resume;
    while (i + 1 < end && this.cats[i] === 'conj' && (this.isNounPhrasePart(i + 1, end) || this.isVerb(i + 1))) {
      const next = this.parseOneObject(i + 1, end, predicate, first.head, 'COO');
      if (next === undefined) break;
      this.attach(i, next.head, 'LAD');
      i = next.resume;
    }
    return i;
  }

  private parseOneObject(
    start: number,
    end: number,
    predicate: number,
    governor: number,
    label: DependencyLabel,
  ): { head: number; resume: number } | undefined {
    if (this.isVerb(start) && !this.isRelativeVerb(start, end)) {
      if (!VERB_PHRASE_OBJECT_VERBS.has(this.word(predicate)) && label !== 'COO') return undefined;
      // An object clause: 喜欢[看京剧], 负责[打扫卫生].
      this.attach(start, governor, label);
      return { head: start, resume: this.parseAfterPredicate(start, end) };
    }
    if (!this.isNounPhrasePart(start, end)) return undefined;
    const phraseEnd = this.nounPhraseEnd(start, end);
    const head = this.nounPhraseHead(start, phraseEnd);
    this.attach(head, governor, label);
    this.attachNounPhrase(start, phraseEnd, head);
    let i = phraseEnd;
    // 鞋柜上: the locative belongs to the noun, not to the entity's name.
    while (i < end && (this.cats[i] === 'loc' || this.cats[i] === 'particle')) {
      this.attach(i, this.cats[i] === 'loc' ? head : predicate, 'RAD');
      i++;
    }
    return { head, resume: i };
  }

  /** Parses [start, end) as one clause; returns its head word (or -1 if it has no content). */
  parseClause(start: number, end: number): number {
    if (start >= end) return -1;
    const predicate = this.findPredicate(start, end);
    if (predicate < 0) {
      const phraseEnd = this.nounPhraseEnd(start, end);
      const head = this.nounPhraseHead(start, Math.max(phraseEnd, start + 1));
      this.attachNounPhrase(start, Math.max(phraseEnd, start + 1), head);
      for (let i = Math.max(phraseEnd, start + 1); i < end; i++) this.attach(i, head, 'ADV');
      return head;
    }
    this.parseBeforePredicate(start, predicate);
    this.parseSerial(predicate, end);
    return predicate;
  }

  /** 去超市买水果: each further verb is a predicate of its own, coordinated with the first. */
  private parseSerial(predicate: number, end: number): void {
    let stopped = this.parseAfterPredicate(predicate, end);
    while (stopped < end && !this.isVerb(stopped)) {
      this.attach(stopped, predicate, this.cats[stopped] === 'particle' ? 'RAD' : 'ADV');
      stopped++;
    }
    if (stopped >= end) return;
    this.attach(stopped, predicate, 'COO');
    this.parseSerial(stopped, end);
  }

  run(): number[] {
    const clauseHeads: number[] = [];
    const punctuation: number[] = [];
    let start = 0;
    for (let i = 0; i <= this.words.length; i++) {
      const isBreak = i === this.words.length || (this.cats[i] === 'punct' && CLAUSE_BREAKS.has(this.word(i)));
      if (!isBreak) {
        if (this.cats[i] === 'punct') punctuation.push(i);
        continue;
      }
      const head = this.parseClause(start, i);
      if (head >= 0) clauseHeads.push(head);
      if (i < this.words.length) punctuation.push(i);
      start = i + 1;
    }
    const root = clauseHeads[0] ?? 0;
    this.attach(root, -1, 'HED');
    for (const head of clauseHeads.slice(1)) this.attach(head, root, 'COO');
    for (const mark of punctuation) if (mark !== root) this.attach(mark, root, 'WP');
    return this.heads;
  }
}

/** The template parser: no model, no download. */
export class RuleDependencyParser implements DependencyParser {
  readonly source = 'rules' as const;

  parse(words: readonly TaggedWord[]): DependencyParse {
    if (words.length === 0) return { words: [], arcs: [], source: this.source };
    const state = new SentenceParse(words);
    state.run();
    const arcs: DependencyArc[] = words.map((_, i) => ({
      head: (state.heads[i] ?? -1) + 1,
      label: state.labels[i] ?? 'ADV',
    }));
    return { words: words.map((w) => ({ ...w })), arcs, source: this.source };
  }
}

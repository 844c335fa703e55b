/**
 * The Extract stage for Chinese: reads subject–predicate–object candidates off dependency arcs.
 * Each kind of arc that carries the object has a score (VOB 0.9, FOB 0.85, IOB 0.8, POB 0.75, a
 * coordinated object 0.7). Arcs from the rule parser are only as good as its POS templates, so
 * their scores are mapped linearly onto the template range 0.45–0.7 and the method says `template`.
 * Arcs from a model land in 0.75–0.9 (method `dependency`): the arc kind sets the ceiling
 * (0.75 + (score − 0.6) / 2: VOB 0.9 … COO 0.8) and the model's own certainty, the product of the
 * head probabilities of the arcs the fact rests on, scales it down towards 0.75.
 */
import type { Candidate, SpeakerContext } from './candidate.js';
import { CHINESE_COUNT_WORD, objectTypeFor, parseNumber, SPEAKER_TOKENS } from './candidate.js';
import type { DependencyLabel, DependencyParse } from './dependency-parser.js';
import { isPunctuation } from './latin-words.js';
import { chineseAttribute, chinesePlaceRelation, chineseRelation, isChineseNegation, isChineseOccupation } from './relation-lexicon.js';

const ARC_SCORES: Readonly<Partial<Record<DependencyLabel, number>>> = { VOB: 0.9, FOB: 0.85, IOB: 0.8, POB: 0.75, COO: 0.7 };
/** A subject with a numeric predicate (爷爷八十岁): as sure as an indirect object. */
const AGE_SCORE = 0.8;
const AGE_WORD = /^(\p{N}+|[零〇一二两三四五六七八九十百]+)周?岁$/u;
const SPEAKER_WORDS = new Set(['我', '俺', '本人', '咱']);
/** 我爸 → 我的爸爸: the spoken short form becomes the name the entity has elsewhere. */
const SHORT_KIN: Readonly<Record<string, string>> = { 爸: '爸爸', 妈: '妈妈', 哥: '哥哥', 姐: '姐姐', 弟: '弟弟', 妹: '妹妹' };
const COUNT_WORD = new RegExp(`${CHINESE_COUNT_WORD.source}$`, 'u');
const JOB_COUNT_WORD = /^一?[名位]$/u;
const PARTICLE_TAG = /^(?:u|y|e|k|x|w|f)/;
/**
 * Predicates that report thoughts, speech or requests (觉得, 说, 提醒我开会): what follows is no
 * fact about the subject, so nothing is extracted from them.
 */
const NO_FACT_VERBS = new Set('希望 觉得 认为 说 知道 相信 以为 猜 想 听说 发现 记得 忘了 告诉 问 提醒 让 请 帮 帮忙 要求 建议'.split(' '));
/** A name is not a pronoun or a verb phrase (妈妈叫我吃饭 is a request, not a name). */
const NOT_IN_NAMES = /^(?:r|v)/;

const round2 = (x: number): number => Math.round(x * 100) / 100;

function templateScore(arcScore: number): number {
  return round2(0.45 + (arcScore - 0.7) * 1.25);
}

/** `certainty` is the product of head probabilities (1 when the parse carries none). */
function modelScore(arcScore: number, certainty: number): number {
  const ceiling = 0.75 + (arcScore - 0.6) / 2;
  return round2(0.75 + (ceiling - 0.75) * Math.min(1, Math.max(0, certainty)));
}

class ParseReader {
  private readonly children: number[][];

  constructor(
    private readonly parse: DependencyParse,
    private readonly context: SpeakerContext,
  ) {
    this.children = parse.words.map(() => []);
    parse.arcs.forEach((arc, i) => {
      if (arc.head > 0) this.children[arc.head - 1]?.push(i);
    });
  }

  word(i: number): string {
    return this.parse.words[i]?.word ?? '';
  }

  tag(i: number): string {
    return this.parse.words[i]?.tag ?? '';
  }

  label(i: number): DependencyLabel | undefined {
    return this.parse.arcs[i]?.label;
  }

  /** How sure the parser was of the heads of these words (the product; 1 without model scores). */
  certainty(nodes: readonly number[]): number {
    return nodes.reduce((p, i) => p * (this.parse.arcs[i]?.confidence ?? 1), 1);
  }

  childrenOf(i: number, label?: DependencyLabel): number[] {
    const all = this.children[i] ?? [];
    return label === undefined ? all : all.filter((c) => this.label(c) === label);
  }

  root(): number {
    return this.parse.arcs.findIndex((arc) => arc.head === 0);
  }

  /** Word indices of i's phrase: i and its descendants, leaving out its own coordinated siblings. */
  phraseIndices(i: number): number[] {
    const out: number[] = [];
    const visit = (node: number, top: boolean): void => {
      // A model's arcs are not guaranteed to form a tree; never walk a cycle twice.
      if (out.includes(node)) return;
      out.push(node);
      for (const child of this.childrenOf(node)) {
        const label = this.label(child);
        if (top && (label === 'COO' || label === 'LAD' || label === 'WP')) continue;
        if (label === 'WP') continue;
        visit(child, false);
      }
    };
    visit(i, true);
    return out.sort((a, b) => a - b);
  }

  /** The phrase as text with counts (一只), trailing particles and locatives (上, 了) dropped. */
  phrase(i: number): { text: string; startsWithJobCount: boolean; hasPossessive: boolean } {
    let indices = this.phraseIndices(i).filter((k) => !isPunctuation(this.word(k)));
    let startsWithJobCount = false;
    while (indices.length > 1 && COUNT_WORD.test(this.word(indices[0] ?? -1))) {
      if (JOB_COUNT_WORD.test(this.word(indices[0] ?? -1))) startsWithJobCount = true;
      indices = indices.slice(1);
    }
    while (indices.length > 1) {
      const last = indices[indices.length - 1] ?? -1;
      if (last === i || !PARTICLE_TAG.test(this.tag(last))) break;
      indices = indices.slice(0, -1);
    }
    const words = indices.map((k) => this.word(k));
    return { text: words.join(''), startsWithJobCount, hasPossessive: words.includes('的') };
  }

  speakerName(): string {
    return this.context.speaker ?? SPEAKER_TOKENS.zh;
  }

  /** 我 → the speaker; 我女儿 / 我的女儿 → the speaker's daughter. */
  speakerize(words: string[]): string {
    const [first, ...rest] = words;
    if (first === undefined) return '';
    if (!SPEAKER_WORDS.has(first)) return words.join('');
    if (rest.length === 0) return this.speakerName();
    const owned = (rest[0] === '的' ? rest.slice(1) : rest).join('');
    return `${this.speakerName()}的${SHORT_KIN[owned] ?? owned}`;
  }

  /** Whether a verb follows the phrase under i before the clause ends. */
  clauseTailHasVerb(i: number): boolean {
    const last = Math.max(...this.phraseIndices(i));
    for (let k = last + 1; k < this.parse.words.length; k++) {
      if (isPunctuation(this.word(k))) return false;
      if (this.tag(k).startsWith('v')) return true;
    }
    return false;
  }

  /** Whether the phrase under i contains a word whose tag matches. */
  phraseHasTag(i: number, pattern: RegExp): boolean {
    return this.phraseIndices(i).some((k) => pattern.test(this.tag(k)));
  }

  subjectText(i: number): string {
    return this.speakerize(this.phraseIndices(i).map((k) => this.word(k)));
  }

  /** A的B → [A, B] for 小红的生日, 我最喜欢的颜色 → [我, 最喜欢的颜色]; undefined without 的. */
  possessiveSplit(i: number): [string, string] | undefined {
    const indices = this.phraseIndices(i);
    const words = indices.map((k) => this.word(k));
    const de = words.lastIndexOf('的');
    if (de <= 0 || de >= words.length - 1) return undefined;
    let ownerEnd = de;
    // 我最喜欢的颜色: the owner is the noun before the relative clause.
    for (let k = 0; k < de; k++) {
      const tag = this.tag(indices[k] ?? -1);
      if (tag.startsWith('v') || tag === 'd') {
        ownerEnd = k;
        break;
      }
    }
    if (ownerEnd === 0) return undefined;
    const owner = this.speakerize(words.slice(0, ownerEnd));
    const attribute = words.slice(ownerEnd === de ? de + 1 : ownerEnd).join('');
    return [owner, attribute];
  }
}

/** Candidates from one parsed Chinese sentence. */
export function extractFromChineseParse(parse: DependencyParse, context: SpeakerContext): Candidate[] {
  const reader = new ParseReader(parse, context);
  const method = parse.source === 'model' ? 'dependency' : 'template';
  const score = (arcScore: number, nodes: readonly number[]): number =>
    parse.source === 'model' ? modelScore(arcScore, reader.certainty(nodes)) : templateScore(arcScore);
  const out: Candidate[] = [];
  const push: Push = (subject, relation, objectSurface, arcScore, nodes, object = objectSurface) => {
    if (subject === '' || objectSurface === '' || relation === '') return;
    const candidate: Candidate = { subject, relation, object, objectSurface, confidence: score(arcScore, nodes), method };
    const objectType = objectTypeFor(relation);
    if (objectType !== undefined) candidate.objectType = objectType;
    out.push(candidate);
  };

  const root = reader.root();
  if (root < 0) return out;
  // The root and the clause heads coordinated with it, each with the subject it has or inherits.
  const predicates: Array<{ node: number; inherited: number | undefined }> = [];
  const collect = (node: number, inherited: number | undefined): void => {
    if (predicates.some((p) => p.node === node)) return;
    predicates.push({ node, inherited });
    const own = reader.childrenOf(node, 'SBV')[0] ?? inherited;
    for (const next of reader.childrenOf(node, 'COO')) collect(next, own);
  };
  collect(root, undefined);

  for (const { node, inherited } of predicates) {
    const subjectNode = reader.childrenOf(node, 'SBV')[0] ?? inherited;
    const predicate = reader.word(node);
    if (subjectNode === undefined || NO_FACT_VERBS.has(predicate)) continue;
    // 爸爸和妈妈都喜欢喝茶: one fact per coordinated subject.
    for (const subjectHead of [subjectNode, ...reader.childrenOf(subjectNode, 'COO')]) {
      extractPredicate(reader, node, subjectHead, push);
    }
  }
  return out;
}

/** `nodes`: the words whose arcs the fact rests on (subject, object, and a complement between). */
type Push = (subject: string, relation: string, objectSurface: string, arcScore: number, nodes: readonly number[], object?: string) => void;

function extractPredicate(reader: ParseReader, node: number, subjectNode: number, push: Push): void {
  const subject = reader.subjectText(subjectNode);
  const predicate = reader.word(node);
  const negated = reader.childrenOf(node, 'ADV').some((c) => isChineseNegation(reader.word(c)));
  // 我把钥匙放在柜子里: the keys are what is put somewhere, so they are the subject of the place.
  const moved = reader
    .childrenOf(node, 'ADV')
    .filter((c) => reader.word(c) === '把')
    .flatMap((c) => reader.childrenOf(c, 'POB'))[0];

  const age = AGE_WORD.exec(predicate);
  if (age !== null) {
    const value = parseNumber(age[1] ?? '');
    if (value !== undefined) push(subject, 'age', age[1] ?? '', AGE_SCORE, [subjectNode], String(value));
    return;
  }

  /** `via`: a complement or preposition between the predicate and the object. */
  const pushWithCoordinates = (object: number, relation: string, arcScore: number, via: readonly number[] = []): void => {
    const nodes = [subjectNode, ...via, object];
    push(subject, relation, reader.phrase(object).text, arcScore, nodes);
    for (const conjunct of reader.childrenOf(object, 'COO'))
      push(subject, relation, reader.phrase(conjunct).text, ARC_SCORES.COO ?? 0.7, [...nodes, conjunct]);
  };

  let found = false;
  for (const object of reader.childrenOf(node, 'VOB')) {
    found = true;
    if (predicate === '是') {
      // 老王是楼下开超市的: a 是…的 sentence about what someone does, not "老王 is 楼下".
      if (reader.clauseTailHasVerb(object)) continue;
      const phrase = reader.phrase(object);
      const split = reader.possessiveSplit(subjectNode);
      // 一名 marks a job; without it, 儿子的班主任是王老师 names who holds a role.
      const isJob = !phrase.hasPossessive && (phrase.startsWithJobCount || (split === undefined && isChineseOccupation(phrase.text)));
      const attribute = split === undefined ? undefined : chineseAttribute(split[1]);
      // 我的工作是X names an attribute; 我的丈夫是一名厨师 says what the husband does.
      if (split !== undefined && attribute !== undefined && (!isJob || attribute !== split[1]))
        push(split[0], attribute, phrase.text, ARC_SCORES.VOB ?? 0.9, [subjectNode, object]);
      else if (isJob) push(subject, 'occupation', phrase.text, ARC_SCORES.VOB ?? 0.9, [subjectNode, object]);
      else push(subject, negated ? '不是' : 'is', phrase.text, ARC_SCORES.VOB ?? 0.9, [subjectNode, object]);
      continue;
    }
    const relation = chineseRelation(predicate, negated);
    if (relation === 'name' && reader.phraseHasTag(object, NOT_IN_NAMES)) continue;
    if (moved !== undefined) push(reader.subjectText(moved), relation, reader.phrase(object).text, ARC_SCORES.VOB ?? 0.9, [moved, object]);
    else pushWithCoordinates(object, relation, ARC_SCORES.VOB ?? 0.9);
  }
  for (const label of ['FOB', 'IOB'] as const) {
    for (const object of reader.childrenOf(node, label)) {
      found = true;
      push(subject, chineseRelation(predicate, negated), reader.phrase(object).text, ARC_SCORES[label] ?? 0.8, [subjectNode, object]);
    }
  }
  for (const complement of reader.childrenOf(node, 'CMP')) {
    for (const object of reader.childrenOf(complement, 'POB')) {
      found = true;
      const relation = chineseRelation(predicate + reader.word(complement), negated);
      if (moved !== undefined)
        push(reader.subjectText(moved), relation, reader.phrase(object).text, ARC_SCORES.POB ?? 0.75, [moved, complement, object]);
      else pushWithCoordinates(object, relation, ARC_SCORES.POB ?? 0.75, [complement]);
    }
  }
  if (negated) return;
  // 在银行工作, 对花粉过敏, 在中学当老师: the place or target is the object of a preposition before the verb.
  for (const preposition of reader.childrenOf(node, 'ADV')) {
    const relation = chinesePlaceRelation(reader.word(preposition), predicate);
    if (relation === undefined || (found && relation !== 'works_at')) continue;
    for (const object of reader.childrenOf(preposition, 'POB'))
      pushWithCoordinates(object, relation, ARC_SCORES.POB ?? 0.75, [preposition]);
  }
}

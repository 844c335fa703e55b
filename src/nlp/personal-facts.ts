/**
 * The personal-fact distiller: the handful of first-person statements a household assistant must
 * never miss (name, home, likes and dislikes, age, job), read with fixed phrasings rather than a
 * parse, so they survive segmentation mistakes (jieba cuts 张伟 as 张/q 伟/zg). Relations are
 * the canonical names so memory can supersede them (lives_in and age hold one current value).
 */
import type { Candidate, SpeakerContext } from './candidate.js';
import { CHINESE_COUNT_WORD, objectTypeFor, parseNumber, SPEAKER_TOKENS } from './candidate.js';
import { isChineseOccupation, isEnglishOccupation } from './relation-lexicon.js';

/** Personal facts are stated in the most explicit form people use, so they rank above any parse. */
export const PERSONAL_CONFIDENCE = 0.95;

interface Rule {
  relation: string;
  pattern: RegExp;
  /** Objects are split on 和 / "and" (我喜欢游泳和跑步 → two likes). */
  splitList?: boolean;
  accept?: (object: string) => boolean;
}

const ZH_ADVERBS = '(?:现在|目前|一直|已经|也|还|都|很|非常|特别|最|真的|真|刚|刚刚|才|从小就|就)*';
const ZH_NUMBER = '(\\d{1,3}|[一二两三四五六七八九十百]{1,4})';

const CHINESE_RULES: Rule[] = [
  { relation: 'name', pattern: /^的(?:名字|姓名)(?:是|叫)(.+)$/u },
  { relation: 'name', pattern: /^(?:叫|名叫|叫做)(.+)$/u },
  { relation: 'lives_in', pattern: new RegExp(`^${ZH_ADVERBS}(?:住在|居住在|生活在|定居在)(.+)$`, 'u') },
  { relation: 'lives_in', pattern: new RegExp(`^${ZH_ADVERBS}(?:搬到|搬去|搬进|搬家到|迁到)了?(.+)$`, 'u') },
  { relation: 'dislikes', pattern: new RegExp(`^${ZH_ADVERBS}(?:不|不太|很不|一点也不|并不)(?:喜欢|爱)(.+)$`, 'u'), splitList: true },
  { relation: 'dislikes', pattern: new RegExp(`^${ZH_ADVERBS}(?:讨厌|厌恶|受不了)(.+)$`, 'u'), splitList: true },
  { relation: 'likes', pattern: new RegExp(`^${ZH_ADVERBS}(?:喜欢|热爱|喜爱|爱)(.+)$`, 'u'), splitList: true },
  { relation: 'age', pattern: new RegExp(`^(?:今年|已经|现在|目前)?${ZH_NUMBER}周?岁`, 'u') },
  { relation: 'occupation', pattern: /^的(?:工作|职业)是(?:一名|一位|一个)?(.+)$/u },
  { relation: 'occupation', pattern: /^是(?:一名|一位)(.+)$/u },
  { relation: 'occupation', pattern: /^是(?:一个)?(.+)$/u, accept: isChineseOccupation },
  { relation: 'works_at', pattern: /^在(.+?)(?:工作|上班)$/u },
];

/** Clauses after 我… that carry on about the speaker without repeating 我 (我叫王芳，今年32岁). */
const ZH_CONTINUATION = /^(?:今年|是|住|在|喜欢|不|也|还|现在|已经|目前|搬|讨厌|从小)/u;
const ZH_TRAILING = /[了啦呢哦呀啊吧哈嘛。！？!?.，,\s]+$/u;
const ZH_LIST = /和|、|与|以及|还有/u;
const ZH_BAD_OBJECT = /^[的了是]|[是的]$/u;
const ZH_NAME = /^[\p{Script=Han}A-Za-z·]{1,10}$/u;

function cleanChinese(relation: string, raw: string): string | undefined {
  const object = raw.replace(ZH_TRAILING, '').replace(CHINESE_COUNT_WORD, '').trim();
  if (object === '' || ZH_BAD_OBJECT.test(object)) return undefined;
  if (relation === 'name' && (!ZH_NAME.test(object) || /[的了是]/u.test(object))) return undefined;
  if ((relation === 'likes' || relation === 'dislikes') && object.includes('的')) return undefined;
  return object;
}

const EN_RULES: Rule[] = [
  { relation: 'name', pattern: /^my name(?: is|'s|’s) (.+)$/i },
  { relation: 'name', pattern: /^(?:i'm|i’m|i am) called (.+)$/i },
  { relation: 'name', pattern: /^(?:call me|(?:everyone|people) calls? me) (.+)$/i },
  { relation: 'lives_in', pattern: /^i (?:now |currently |still |also )?live in (.+)$/i },
  { relation: 'lives_in', pattern: /^(?:i'm|i’m|i am) (?:now |currently )?living in (.+)$/i },
  { relation: 'lives_in', pattern: /^i(?:'ve|’ve| have)? (?:just |recently |finally |now )?moved to (.+)$/i },
  {
    relation: 'dislikes',
    pattern: /^i (?:really |just )?(?:don't|don’t|do not|didn't|never|can't|cannot) (?:like|love|enjoy|stand) (.+)$/i,
    splitList: true,
  },
  { relation: 'dislikes', pattern: /^i (?:really |just )?(?:hate|dislike|detest) (.+)$/i, splitList: true },
  { relation: 'likes', pattern: /^i (?:really |also |totally |just |absolutely )?(?:like|love|enjoy|adore) (.+)$/i, splitList: true },
  { relation: 'age', pattern: /^(?:i'm|i’m|i am) (\d{1,3})(?: years? old| yrs? old)?$/i },
  { relation: 'occupation', pattern: /^i work as (?:an? )?(.+)$/i },
  { relation: 'occupation', pattern: /^(?:i'm|i’m|i am) (?:an? )(.+)$/i, accept: isEnglishOccupation },
  { relation: 'works_at', pattern: /^i work (?:at|for) (.+)$/i },
];

/** Where an English object ends: time phrases and subordinate clauses are not part of it. */
const EN_OBJECT_END =
  /\s+(?:last|next|this|since|because|when|while|now|already|recently|ago|yesterday|today|tomorrow|every|for|with|so|but)\b.*$/i;
const EN_CLAUSE_SPLIT = /\s*[,;]\s*|\s+(?:and|but)\s+(?=(?:i|i'm|i’m|my)\b)/i;
const EN_LIST = /\s*,\s*|\s+and\s+|\s+or\s+/i;

function cleanEnglish(raw: string): string | undefined {
  const object = raw
    .replace(EN_OBJECT_END, '')
    .replace(/[.!?,;:\s]+$/u, '')
    .replace(/^(?:the|a|an)\s+/i, '')
    .trim();
  if (object === '' || object.length > 60) return undefined;
  return object;
}

function candidate(subject: string, relation: string, object: string, surface: string): Candidate {
  const found: Candidate = {
    subject,
    relation,
    object,
    objectSurface: surface,
    confidence: PERSONAL_CONFIDENCE,
    method: 'personal',
    subjectType: 'person',
  };
  const objectType = objectTypeFor(relation);
  if (objectType !== undefined) found.objectType = objectType;
  return found;
}

function applyRules(
  rules: readonly Rule[],
  body: string,
  subject: string,
  clean: (relation: string, raw: string) => string | undefined,
  list: RegExp,
): Candidate[] {
  for (const rule of rules) {
    const match = rule.pattern.exec(body);
    const raw = match?.[1];
    if (raw === undefined) continue;
    const cleaned = clean(rule.relation, raw);
    if (cleaned === undefined) continue;
    if (rule.accept !== undefined && !rule.accept(cleaned)) continue;
    if (rule.relation === 'age') {
      const value = parseNumber(cleaned);
      return value === undefined ? [] : [candidate(subject, 'age', String(value), cleaned)];
    }
    const objects = rule.splitList === true ? cleaned.split(list).map((o) => clean(rule.relation, o)) : [cleaned];
    return objects.filter((o): o is string => o !== undefined && o !== '').map((o) => candidate(subject, rule.relation, o, o));
  }
  return [];
}

/** Personal facts stated by the speaker in one Chinese sentence. */
export function chinesePersonalFacts(sentence: string, context: SpeakerContext): Candidate[] {
  const subject = context.speaker ?? SPEAKER_TOKENS.zh;
  const out: Candidate[] = [];
  let aboutSpeaker = false;
  for (const clause of sentence.split(/[，,；;。！!]/u)) {
    const text = clause.trim();
    let body: string;
    if (text.startsWith('我') && !/^我(?:们|家|国|校|司)/u.test(text)) {
      aboutSpeaker = true;
      body = text.slice(1);
    } else if (aboutSpeaker && ZH_CONTINUATION.test(text)) {
      body = text;
    } else {
      aboutSpeaker = false;
      continue;
    }
    out.push(...applyRules(CHINESE_RULES, body, subject, cleanChinese, ZH_LIST));
  }
  return out;
}

/** Personal facts stated by the speaker in one English sentence. */
export function englishPersonalFacts(sentence: string, context: SpeakerContext): Candidate[] {
  const subject = context.speaker ?? SPEAKER_TOKENS.en;
  const out: Candidate[] = [];
  const body = sentence.replace(/[.!]+\s*$/u, '').trim();
  for (const clause of body.split(EN_CLAUSE_SPLIT)) {
    out.push(...applyRules(EN_RULES, clause.trim(), subject, (_relation, raw) => cleanEnglish(raw), EN_LIST));
  }
  return out;
}

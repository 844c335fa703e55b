/**
 * Relation names. The facts memory must be able to supersede or compare across languages get one
 * canonical English name (住在 / lives in / moved to → `lives_in`); every other predicate keeps
 * its own word (Chinese verb, English base form plus preposition), which is what recall matches.
 */

export const CANONICAL_RELATIONS = [
  'name',
  'lives_in',
  'likes',
  'dislikes',
  'age',
  'occupation',
  'works_at',
  'studies_at',
  'allergic_to',
  'birthday',
  'located_in',
  'is',
] as const;

export type CanonicalRelation = (typeof CANONICAL_RELATIONS)[number];

/**
 * Relations a subject has one current value of: a new fact supersedes the old one, which memory
 * keeps as history (valid_to set) instead of deleting.
 */
export const SINGLE_VALUED_RELATIONS: ReadonlySet<string> = new Set(['lives_in', 'age', 'birthday']);

const CHINESE_PREDICATES: Readonly<Record<string, CanonicalRelation>> = {
  喜欢: 'likes',
  爱: 'likes',
  热爱: 'likes',
  喜爱: 'likes',
  爱好: 'likes',
  讨厌: 'dislikes',
  厌恶: 'dislikes',
  反感: 'dislikes',
  受不了: 'dislikes',
  住在: 'lives_in',
  居住在: 'lives_in',
  生活在: 'lives_in',
  定居在: 'lives_in',
  搬到: 'lives_in',
  搬去: 'lives_in',
  搬进: 'lives_in',
  搬家到: 'lives_in',
  迁到: 'lives_in',
  叫: 'name',
  名叫: 'name',
  叫做: 'name',
  称为: 'name',
  是: 'is',
  在: 'located_in',
  当: 'occupation',
  担任: 'occupation',
};

/** 在X<verb>: where someone works, studies or lives. */
const CHINESE_PLACE_VERBS: Readonly<Record<string, CanonicalRelation>> = {
  工作: 'works_at',
  上班: 'works_at',
  任职: 'works_at',
  读书: 'studies_at',
  上学: 'studies_at',
  念书: 'studies_at',
  学习: 'studies_at',
  就读: 'studies_at',
  住: 'lives_in',
  生活: 'lives_in',
  居住: 'lives_in',
  当: 'works_at',
  担任: 'works_at',
};

/** 对X<verb>. */
const CHINESE_TOWARDS_VERBS: Readonly<Record<string, CanonicalRelation>> = {
  过敏: 'allergic_to',
};

const CHINESE_ATTRIBUTES: Readonly<Record<string, CanonicalRelation>> = {
  名字: 'name',
  姓名: 'name',
  工作: 'occupation',
  职业: 'occupation',
  生日: 'birthday',
  年龄: 'age',
  岁数: 'age',
};

const NEGATIONS = new Set(['不', '没', '没有', '从不', '从来不', '并不', '不太', '一点也不']);

export function isChineseNegation(word: string): boolean {
  return NEGATIONS.has(word);
}

/** The relation for a Chinese predicate (verb plus complement: 住在, 搬到), negation applied. */
export function chineseRelation(predicate: string, negated: boolean): string {
  const canonical = CHINESE_PREDICATES[predicate];
  if (negated) {
    if (canonical === 'likes') return 'dislikes';
    return `不${predicate}`;
  }
  return canonical ?? predicate;
}

/** 在X工作 → works_at; undefined when the verb says nothing about the place. */
export function chinesePlaceRelation(preposition: string, verb: string): CanonicalRelation | undefined {
  if (preposition === '在') return CHINESE_PLACE_VERBS[verb];
  if (preposition === '对') return CHINESE_TOWARDS_VERBS[verb];
  return undefined;
}

/** A的B是C: the relation named by B. */
export function chineseAttribute(noun: string): string {
  return CHINESE_ATTRIBUTES[noun] ?? noun;
}

const ENGLISH_VERBS: Readonly<Record<string, CanonicalRelation>> = {
  like: 'likes',
  love: 'likes',
  enjoy: 'likes',
  adore: 'likes',
  hate: 'dislikes',
  dislike: 'dislikes',
  detest: 'dislikes',
  'live in': 'lives_in',
  'move to': 'lives_in',
  'relocate to': 'lives_in',
  'work at': 'works_at',
  'work for': 'works_at',
  'work as': 'occupation',
  'teach at': 'works_at',
  'study at': 'studies_at',
};

const ENGLISH_ATTRIBUTES: Readonly<Record<string, CanonicalRelation>> = {
  name: 'name',
  job: 'occupation',
  occupation: 'occupation',
  profession: 'occupation',
  birthday: 'birthday',
  age: 'age',
};

/** The relation for an English verb (base form, with its preposition if any), negation applied. */
export function englishRelation(lemma: string, preposition: string | undefined, negated: boolean): string {
  const phrase = preposition === undefined ? lemma : `${lemma} ${preposition}`;
  const canonical = ENGLISH_VERBS[phrase];
  if (negated) {
    if (canonical === 'likes') return 'dislikes';
    return `not ${phrase}`;
  }
  return canonical ?? phrase;
}

/** "X's B is C": the relation named by B. */
export function englishAttribute(noun: string): string {
  const lower = noun.toLowerCase();
  return ENGLISH_ATTRIBUTES[lower] ?? lower;
}

const ENGLISH_OCCUPATIONS = new Set(
  (
    'teacher nurse doctor engineer chef cook driver lawyer accountant electrician plumber carpenter mechanic firefighter ' +
    'farmer pilot dentist pharmacist programmer developer designer architect scientist writer artist musician student ' +
    'manager officer cashier waiter waitress baker barber hairdresser cleaner janitor nanny babysitter veterinarian vet ' +
    'surgeon professor lecturer librarian journalist photographer salesperson secretary receptionist consultant analyst ' +
    'technician therapist psychologist soldier sailor banker clerk tailor painter gardener housekeeper caregiver ' +
    'paramedic midwife tutor coach translator interpreter editor researcher entrepreneur contractor welder butcher ' +
    'courier postman mailman guard sheriff detective judge priest pastor'
  ).split(' '),
);
const ENGLISH_OCCUPATION_SUFFIX = /(?:ist|ician|eer|grapher|ologist)$/;

/** Whether an English noun phrase names a job (its last word decides). */
export function isEnglishOccupation(phrase: string): boolean {
  const head = phrase.toLowerCase().split(/\s+/).pop() ?? '';
  return ENGLISH_OCCUPATIONS.has(head) || ENGLISH_OCCUPATION_SUFFIX.test(head);
}

const CHINESE_OCCUPATIONS = new Set(
  (
    '医生 护士 老师 教师 工程师 程序员 厨师 司机 律师 会计 警察 电工 农民 工人 学生 经理 设计师 建筑师 科学家 作家 画家 ' +
    '音乐家 演员 记者 摄影师 秘书 销售 保安 保姆 月嫂 快递员 服务员 收银员 理发师 木匠 水电工 公务员 军人 飞行员 教授 ' +
    '会计师 药剂师 兽医 牙医 律师 法官 司机 厨子 店主 老板 翻译 编辑 研究员 技术员 清洁工 育儿嫂 家政'
  ).split(' '),
);
const CHINESE_OCCUPATION_SUFFIX = /(?:师|员|工)$/u;

/** Whether a Chinese noun phrase names a job. */
export function isChineseOccupation(phrase: string): boolean {
  for (const job of CHINESE_OCCUPATIONS) if (phrase.endsWith(job)) return true;
  return CHINESE_OCCUPATION_SUFFIX.test(phrase);
}

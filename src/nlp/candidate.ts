/**
 * What the Extract stage hands to Verify: a triple plus what Verify needs to check it against the
 * sentence (the object as written, before normalisation such as 八十 → 80).
 */
import { HAN_DIGITS, HAN_UNITS } from './han-numerals.js';

export type ExtractionMethod = 'dependency' | 'template' | 'personal' | 'english';

export interface Candidate {
  subject: string;
  relation: string;
  object: string;
  /** The object exactly as it appears in the sentence. */
  objectSurface: string;
  confidence: number;
  method: ExtractionMethod;
  subjectType?: string;
  objectType?: string;
}

/** 一只, 两台, 一名: a count, not part of the thing's name. */
export const CHINESE_COUNT_WORD =
  /^[一二两三四五六七八九十几数多百千万\d]+[个只台名辆家位条件本张头匹所间套部把双对块棵盆架些瓶杯碗袋盒箱包斤份枝支片颗粒种]/u;

/** Who "我" / "I" / "my" refers to in one extraction call. */
export interface SpeakerContext {
  /** The speaker's name when known (options.speaker). */
  speaker: string | undefined;
}

/** The literal tokens that stand for the speaker when no name is given. */
export const SPEAKER_TOKENS = { zh: '我', en: 'I' } as const;

const OBJECT_TYPES: Readonly<Record<string, string>> = {
  lives_in: 'place',
  located_in: 'place',
  works_at: 'organization',
  studies_at: 'organization',
  occupation: 'occupation',
  age: 'number',
  name: 'name',
  birthday: 'date',
};

/** The object type implied by a canonical relation, if any. */
export function objectTypeFor(relation: string): string | undefined {
  return OBJECT_TYPES[relation];
}

/** 八十 → 80, 四十二 → 42, 十五 → 15, 一百零二 → 102; digits pass through; undefined otherwise. */
export function parseNumber(text: string): number | undefined {
  if (/^\d+$/.test(text)) return Number(text);
  if (!/^[零〇一二两三四五六七八九十百千]+$/u.test(text)) return undefined;
  let total = 0;
  let digit = 0;
  for (const ch of text) {
    const unit = HAN_UNITS[ch];
    if (unit !== undefined) {
      total += (digit === 0 ? 1 : digit) * unit;
      digit = 0;
    } else {
      digit = HAN_DIGITS[ch] ?? 0;
    }
  }
  return total + digit;
}

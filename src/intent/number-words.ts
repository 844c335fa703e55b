/**
 * Numbers, percentages and durations written as words, in Chinese and English, for intent slots:
 * "二十五", "twenty-five", "百分之五十", "a quarter", "一个半小时", "an hour and a half". Every
 * parser reads the WHOLE text (undefined when anything is left over), because the template matcher
 * tries candidate spans and must not accept "25 and a bit" as 25.
 */
import { HAN_DIGITS, HAN_UNITS } from '../nlp/han-numerals.js';

const CHINESE_DIGITS = HAN_DIGITS;
const CHINESE_UNITS = HAN_UNITS;
const CHINESE_NUMBER = /^[零〇一二两三四五六七八九十百千万亿\d]+(?:[点.][零〇一二三四五六七八九\d]+)?$/u;
const ARABIC_NUMBER = /^\d+(?:\.\d+)?$/;

const ENGLISH_SMALL: Readonly<Record<string, number>> = {
  zero: 0,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
  twenty: 20,
  thirty: 30,
  forty: 40,
  fifty: 50,
  sixty: 60,
  seventy: 70,
  eighty: 80,
  ninety: 90,
};
const ENGLISH_SCALES: Readonly<Record<string, number>> = { hundred: 100, thousand: 1000, million: 1_000_000 };

/** A digit string, a Chinese numeral or English number words; undefined for anything else. */
export function parseNumberWords(text: string): number | undefined {
  const s = text.trim().toLowerCase();
  if (s === '') return undefined;
  if (ARABIC_NUMBER.test(s)) return Number(s);
  if (CHINESE_NUMBER.test(s)) return parseChinese(s);
  return parseEnglish(s);
}

function parseChinese(s: string): number | undefined {
  const [whole = '', fraction] = s.split(/[点.]/u);
  const integer = whole === '' ? 0 : parseChineseInteger(whole);
  if (integer === undefined) return undefined;
  if (fraction === undefined) return integer;
  let digits = '';
  for (const ch of fraction) digits += /\d/.test(ch) ? ch : String(CHINESE_DIGITS[ch]);
  return Number(`${integer}.${digits}`);
}

function parseChineseInteger(s: string): number | undefined {
  if (ARABIC_NUMBER.test(s)) return Number(s);
  let total = 0;
  let section = 0;
  let digit: number | undefined;
  let pendingArabic = '';
  const flushArabic = (): void => {
    if (pendingArabic !== '') digit = Number(pendingArabic);
    pendingArabic = '';
  };
  for (const ch of s) {
    if (/\d/.test(ch)) {
      pendingArabic += ch;
      continue;
    }
    flushArabic();
    const d = CHINESE_DIGITS[ch];
    if (d !== undefined) {
      digit = d;
      continue;
    }
    const unit = CHINESE_UNITS[ch];
    if (unit !== undefined) {
      // 十二 = 12: a bare 十 means one ten.
      section += (digit ?? 1) * unit;
      digit = undefined;
      continue;
    }
    if (ch === '万' || ch === '亿') {
      const scale = ch === '万' ? 10_000 : 100_000_000;
      total = (total + section + (digit ?? 0)) * scale;
      section = 0;
      digit = undefined;
      continue;
    }
    return undefined;
  }
  flushArabic();
  return total + section + (digit ?? 0);
}

function parseEnglish(s: string): number | undefined {
  const words = s.split(/[\s-]+/).filter((w) => w !== '' && w !== 'and');
  if (words.length === 0) return undefined;
  const point = words.indexOf('point');
  if (point >= 0) {
    const whole = point === 0 ? 0 : parseEnglishInteger(words.slice(0, point));
    const fractionWords = words.slice(point + 1);
    if (whole === undefined || fractionWords.length === 0) return undefined;
    let digits = '';
    for (const w of fractionWords) {
      const d = /^\d$/.test(w) ? Number(w) : ENGLISH_SMALL[w];
      if (d === undefined || d > 9) return undefined;
      digits += String(d);
    }
    return Number(`${whole}.${digits}`);
  }
  return parseEnglishInteger(words);
}

function parseEnglishInteger(words: string[]): number | undefined {
  let total = 0;
  let current = 0;
  let seenNumber = false;
  for (const [i, w] of words.entries()) {
    const small = ENGLISH_SMALL[w] ?? (/^\d+$/.test(w) ? Number(w) : undefined);
    if (small !== undefined) {
      current += small;
      seenNumber = true;
      continue;
    }
    // "a hundred", "a thousand": the article stands for one, but only in front of a scale word.
    if ((w === 'a' || w === 'an') && i + 1 < words.length && ENGLISH_SCALES[words[i + 1] ?? ''] !== undefined) {
      current += 1;
      continue;
    }
    const scale = ENGLISH_SCALES[w];
    if (scale === undefined) return undefined;
    if (scale === 100) current = (current || 1) * 100;
    else {
      total += (current || 1) * scale;
      current = 0;
    }
    seenNumber = true;
  }
  return seenNumber ? total + current : undefined;
}

/** A number that may have been said as a percentage or a fraction of the whole. */
export interface PercentReading {
  value: number;
  /** True when the text itself said "percent" or a fraction (50 %, 百分之五十, half, 四分之一). */
  percent: boolean;
}

const FRACTION_WORDS: Readonly<Record<string, number>> = {
  half: 50,
  'a half': 50,
  'one half': 50,
  一半: 50,
  'a quarter': 25,
  quarter: 25,
  'one quarter': 25,
  'three quarters': 75,
  'a third': 100 / 3,
  'one third': 100 / 3,
  'two thirds': 200 / 3,
};

/** "50%", "50 percent", "百分之五十", "一半", "half", "四分之三" → a percentage; a plain number → percent false. */
export function parsePercent(text: string): PercentReading | undefined {
  const s = text.trim().toLowerCase();
  if (s === '') return undefined;
  const fraction = FRACTION_WORDS[s];
  if (fraction !== undefined) return { value: fraction, percent: true };
  const chinesePercent = /^百分之(.+)$/u.exec(s);
  if (chinesePercent) return asPercent(parseNumberWords(chinesePercent[1] ?? ''));
  const chineseFraction = /^(.+)分之(.+)$/u.exec(s);
  if (chineseFraction) {
    const denominator = parseNumberWords(chineseFraction[1] ?? '');
    const numerator = parseNumberWords(chineseFraction[2] ?? '');
    if (denominator === undefined || numerator === undefined || denominator === 0) return undefined;
    return { value: (numerator / denominator) * 100, percent: true };
  }
  const suffixed = /^(.+?)\s*(?:%|percent|per cent|pct)$/u.exec(s);
  if (suffixed) return asPercent(parseNumberWords(suffixed[1] ?? ''));
  const plain = parseNumberWords(s);
  return plain === undefined ? undefined : { value: plain, percent: false };
}

function asPercent(value: number | undefined): PercentReading | undefined {
  return value === undefined ? undefined : { value, percent: true };
}

const CHINESE_DURATION_UNITS: Readonly<Record<string, number>> = {
  天: 86_400,
  小时: 3600,
  钟头: 3600,
  刻钟: 900,
  刻: 900,
  分钟: 60,
  分: 60,
  秒钟: 1,
  秒: 1,
};
// number? 个? 半? 个? unit 半?  — covers 十分钟, 一个半小时, 半小时, 半个小时, 两小时半, 1小时30分.
const CHINESE_DURATION_PART =
  /([零〇一二两三四五六七八九十百千万\d]+(?:[点.][零〇一二三四五六七八九\d]+)?)?(个)?(半)?(个)?(天|小时|钟头|刻钟|刻|分钟|分|秒钟|秒)(半)?/uy;

const ENGLISH_DURATION_UNITS: Readonly<Record<string, number>> = {
  day: 86_400,
  days: 86_400,
  hour: 3600,
  hours: 3600,
  hr: 3600,
  hrs: 3600,
  h: 3600,
  minute: 60,
  minutes: 60,
  min: 60,
  mins: 60,
  m: 60,
  second: 1,
  seconds: 1,
  sec: 1,
  secs: 1,
  s: 1,
};

/** A duration in seconds: "十分钟", "一个半小时", "1小时30分", "an hour and a half", "90 seconds". */
export function parseDuration(text: string): number | undefined {
  const s = text.trim().toLowerCase();
  if (s === '') return undefined;
  return /[\u4e00-\u9fff]/u.test(s) ? parseChineseDuration(s.replace(/\s+/g, '')) : parseEnglishDuration(s);
}

function parseChineseDuration(s: string): number | undefined {
  let seconds = 0;
  let pos = 0;
  let parts = 0;
  while (pos < s.length) {
    // 1小时零5分, 一小时又十分钟: joining words between parts.
    if (parts > 0 && (s[pos] === '零' || s[pos] === '又')) {
      const rest = s.slice(pos + 1);
      if (rest !== '' && !/^[分秒小个半]/u.test(rest)) pos += 1;
    }
    CHINESE_DURATION_PART.lastIndex = pos;
    const m = CHINESE_DURATION_PART.exec(s);
    if (!m || m[0] === '') return undefined;
    const [, numberText, , half, , unitText = '', trailingHalf] = m;
    if (numberText === undefined && half === undefined) return undefined;
    const count = numberText === undefined ? 0 : parseNumberWords(numberText);
    if (count === undefined) return undefined;
    const unit = CHINESE_DURATION_UNITS[unitText] ?? 0;
    seconds += (count + (half ? 0.5 : 0) + (trailingHalf ? 0.5 : 0)) * unit;
    pos += m[0].length;
    parts += 1;
  }
  return parts > 0 ? seconds : undefined;
}

function parseEnglishDuration(s: string): number | undefined {
  // "10min" → "10 min": digits glued to a unit are common in typed text.
  const words = s
    // Typed fractions read like the words: "1/2 an hour", "1 and a 1/2 hours".
    .replace(/(?<![\d/])1\/2(?![\d/])/g, 'half')
    .replace(/(?<![\d/])1\/4(?![\d/])/g, 'quarter')
    .replace(/(\d)([a-z])/g, '$1 $2')
    .split(/[\s-]+/)
    .filter((w) => w !== '');
  let seconds = 0;
  let parts = 0;
  let buffer: string[] = [];
  let lastUnit = 0;
  for (let i = 0; i < words.length; i++) {
    const w = words[i] ?? '';
    const unit = ENGLISH_DURATION_UNITS[w];
    if (unit !== undefined && buffer.length > 0) {
      const count = englishCount(buffer);
      if (count === undefined) return undefined;
      seconds += count * unit;
      lastUnit = unit;
      parts += 1;
      buffer = [];
      continue;
    }
    // "an hour and a half": the half belongs to the unit just read.
    if (parts > 0 && buffer.length === 0 && w === 'and' && words[i + 1] === 'a' && words[i + 2] === 'half') {
      const next = words[i + 3];
      if (next === undefined || ENGLISH_DURATION_UNITS[next] === undefined) {
        seconds += lastUnit / 2;
        i += 2;
        continue;
      }
    }
    if (parts > 0 && buffer.length === 0 && w === 'and') continue;
    buffer.push(w);
  }
  return parts > 0 && buffer.length === 0 ? seconds : undefined;
}

/** "ten", "an", "half an", "one and a half", "a quarter of an" → how many units. */
function englishCount(words: string[]): number | undefined {
  if (words.length === 1 && (words[0] === 'a' || words[0] === 'an')) return 1;
  const fraction = words.includes('half') ? 0.5 : words.includes('quarter') ? 0.25 : 0;
  if (fraction > 0) {
    const rest = words.filter((w) => !['half', 'quarter', 'a', 'an', 'and', 'of'].includes(w));
    if (rest.length === 0) return fraction;
    const whole = parseNumberWords(rest.join(' '));
    return whole === undefined ? undefined : whole + fraction;
  }
  return parseNumberWords(words.join(' '));
}

/**
 * Finds the parts of a sentence for the compositional recogniser (issue 26): the home's names
 * (entities with their aliases, areas, floors), the language's words (lexicon.ts), colours and
 * values (numbers, percentages, temperatures, durations). English is read word by word with plural
 * and verb endings stemmed; Chinese character by character, without word boundaries. The longest
 * piece wins at each place; what is left unexplained is matched again fuzzily against the names and
 * the action words (a dropped, doubled, swapped or misheard character; words split or joined), and
 * a fuzzy name is only taken when no other name is as close, so a guess never picks between two.
 */

import { editDistance } from '../edit-distance.js';
import type { IntentLanguage } from '../intent-sentences.js';
import { REPLACED_WORD_SIMILARITY, replacesAWord } from '../near-name.js';
import { parseDuration, parseNumberWords, parsePercent } from '../number-words.js';
import { COLOURS, type IntentHome } from '../recognizer.js';
import { normalizeText } from '../text-normalize.js';
import { EN_LIGHT_WORDS, LEXICONS, type Meaning, ZH_LIGHT_CHARS } from './lexicon.js';

export type Value =
  | { kind: 'number'; value: number }
  | { kind: 'percent'; value: number }
  | { kind: 'temperature'; value: number }
  | { kind: 'duration'; seconds: number };

export type Piece =
  | { t: 'word'; meanings: readonly Meaning[]; plural: boolean }
  | { t: 'entity'; names: readonly string[]; similarity: number }
  | { t: 'area'; name: string; similarity: number }
  | { t: 'floor'; name: string; similarity: number }
  | { t: 'color'; color: string }
  | { t: 'value'; value: Value }
  /** Words no part of the home or the language explains; `light` ones carry no content. */
  | { t: 'unknown'; light: boolean };

export interface Mention {
  piece: Piece;
  /** Token positions [start, end) and the text they cover (normalised). */
  start: number;
  end: number;
  text: string;
  /** Set when the words were repaired into this piece by similarity (a slip, or a guess). */
  repaired?: number;
}

type Entry =
  | { kind: 'word'; meaning: Meaning }
  | { kind: 'entity'; name: string }
  | { kind: 'area'; name: string }
  | { kind: 'floor'; name: string }
  | { kind: 'color'; color: string };

interface TrieNode {
  next: Map<string, TrieNode>;
  entries: Entry[];
}

const newNode = (): TrieNode => ({ next: new Map(), entries: [] });

/** Plural and verb endings off English words, on both sides, so "lights" is "light" and "curtains" "curtain". */
export function stem(word: string): string {
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss') && !word.endsWith('us')) return word.slice(0, -1);
  return word;
}

/** The tokens of normalised text: stemmed words for English, characters for Chinese (digits and Latin runs kept whole). */
export function tokenize(normal: string, language: IntentLanguage, collapse = true): string[] {
  if (language === 'en') return normal.split(' ').filter((w) => w !== '');
  const tokens: string[] = [];
  for (const m of normal.matchAll(/[a-z0-9.%]+|\S/gu)) tokens.push(m[0]);
  if (!collapse) return tokens;
  // A doubled Han character ("打打开", "客厅厅") is almost always a stutter or a transcription slip;
  // the few words that repeat a character ("开开", "看看") mean the same said once.
  return tokens.filter(
    (tok, i) => !(i > 0 && tok === tokens[i - 1] && /\p{Script=Han}/u.test(tok) && !/[一二三四五六七八九十百]/u.test(tok)),
  );
}

/** A phrase's tokens as written: a doubled character stays doubled ("等等", "想想"), as the sentence is read first. */
const phraseTokens = (phrase: string, language: IntentLanguage): string[] =>
  tokenize(normalizeText(phrase), language, false).map((t) => (language === 'en' ? stem(t) : t));

/** One fuzzy candidate: a name phrase without spaces, for comparing with said text whose spaces may differ. */
interface FuzzyName {
  joined: string;
  /** The phrase normalised with its spaces, for telling a misspelt word from a replaced one. */
  phrase: string;
  entry: Entry;
}

/** The home's names and the language's words in one trie per language, built once per home. */
export class MentionFinder {
  readonly language: IntentLanguage;
  private readonly root = newNode();
  private readonly fuzzyNames: FuzzyName[] = [];
  private readonly fuzzyWords: FuzzyName[] = [];

  constructor(home: IntentHome, language: IntentLanguage) {
    this.language = language;
    for (const [phrase, meaning] of LEXICONS[language].phrases) this.add(phrase, { kind: 'word', meaning });
    for (const { value, phrases } of COLOURS) for (const p of phrases) if (this.isLanguage(p)) this.add(p, { kind: 'color', color: value });
    const names = (items: ReadonlyArray<{ name: string; aliases?: readonly string[] }>) =>
      items.flatMap((item) => [item.name, ...(item.aliases ?? [])].filter((p) => p.trim() !== '').map((p) => [p, item.name] as const));
    // A weather entity is never a target (it is asked about, not acted on), and its name is often a
    // word of the language ("Home"): it is left to the language.
    const targets = home.entities.filter((e) => e.domain !== 'weather');
    for (const [p, name] of names(targets)) this.addName(p, { kind: 'entity', name });
    // "床头的灯" for 床头灯, "车库的门" for 车库门: a Chinese name ending in a kind of device is also
    // said with 的 before the kind. Only exact, like the name itself (no fuzzy variant).
    if (language === 'zh') {
      // A place before 的 ("厨房的灯") is the place's devices of that kind, which the composer reads.
      const places = new Set([...names(home.areas), ...names(home.floors)].map(([p]) => p));
      const kinds = LEXICONS.zh.phrases.filter(([, m]) => m.t === 'device').map(([w]) => w);
      for (const [p, name] of names(targets)) {
        const kind = kinds.filter((k) => p.endsWith(k) && p.length - k.length >= 2).sort((x, y) => y.length - x.length)[0];
        const prefix = kind === undefined ? '' : p.slice(0, -kind.length);
        if (kind !== undefined && !p.includes('的') && !places.has(prefix)) this.add(`${prefix}的${kind}`, { kind: 'entity', name });
      }
    }
    for (const [p, name] of names(home.areas)) this.addName(p, { kind: 'area', name });
    for (const [p, name] of names(home.floors)) this.addName(p, { kind: 'floor', name });
    // Action and device words may be misspelt too ("trun", "swich", "curtian"), if long enough to tell apart.
    const seen = new Set<string>();
    for (const [phrase, meaning] of LEXICONS[language].phrases) {
      const joined = normalizeText(phrase).replace(/ /gu, '');
      const useful = meaning.t === 'action' || meaning.t === 'verb' || meaning.t === 'device' || meaning.t === 'keyword';
      // A keyword of four letters is one letter from everyday words ("main" is not "rain", "know" not "snow").
      const long = joined.length >= (meaning.t === 'keyword' ? 5 : 4);
      if (useful && language === 'en' && long && !seen.has(`${joined}|${meaning.t}`)) {
        seen.add(`${joined}|${meaning.t}`);
        this.fuzzyWords.push({ joined, phrase: joined, entry: { kind: 'word', meaning } });
      }
    }
  }

  private isLanguage(phrase: string): boolean {
    return this.language === 'zh' ? /\p{Script=Han}/u.test(phrase) : !/\p{Script=Han}/u.test(phrase);
  }

  private add(phrase: string, entry: Entry): void {
    const tokens = phraseTokens(phrase, this.language);
    if (tokens.length === 0) return;
    let node = this.root;
    for (const tok of tokens) {
      let next = node.next.get(tok);
      if (!next) {
        next = newNode();
        node.next.set(tok, next);
      }
      node = next;
    }
    node.entries.push(entry);
  }

  private addName(phrase: string, entry: Entry): void {
    this.add(phrase, entry);
    // A name written in the other script (an English name in a Chinese home) is still matched as said.
    const joined = normalizeText(phrase).replace(/ /gu, '');
    if (joined.length > 0) this.fuzzyNames.push({ joined, phrase: normalizeText(phrase), entry });
  }

  /** The mentions of a sentence, left to right, covering every token. */
  find(text: string): Mention[] {
    const tokens = tokenize(normalizeText(text), this.language, false);
    const stems = this.language === 'en' ? tokens.map((t) => this.verbStem(stem(t))) : tokens;
    const out: Mention[] = [];
    let i = 0;
    while (i < tokens.length) {
      // A doubled Han character is a stutter ("打打开", "客厅厅") and is read once — unless one word
      // ends with it and the next begins with it ("空调调到": 空调 then 调到).
      if (this.language === 'zh' && i > 0 && isStutter(tokens, i)) {
        const before = out[out.length - 1];
        const wordEndsHere = before !== undefined && before.end === i && before.end - before.start > 1 && before.piece.t !== 'unknown';
        const next = this.longest(stems, i);
        if (!(wordEndsHere && next !== undefined && next.end - i > 1)) {
          // Read once from the second: a first copy read alone ("打|打开", "关|关掉") is dropped, otherwise the second.
          if (before !== undefined && before.end - before.start === 1 && before.end === i) out.pop();
          else {
            i += 1;
            continue;
          }
        }
      }
      const value = this.readValue(tokens, i);
      let lexical = this.longest(stems, i);
      // "kitchen lights" is the kitchen's lights, not the one device called "Kitchen Light": a name
      // reached only by stemming a plural device word gives way to the shorter reading.
      if (lexical && this.language === 'en' && lexical.entries.every((e) => e.kind === 'entity')) {
        const last = tokens[lexical.end - 1] as string;
        const lastStem = stems[lexical.end - 1] as string;
        const pluralDevice =
          last !== lastStem && this.root.next.get(lastStem)?.entries.some((e) => e.kind === 'word' && e.meaning.t === 'device');
        if (pluralDevice && lexical.end - i > 1) lexical = this.longest(stems, i, lexical.end - 1) ?? lexical;
      }
      if (value && (!lexical || value.end >= lexical.end)) {
        out.push({ piece: { t: 'value', value: value.value }, start: i, end: value.end, text: tokens.slice(i, value.end).join(' ') });
        i = value.end;
        continue;
      }
      if (lexical) {
        const piece = toPiece(lexical.entries, tokens.slice(i, lexical.end), 1);
        out.push({ piece, start: i, end: lexical.end, text: this.join(tokens.slice(i, lexical.end)) });
        i = lexical.end;
        continue;
      }
      const tok = tokens[i] as string;
      const light = this.language === 'en' ? EN_LIGHT_WORDS.has(tok) : ZH_LIGHT_CHARS.has(tok);
      out.push({ piece: { t: 'unknown', light }, start: i, end: i + 1, text: tok });
      i += 1;
    }
    return this.fuzzy(out, tokens);
  }

  /**
   * "turning", "switching", "shutting": the -ing form of an action word is that word. Only forms of
   * words the lexicon has are cut, so "ceiling" or "string" stay as said.
   */
  private verbStem(word: string): string {
    if (word.length < 6 || !word.endsWith('ing') || this.root.next.has(word)) return word;
    const base = word.slice(0, -3);
    const undoubled = /([b-df-hj-np-tv-z])\1$/u.test(base) ? base.slice(0, -1) : base;
    for (const candidate of [base, undoubled, `${base}e`]) {
      const entries = this.root.next.get(candidate)?.entries ?? [];
      if (entries.some((e) => e.kind === 'word' && (e.meaning.t === 'action' || e.meaning.t === 'verb'))) return candidate;
    }
    return word;
  }

  private join(tokens: readonly string[]): string {
    return tokens.join(this.language === 'en' ? ' ' : '');
  }

  private longest(stems: readonly string[], start: number, maxEnd = stems.length): { end: number; entries: Entry[] } | undefined {
    let node: TrieNode | undefined = this.root;
    let best: { end: number; entries: Entry[] } | undefined;
    for (let j = start; j < Math.min(stems.length, maxEnd) && node; j++) {
      node = node.next.get(stems[j] as string);
      if (node && node.entries.length > 0) best = { end: j + 1, entries: node.entries };
    }
    return best;
  }

  /** A number, percentage, temperature or duration starting at token `start`, the longest reading. */
  private readValue(tokens: readonly string[], start: number): { end: number; value: Value } | undefined {
    if (this.language === 'zh') return readChineseValue(tokens, start);
    let best: { end: number; value: Value } | undefined;
    for (let end = start + 1; end <= Math.min(tokens.length, start + 6); end++) {
      const span = tokens.slice(start, end).join(' ');
      const last = tokens[end - 1] as string;
      const value = readEnglishValue(span, last);
      if (value) best = { end, value };
    }
    return best;
  }

  /**
   * Runs of unknown words, with the name and device words beside them, compared with every name
   * and (English) action word: the closest within the allowed edits replaces them if no other
   * name is as close.
   */
  private fuzzy(mentions: Mention[], tokens: readonly string[]): Mention[] {
    if (!mentions.some((m) => m.piece.t === 'unknown' && !m.piece.light)) return mentions;
    const result = [...mentions];
    for (let idx = 0; idx < result.length; idx++) {
      const m = result[idx] as Mention;
      if (m.piece.t !== 'unknown' || m.piece.light) continue;
      let best: { from: number; to: number; entry: Entry; similarity: number; tied: boolean } | undefined;
      // Windows of up to four mentions around the unknown one, each made only of unknown words or name-like parts.
      for (let from = Math.max(0, idx - 3); from <= idx; from++) {
        for (let to = idx + 1; to <= Math.min(result.length, from + 4); to++) {
          const window = result.slice(from, to);
          if (!window.every(nameLike)) continue;
          const saidTokens = tokens.slice((window[0] as Mention).start, (window[window.length - 1] as Mention).end);
          const said = saidTokens.join('');
          const spaced = saidTokens.join(' ');
          for (const candidate of [...this.fuzzyNames, ...(to - from === 1 ? this.fuzzyWords : [])]) {
            const allowed = allowedEdits(candidate.joined, this.language);
            if (allowed === 0 || Math.abs(candidate.joined.length - said.length) > allowed) continue;
            // A word too short to tell a slip from another word ("war" is not "warm") is never repaired.
            if (this.language === 'en' && said.length < 4) continue;
            const distance = editDistance(said, candidate.joined, allowed);
            if (distance > allowed) continue;
            let similarity = 1 - distance / Math.max(said.length, candidate.joined.length);
            // "dining room blinds" for Living Room Blinds: a word replaced, not misspelt, is only a guess.
            if (candidate.entry.kind !== 'word' && replacesAWord(spaced, candidate.phrase))
              similarity = Math.min(similarity, REPLACED_WORD_SIMILARITY);
            const span = to - from;
            const better =
              !best || similarity > best.similarity + 1e-9 || (Math.abs(similarity - best.similarity) < 1e-9 && span > best.to - best.from);
            if (better) best = { from, to, entry: candidate.entry, similarity, tied: false };
            else if (
              best &&
              Math.abs(similarity - best.similarity) < 1e-9 &&
              span === best.to - best.from &&
              !sameEntry(best.entry, candidate.entry)
            ) {
              best.tied = true;
            }
          }
        }
      }
      if (!best || best.tied) continue;
      const first = result[best.from] as Mention;
      const last = result[best.to - 1] as Mention;
      const piece = toPiece([best.entry], tokens.slice(first.start, last.end), best.similarity);
      result.splice(best.from, best.to - best.from, {
        piece,
        start: first.start,
        end: last.end,
        text: this.join(tokens.slice(first.start, last.end)),
        repaired: best.similarity,
      });
      idx = best.from;
    }
    return result;
  }
}

/** The same Han character (not a numeral) as the one before it. */
function isStutter(tokens: readonly string[], i: number): boolean {
  const tok = tokens[i] as string;
  return tok === tokens[i - 1] && /\p{Script=Han}/u.test(tok) && !/[一二三四五六七八九十百]/u.test(tok);
}

function sameEntry(a: Entry, b: Entry): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === 'word' || b.kind === 'word') return JSON.stringify(a) === JSON.stringify(b);
  if (a.kind === 'color' || b.kind === 'color') return JSON.stringify(a) === JSON.stringify(b);
  return a.name === (b as { name: string }).name;
}

/** Parts a misheard name may be made of: unknown words, and names or device words it resembles. */
function nameLike(m: Mention): boolean {
  const p = m.piece;
  if (p.t === 'unknown') return !p.light || m.text.length > 1;
  if (p.t === 'entity' || p.t === 'area' || p.t === 'floor') return true;
  return p.t === 'word' && p.meanings.some((x) => x.t === 'device');
}

/**
 * Edits a fuzzy match may have: about one in five letters in English (none under four letters:
 * "it" is one edit from "kit"); one for Chinese names of three characters or more, two from six
 * (a two-character name with one character wrong is half wrong).
 */
function allowedEdits(phrase: string, language: IntentLanguage): number {
  if (language === 'zh') return phrase.length >= 6 ? 2 : phrase.length >= 3 ? 1 : 0;
  if (phrase.length < 4) return 0;
  return Math.max(1, Math.floor(phrase.length / 5));
}

function toPiece(entries: readonly Entry[], tokens: readonly string[], similarity: number): Piece {
  const entities = entries.filter((e): e is Extract<Entry, { kind: 'entity' }> => e.kind === 'entity');
  if (entities.length > 0) return { t: 'entity', names: [...new Set(entities.map((e) => e.name))], similarity };
  const area = entries.find((e): e is Extract<Entry, { kind: 'area' }> => e.kind === 'area');
  if (area) return { t: 'area', name: area.name, similarity };
  const floor = entries.find((e): e is Extract<Entry, { kind: 'floor' }> => e.kind === 'floor');
  if (floor) return { t: 'floor', name: floor.name, similarity };
  const color = entries.find((e): e is Extract<Entry, { kind: 'color' }> => e.kind === 'color');
  const meanings = entries.filter((e): e is Extract<Entry, { kind: 'word' }> => e.kind === 'word').map((e) => e.meaning);
  if (color && meanings.length === 0) return { t: 'color', color: color.color };
  const lastWord = tokens[tokens.length - 1] ?? '';
  return { t: 'word', meanings, plural: /[a-z]s$/u.test(lastWord) && stem(lastWord) !== lastWord };
}

const EN_DURATION_UNIT = /^(hours?|hrs?|minutes?|mins?|seconds?|secs?)$/u;
const EN_TEMPERATURE_UNIT = /^(degrees?|celsius|fahrenheit)$/u;

function readEnglishValue(span: string, last: string): Value | undefined {
  // "an hour and a half": the duration ends on the half, not on its unit.
  if (EN_DURATION_UNIT.test(last) || (last === 'half' && /\b(hours?|hrs?|minutes?|mins?) and a half$/u.test(span))) {
    // "5 more minutes", "ten extra minutes": the length is the same said with "more".
    const seconds = parseDuration(span.replace(/ (more|extra)(?= )/gu, ''));
    return seconds === undefined || seconds <= 0 ? undefined : { kind: 'duration', seconds };
  }
  if (EN_TEMPERATURE_UNIT.test(last)) {
    const number = parseNumberWords(span.replace(/\s*(degrees?|celsius|fahrenheit)$/u, '').replace(/\s*degrees?$/u, ''));
    return number === undefined ? undefined : { kind: 'temperature', value: number };
  }
  // A share said as a fraction: "half", "halfway", "a quarter", "three quarters", "a third".
  if (last === 'percent' || last.endsWith('%') || /^(half|halfway|half way|(an?|one|two|three) (quarters?|thirds?|half))$/u.test(span)) {
    const reading = parsePercent(/^half ?way$/u.test(span) ? 'half' : span);
    return reading?.percent ? { kind: 'percent', value: reading.value } : undefined;
  }
  // "full brightness", "volume to max": the whole of it.
  if (/^(full|max|maximum)$/u.test(span)) return { kind: 'percent', value: 100 };
  if (/^(an?|one|the)$/u.test(span)) return undefined;
  const number = parseNumberWords(span);
  return number === undefined ? undefined : { kind: 'number', value: number };
}

const ZH_NUMBER = '[0-9零〇一二两三四五六七八九十百千点半.]+';
const ZH_VALUE = new RegExp(
  `^(?:(百分之${ZH_NUMBER})|(${ZH_NUMBER}(?:个)?(?:半)?(?:小时|钟头|分钟|分|秒钟|秒)(?:半钟?)?(?:${ZH_NUMBER}(?:分钟|分|秒钟|秒))?)|(${ZH_NUMBER})(摄氏度|度)|(${ZH_NUMBER}%?)|(一半)|(最亮|最大))`,
  'u',
);

function readChineseValue(tokens: readonly string[], start: number): { end: number; value: Value } | undefined {
  // Tokens are characters (digits kept in runs): read from the text they make and count back.
  // "俩分钟", "仨小时": the spoken two and three, one character each like the numerals they stand for.
  const rest = tokens
    .slice(start, start + 16)
    .join('')
    .replace(/俩/gu, '两')
    .replace(/仨/gu, '三');
  const m = ZH_VALUE.exec(rest);
  if (!m) return undefined;
  const [whole] = m;
  let value: Value | undefined;
  if (m[1] !== undefined) {
    const p = parsePercent(m[1]);
    if (p) value = { kind: 'percent', value: p.value };
  } else if (m[2] !== undefined) {
    // "两分半钟": the half after the unit, with 钟 said or not.
    const seconds = parseDuration(m[2].replace(/半钟$/u, '半'));
    if (seconds !== undefined && seconds > 0) value = { kind: 'duration', seconds };
  } else if (m[3] !== undefined) {
    const n = parseNumberWords(m[3]);
    if (n !== undefined) value = { kind: 'temperature', value: n };
  } else if (m[5] !== undefined) {
    const text = m[5];
    // "一半" reads as a numeral too: it is half of the whole.
    if (text === '一半') value = { kind: 'percent', value: 50 };
    else if (text.endsWith('%')) {
      const p = parsePercent(text);
      if (p) value = { kind: 'percent', value: p.value };
    } else if (!/^[点半.]|^一$|^两$|^一点$/u.test(text)) {
      const n = parseNumberWords(text);
      if (n !== undefined) value = { kind: 'number', value: n };
    }
  } else if (m[6] !== undefined) value = { kind: 'percent', value: 50 };
  // "开到最亮", "音量调到最大": the whole of it.
  else if (m[7] !== undefined) value = { kind: 'percent', value: 100 };
  if (!value) return undefined;
  let length = 0;
  let end = start;
  while (end < tokens.length && length < whole.length) length += (tokens[end++] as string).length;
  return length === whole.length ? { end, value } : undefined;
}

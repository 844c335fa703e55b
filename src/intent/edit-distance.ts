/**
 * String distances for near-name matching (near-name.ts): the edit distance that counts a swap of
 * neighbours as one edit (the commonest typing slip), a bit-parallel form of it for comparing one
 * text with many, and the character-count bound that rules most candidates out before either.
 * Each takes an optional bound and may give up early past it: most names in a home are far from
 * what was said, and only the close ones need their exact distance.
 */
import { HomeAgentError } from '../shared/errors.js';

// Three reused rows: the swap of neighbours looks two rows back.
let rows = [new Int32Array(64), new Int32Array(64), new Int32Array(64)];

/**
 * Edit distance counting an insertion, deletion, substitution or swap of neighbours as one edit.
 * With `atMost`, a distance above it comes back as some number above it, found early: names far
 * apart are most of a home, and only the close ones need their exact distance.
 */
export function editDistance(a: string, b: string, atMost = Number.POSITIVE_INFINITY): number {
  if (a === b) return 0;
  if (Math.abs(a.length - b.length) > atMost) return atMost + 1;
  if (a.length === 0 || b.length === 0) return Math.max(a.length, b.length);
  const width = b.length + 1;
  if ((rows[0] as Int32Array).length < width) rows = rows.map(() => new Int32Array(width * 2));
  let [before, previous, current] = rows as [Int32Array, Int32Array, Int32Array];
  for (let j = 0; j < width; j++) previous[j] = j;
  let previousBest = 0;
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    let rowBest = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, (previous[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, (before[j - 2] as number) + 1);
      current[j] = best;
      if (best < rowBest) rowBest = best;
    }
    // A row never lowers the next one's minimum by more than a swap can, and a swap reads two rows
    // back: stop when both of the last two rows are already over the bound.
    if (rowBest > atMost && previousBest > atMost) return atMost + 1;
    previousBest = rowBest;
    [before, previous, current] = [previous, current, before];
  }
  return previous[b.length] as number;
}

/**
 * The same distance, many texts against one pattern (the words said against every name): bit-parallel
 * (Myers, with Hyyrö's extension for swaps of neighbours), one pass of a few word operations per
 * character of the text, for patterns of up to 31 characters; longer ones fall back to editDistance.
 */
export class EditDistancePattern {
  private readonly pattern: string;
  private readonly masks = new Map<number, number>();

  constructor(pattern: string) {
    this.pattern = pattern;
    if (pattern.length > 31) return;
    for (let i = 0; i < pattern.length; i++) {
      const code = pattern.charCodeAt(i);
      this.masks.set(code, (this.masks.get(code) ?? 0) | (1 << i));
    }
  }

  distanceTo(text: string, atMost = Number.POSITIVE_INFINITY): number {
    const m = this.pattern.length;
    if (m > 31) return editDistance(this.pattern, text, atMost);
    if (m === 0) return text.length;
    const all = m === 31 ? 0x7fffffff : (1 << m) - 1;
    const last = 1 << (m - 1);
    let vp = all;
    let vn = 0;
    let d0 = 0;
    let previousMask = 0;
    let score = m;
    for (let j = 0; j < text.length; j++) {
      const mask = this.masks.get(text.charCodeAt(j)) ?? 0;
      const swap = ((~d0 & mask) << 1) & previousMask & all;
      d0 = ((((mask & vp) + vp) ^ vp) | mask | vn | swap) & all;
      let hp = (vn | ~(d0 | vp)) & all;
      let hn = d0 & vp;
      if (hp & last) score += 1;
      else if (hn & last) score -= 1;
      hp = ((hp << 1) | 1) & all;
      hn = (hn << 1) & all;
      vp = (hn | ~(d0 | hp)) & all;
      vn = hp & d0;
      previousMask = mask;
      // The score can fall by at most one per remaining character of the text.
      if (score - (text.length - j - 1) > atMost) return atMost + 1;
    }
    return score;
  }
}

// Character counts for bagDistance, reset after each use; indexed by UTF-16 code unit.
const bag = new Int32Array(65536);

/**
 * A lower bound of the edit distance read from character counts alone: each edit adds or removes
 * at most one character on each side. Cheap, and enough to skip most names for a given text.
 */
export function bagDistance(a: string, b: string): number {
  for (let i = 0; i < a.length; i++) bag[a.charCodeAt(i)] = (bag[a.charCodeAt(i)] as number) + 1;
  for (let i = 0; i < b.length; i++) bag[b.charCodeAt(i)] = (bag[b.charCodeAt(i)] as number) - 1;
  let extra = 0;
  let missing = 0;
  for (const text of [a, b]) {
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      const count = bag[code] as number;
      if (count > 0) extra += count;
      else missing -= count;
      bag[code] = 0;
    }
  }
  return Math.max(extra, missing);
}

// CharacterBag's tables, indexed by UTF-16 code unit and valid where their stamp is current: the
// said text's counts (stamped by the bag) and the working counts of one comparison. A Map lookup
// per character was most of the cost of resolving a said text against a home's names.
const baseCounts = new Int32Array(65536);
const baseStamps = new Uint32Array(65536);
const workCounts = new Int32Array(65536);
const workStamps = new Uint32Array(65536);
let bagStamp = 0;
let workStamp = 0;

const nextStamp = (stamp: number, stamps: Uint32Array): number => {
  if (stamp < 0xffffffff) return stamp + 1;
  stamps.fill(0);
  return 1;
};

/**
 * bagDistance from one text to many (the words said to every name), one pass over each of the
 * many. The tables are shared: only the bag made last may be asked (resolving is synchronous).
 */
export class CharacterBag {
  private readonly length: number;
  private readonly stamp: number;

  constructor(text: string) {
    this.length = text.length;
    bagStamp = nextStamp(bagStamp, baseStamps);
    this.stamp = bagStamp;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (baseStamps[code] !== bagStamp) {
        baseStamps[code] = bagStamp;
        baseCounts[code] = 0;
      }
      baseCounts[code] = (baseCounts[code] as number) + 1;
    }
  }

  distanceTo(other: string): number {
    if (this.stamp !== bagStamp) throw new HomeAgentError('HA_ERR_INTERNAL', 'CharacterBag: a newer bag has replaced this one');
    workStamp = nextStamp(workStamp, workStamps);
    let missing = 0;
    for (let i = 0; i < other.length; i++) {
      const code = other.charCodeAt(i);
      if (workStamps[code] !== workStamp) {
        workStamps[code] = workStamp;
        workCounts[code] = baseStamps[code] === bagStamp ? (baseCounts[code] as number) : 0;
      }
      const left = (workCounts[code] as number) - 1;
      workCounts[code] = left;
      if (left < 0) missing += 1;
    }
    return Math.max(this.length - (other.length - missing), missing);
  }
}

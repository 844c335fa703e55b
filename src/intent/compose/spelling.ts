/**
 * Spelling repair for English sentences before the templates see them (issue 26): a word that is
 * in neither the templates, the home's names nor the lexicon is replaced by the one known word it
 * is one slip from (two for long words) — a dropped, doubled, swapped or wrong letter, the slips of
 * typing and speech-to-text. Only a unique closest word is taken; short words (under four letters)
 * and words with two equally close candidates are left as they are, so a repair never chooses.
 */
import { editDistance } from '../edit-distance.js';
import type { IntentSentences } from '../intent-sentences.js';
import type { IntentHome } from '../recognizer.js';
import { APOSTROPHES, normalizeText } from '../text-normalize.js';
import { LEXICONS } from './lexicon.js';

const WORD = /[a-z]+/gu;
const SLOT = /\{[^}]*\}/gu;

export class SpellingRepair {
  private readonly known = new Set<string>();
  private readonly byLength = new Map<number, string[]>();

  constructor(sentences: readonly IntentSentences[], home: IntentHome) {
    const add = (text: string) => {
      for (const w of normalizeText(text).match(WORD) ?? []) this.known.add(w);
    };
    // Template literals, without the list names in braces ({name}, {area:slot}). Their words only
    // need what normalizeText does to letters (NFKC, lower case, apostrophes dropped): the rest of it
    // changes only what lies between Latin words, and running all of it over every template was
    // most of the cost of building this.
    for (const group of sentences) {
      if (group.language !== 'en') continue;
      for (const t of group.templates) {
        const letters = t.replace(SLOT, ' ').normalize('NFKC').toLowerCase().replace(APOSTROPHES, '');
        for (const w of letters.match(WORD) ?? []) this.known.add(w);
      }
    }
    for (const [phrase] of LEXICONS.en.phrases) add(phrase);
    for (const item of [...home.entities, ...home.areas, ...home.floors]) for (const p of [item.name, ...(item.aliases ?? [])]) add(p);
    // Pushed in place: copying the list for every word made this quadratic in the words known.
    for (const w of this.known) {
      const same = this.byLength.get(w.length);
      if (same) same.push(w);
      else this.byLength.set(w.length, [w]);
    }
  }

  /** The normalised sentence with unknown words repaired; the same text when nothing needed it. */
  repair(text: string): string {
    return this.repairWithSimilarity(text).text;
  }

  /**
   * The repair and how alike (0..1) its least alike repaired word is to the word as said: a
   * repaired reading is a guess like a near name, and is only acted on when it is as sure
   * (core.intent.min_confidence); 1 when nothing was repaired.
   */
  repairWithSimilarity(text: string): { text: string; similarity: number } {
    const words = normalizeText(text).split(' ');
    let changed = false;
    let similarity = 1;
    const out = words.map((word) => {
      if (word.length < 4 || this.known.has(word) || !/^[a-z]+$/u.test(word)) return word;
      const allowed = word.length >= 8 ? 2 : 1;
      let best: string | undefined;
      let bestDistance = allowed + 1;
      let tied = false;
      for (let len = word.length - allowed; len <= word.length + allowed; len++) {
        for (const candidate of this.byLength.get(len) ?? []) {
          const d = editDistance(word, candidate, allowed);
          if (d < bestDistance) [best, bestDistance, tied] = [candidate, d, false];
          else if (d === bestDistance) tied = true;
        }
      }
      if (best === undefined || tied) return word;
      changed = true;
      similarity = Math.min(similarity, 1 - bestDistance / Math.max(word.length, best.length));
      return best;
    });
    return changed ? { text: out.join(' '), similarity } : { text, similarity: 1 };
  }
}

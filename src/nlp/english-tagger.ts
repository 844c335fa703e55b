/**
 * A small rule tagger for English (a reduced Penn tag set): closed-class word lists, a lexicon of
 * everyday verbs with their inflections, suffix guesses, and a few context rules for words that
 * are both noun and verb (drink, walk, name). Enough to find subject, verb and object in the short
 * sentences people say to a home assistant; not a general-purpose tagger.
 *
 * Tags: DT PRP PRP$ NN NNS NNP CD JJ RB IN TO CC MD WP UH POS EX VB VBP VBZ VBD VBN VBG and `.`
 * for punctuation.
 */

import { hasDigit, isPunctuation, isSymbol, latinTokens } from './latin-words.js';
import type { TaggedWord } from './types.js';

const words = (list: string): string[] => list.split(' ');

const CLOSED: ReadonlyMap<string, string> = new Map([
  ...words('the a an this that these those every each some any no another both either neither all').map((w): [string, string] => [w, 'DT']),
  ...words('i you he she it we they me him us them myself yourself himself herself itself ourselves themselves').map(
    (w): [string, string] => [w, 'PRP'],
  ),
  ...words('my your his her its our their').map((w): [string, string] => [w, 'PRP$']),
  ...words(
    'in on at of for with from by about into onto over under near behind between after before since during without through across around inside outside beside above below than as per via',
  ).map((w): [string, string] => [w, 'IN']),
  ['to', 'TO'],
  ...words('and or but nor yet').map((w): [string, string] => [w, 'CC']),
  ...words('can could will would shall should may might must ca wo').map((w): [string, string] => [w, 'MD']),
  ...words('what who whom whose which where when why how').map((w): [string, string] => [w, 'WP']),
  ...words('hello hi hey thanks thank ok okay yes yeah please bye goodbye wow oh').map((w): [string, string] => [w, 'UH']),
  ...words(
    "not n't never always often usually sometimes also just very really too already still now then here there today tomorrow yesterday soon later ever quite almost rarely again together currently recently finally",
  ).map((w): [string, string] => [w, 'RB']),
]);

/** Base form → inflected forms are generated; irregular forms are listed below. */
const VERBS = words(
  'like love enjoy hate dislike prefer adore detest live move work play drink eat buy teach drive go walk have own make take cook clean feed ' +
    'watch read write speak study need want use call name visit keep get give leave sleep run swim grow wear sing dance paint fix attend come see ' +
    'know think bring build learn listen look meet pay put sell send sit stand start stop talk tell travel try wash help hold join plan raise ride ' +
    'rent share shop smoke spend stay throw turn wake wait open close set check remind order install charge water coach manage lead adopt commute ' +
    'collect bake garden jog hike knit fish volunteer relocate belong babysit care marry date miss prefer practice practise repair remember forget ' +
    'do be',
);

const IRREGULAR: Readonly<Record<string, [string, string]>> = {
  am: ['be', 'VBP'],
  are: ['be', 'VBP'],
  is: ['be', 'VBZ'],
  was: ['be', 'VBD'],
  were: ['be', 'VBD'],
  been: ['be', 'VBN'],
  being: ['be', 'VBG'],
  "'m": ['be', 'VBP'],
  "'re": ['be', 'VBP'],
  has: ['have', 'VBZ'],
  had: ['have', 'VBD'],
  "'ve": ['have', 'VBP'],
  does: ['do', 'VBZ'],
  did: ['do', 'VBD'],
  done: ['do', 'VBN'],
  goes: ['go', 'VBZ'],
  went: ['go', 'VBD'],
  gone: ['go', 'VBN'],
  bought: ['buy', 'VBD'],
  taught: ['teach', 'VBD'],
  drove: ['drive', 'VBD'],
  driven: ['drive', 'VBN'],
  ate: ['eat', 'VBD'],
  eaten: ['eat', 'VBN'],
  drank: ['drink', 'VBD'],
  drunk: ['drink', 'VBN'],
  took: ['take', 'VBD'],
  taken: ['take', 'VBN'],
  made: ['make', 'VBD'],
  got: ['get', 'VBD'],
  gotten: ['get', 'VBN'],
  gave: ['give', 'VBD'],
  given: ['give', 'VBN'],
  left: ['leave', 'VBD'],
  slept: ['sleep', 'VBD'],
  ran: ['run', 'VBD'],
  swam: ['swim', 'VBD'],
  grew: ['grow', 'VBD'],
  grown: ['grow', 'VBN'],
  wore: ['wear', 'VBD'],
  worn: ['wear', 'VBN'],
  sang: ['sing', 'VBD'],
  saw: ['see', 'VBD'],
  seen: ['see', 'VBN'],
  knew: ['know', 'VBD'],
  known: ['know', 'VBN'],
  thought: ['think', 'VBD'],
  came: ['come', 'VBD'],
  kept: ['keep', 'VBD'],
  wrote: ['write', 'VBD'],
  written: ['write', 'VBN'],
  spoke: ['speak', 'VBD'],
  spoken: ['speak', 'VBN'],
  brought: ['bring', 'VBD'],
  built: ['build', 'VBD'],
  met: ['meet', 'VBD'],
  paid: ['pay', 'VBD'],
  sold: ['sell', 'VBD'],
  sent: ['send', 'VBD'],
  sat: ['sit', 'VBD'],
  stood: ['stand', 'VBD'],
  told: ['tell', 'VBD'],
  held: ['hold', 'VBD'],
  rode: ['ride', 'VBD'],
  ridden: ['ride', 'VBN'],
  spent: ['spend', 'VBD'],
  threw: ['throw', 'VBD'],
  woke: ['wake', 'VBD'],
  led: ['lead', 'VBD'],
  fed: ['feed', 'VBD'],
  forgot: ['forget', 'VBD'],
};

const CONSONANT_Y = /[^aeiou]y$/;

function inflections(base: string): Array<[string, string]> {
  const forms: Array<[string, string]> = [[base, 'VB']];
  const stemE = base.endsWith('e') ? base.slice(0, -1) : base;
  const last = base[base.length - 1] ?? '';
  const doubled = /^[^aeiou]*[aeiou][bdgmnprt]$/.test(base) ? `${base}${last}` : base;
  if (CONSONANT_Y.test(base)) {
    forms.push([`${base.slice(0, -1)}ies`, 'VBZ'], [`${base.slice(0, -1)}ied`, 'VBD']);
  } else if (/(?:s|x|z|ch|sh|o)$/.test(base)) {
    forms.push([`${base}es`, 'VBZ'], [`${stemE}ed`, 'VBD']);
  } else {
    forms.push([`${base}s`, 'VBZ'], [base.endsWith('e') ? `${base}d` : `${doubled}ed`, 'VBD']);
  }
  forms.push([
    base.endsWith('ie') ? `${base.slice(0, -2)}ying` : base.endsWith('ee') ? `${base}ing` : `${stemE === base ? doubled : stemE}ing`,
    'VBG',
  ]);
  return forms;
}

/** Verbs whose inflections are all irregular: generating "bes" or "bed" would mistag nouns. */
const ONLY_IRREGULAR = new Set(['be', 'do', 'have', 'go']);

const VERB_FORMS: ReadonlyMap<string, [string, string]> = (() => {
  const map = new Map<string, [string, string]>();
  for (const base of VERBS) {
    const forms: Array<[string, string]> = ONLY_IRREGULAR.has(base)
      ? [
          [base, 'VB'],
          [`${base.endsWith('e') ? base.slice(0, -1) : base}ing`, 'VBG'],
        ]
      : inflections(base);
    for (const [form, tag] of forms) if (!map.has(form)) map.set(form, [base, tag]);
  }
  for (const [form, entry] of Object.entries(IRREGULAR)) map.set(form, entry);
  return map;
})();

const ADJECTIVES = new Set(
  words(
    'new old big small young little large tiny spicy sweet sour bitter hot cold warm cool favorite favourite golden good bad nice great best ' +
      'worst allergic retired rainy sunny snowy windy early late happy sad busy free full empty high low long short tall own main whole ' +
      'other same different next last first second third middle elementary local public private smart electric red blue green yellow black white ' +
      'brown grey gray pink purple orange quiet loud clean dirty healthy sick vegetarian vegan italian chinese french mexican japanese indian',
  ),
);
/** -ish only from six letters and not fish/dish/wish (shellfish is a noun). */
const ADJECTIVE_SUFFIX = /(?:ful|ous|ive|able|ible|less|ical|ary|...(?<![fdw])ish)$/;
/** Family words used as names (Dad drinks coffee): proper nouns whatever their case. */
const FAMILY_NAMES = new Set(words('mom mum mommy mother dad daddy father grandma grandpa granny nana papa'));
/** Words that are nouns in household talk even though the verb lexicon lists them. */
const NOUN_FIRST = new Set(words('water garden fish name call order plan date care'));
const ABBREVIATIONS = new Set(words('mr mrs ms dr prof st jr sr'));

/** Splits English contractions and possessives: I'm → I 'm, don't → do n't, Emma's → Emma 's. */
function splitClitics(token: string): string[] {
  const normal = token.replace(/’/g, "'");
  const lower = normal.toLowerCase();
  if (lower === "can't") return [normal.slice(0, 2), "n't"];
  if (lower === "won't") return [normal.slice(0, 2), "n't"];
  if (lower.endsWith("n't")) return [normal.slice(0, -3), "n't"];
  const clitic = /^(.+)('(?:s|m|re|ve|ll|d))$/i.exec(normal);
  if (clitic?.[1] !== undefined && clitic[2] !== undefined) return [clitic[1], clitic[2].toLowerCase()];
  return [normal];
}

/** Word tokens for tagging: clitics split, "Mrs." kept as one word. */
export function englishWords(text: string): string[] {
  const raw = latinTokens(text);
  const out: string[] = [];
  for (let i = 0; i < raw.length; i++) {
    const token = raw[i] ?? '';
    if (ABBREVIATIONS.has(token.toLowerCase()) && raw[i + 1] === '.') {
      out.push(`${token}.`);
      i++;
      continue;
    }
    out.push(...(isPunctuation(token) ? [token] : splitClitics(token)));
  }
  return out;
}

/** The base form of a verb the tagger knows; the word itself otherwise. */
export function verbLemma(word: string): string {
  const lower = word.toLowerCase();
  if (lower === 'ca') return 'can';
  if (lower === 'wo') return 'will';
  return VERB_FORMS.get(lower)?.[0] ?? lower;
}

function lexicalTag(word: string, first: boolean): string {
  if (isPunctuation(word)) return '.';
  const lower = word.toLowerCase();
  if (lower === "'s") return 'POS';
  if (lower === "'d" || lower === "'ll") return 'MD';
  if (hasDigit(word)) return 'CD';
  if (isSymbol(word)) return 'NN';
  const closed = CLOSED.get(lower);
  // "May 3rd": a capitalised modal in mid-sentence is a name.
  if (closed !== undefined && !(closed === 'MD' && /^\p{Lu}/u.test(word) && !first)) return closed;
  if (FAMILY_NAMES.has(lower)) return 'NNP';
  if (/^\p{Lu}/u.test(word) && !first) return 'NNP';
  if (/^\p{Lu}\p{Ll}*\.$/u.test(word)) return 'NNP';
  const verb = VERB_FORMS.get(lower);
  if (verb !== undefined && !NOUN_FIRST.has(lower)) return verb[1];
  if (ADJECTIVES.has(lower)) return 'JJ';
  if (NOUN_FIRST.has(lower)) return 'NN';
  if (first && /^\p{Lu}/u.test(word)) return 'NNP';
  if (lower.endsWith('ly') && lower.length > 4) return 'RB';
  if (lower.endsWith('ing') && lower.length > 5) return 'VBG';
  if (lower.endsWith('ed') && lower.length > 4) return 'VBD';
  if (ADJECTIVE_SUFFIX.test(lower)) return 'JJ';
  if (lower.endsWith('s') && !lower.endsWith('ss') && lower.length > 3) return 'NNS';
  return 'NN';
}

const NOMINAL = /^(?:NN|NNS|NNP|PRP|CD)$/;
const DETERMINER_LIKE = /^(?:DT|PRP\$|POS|JJ|CD)$/;

/** "a bit", "a little", "kind of": degree adverbs, not noun phrases. */
const DEGREE_PHRASES = new Set(['a bit', 'a little', 'a lot', 'kind of', 'sort of', 'a few']);

/** Tags English text. */
export function tagEnglish(text: string): TaggedWord[] {
  const tokens = englishWords(text);
  const tagged = tokens.map((word, i) => ({ word, tag: lexicalTag(word, i === 0 || isPunctuation(tokens[i - 1] ?? '.')) }));
  for (let i = 0; i + 1 < tagged.length; i++) {
    const pair = `${tagged[i]?.word.toLowerCase()} ${tagged[i + 1]?.word.toLowerCase()}`;
    if (!DEGREE_PHRASES.has(pair)) continue;
    // "a bit dim" but "a bit of cake"; "a little dog" stays a noun phrase.
    const after = tagged[i + 2];
    if (after?.word.toLowerCase() === 'of' || (pair !== 'a bit' && /^(?:NN|NNS)$/.test(after?.tag ?? ''))) continue;
    tagged[i] = { word: tagged[i]?.word ?? '', tag: 'RB' };
    tagged[i + 1] = { word: tagged[i + 1]?.word ?? '', tag: 'RB' };
  }
  for (let i = 0; i < tagged.length; i++) {
    const current = tagged[i] as TaggedWord;
    const previous = tagged[i - 1];
    const next = tagged[i + 1];
    const lower = current.word.toLowerCase();
    // "'s" after a noun and before a noun phrase is a possessive; otherwise it is "is".
    if (current.tag === 'POS') {
      const nounFollows = next !== undefined && /^(?:NN|NNS|NNP|JJ|VBG)$/.test(next.tag);
      const afterNoun = previous !== undefined && /^(?:NN|NNS|NNP)$/.test(previous.tag);
      if (!(nounFollows && afterNoun)) tagged[i] = { word: current.word, tag: 'VBZ' };
      continue;
    }
    // "her" before a noun is possessive.
    if (lower === 'her' && next !== undefined && /^(?:NN|NNS|NNP|JJ)$/.test(next.tag)) tagged[i] = { word: current.word, tag: 'PRP$' };
    // A verb form after a determiner or adjective is a noun (a drink, the walk).
    if (current.tag.startsWith('VB') && current.tag !== 'VBG' && previous !== undefined && DETERMINER_LIKE.test(previous.tag)) {
      if (!(previous.tag === 'CD' || (previous.tag === 'JJ' && lower.endsWith('ed')))) tagged[i] = { word: current.word, tag: 'NN' };
    }
    // "like" after a subject is a verb, elsewhere a preposition.
    if (lower === 'like' && !(previous !== undefined && (NOMINAL.test(previous.tag) || previous.tag === 'RB' || previous.tag === 'MD'))) {
      if (i > 0) tagged[i] = { word: current.word, tag: 'IN' };
    }
    // A listed noun-first word after a subject is a verb (I water the plants).
    if (NOUN_FIRST.has(lower) && previous !== undefined && /^(?:PRP|MD|TO)$/.test(previous.tag)) {
      tagged[i] = { word: current.word, tag: VERB_FORMS.get(lower)?.[1] ?? 'VB' };
    }
    // "the living room", "my washing machine": a gerund between a determiner and a noun is a modifier.
    if (
      current.tag === 'VBG' &&
      previous !== undefined &&
      /^(?:DT|PRP\$|JJ|POS)$/.test(previous.tag) &&
      next !== undefined &&
      /^(?:NN|NNS)$/.test(next.tag)
    ) {
      tagged[i] = { word: current.word, tag: 'JJ' };
    }
    // Past participles before a noun are adjectives (a retired firefighter).
    if ((current.tag === 'VBD' || current.tag === 'VBN') && next !== undefined && /^(?:NN|NNS)$/.test(next.tag) && previous !== undefined) {
      if (/^(?:DT|PRP\$|JJ)$/.test(previous.tag)) tagged[i] = { word: current.word, tag: 'JJ' };
    }
  }
  return tagged;
}

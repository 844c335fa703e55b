/**
 * The JSGF grammar of the offline command recogniser (issue 30): what pocketsphinx may hear is
 * what the local intent engine understands. Its English templates (the same `(a|b)`, `[x]` and
 * `{list}` language as src/intent/template-grammar.ts) are turned into JSGF rules; `{name}`,
 * `{area}` and `{floor}` become the home's entity, area and floor names and aliases, numbers,
 * percentages, temperatures and durations become number words, colours the engine's colour words.
 * Templates with free text (shopping items, messages, searches) cannot be constrained and are left
 * out, as is any alternative holding a word the pronunciation dictionary lacks: pocketsphinx cannot
 * say it, and the caller logs those words once.
 *
 * Written as a finite-state grammar (pocketsphinx's -fsg), not JSGF: pocketsphinx expands every
 * JSGF rule reference into its own copy, and the intent engine's 1,600 English templates took
 * 11 s and over 170 MB to compile that way on every start of the decoder. Here the templates are
 * one word automaton, made deterministic and minimal (the language is finite, so identical
 * endings merge bottom-up), which pocketsphinx loads in a fraction of that; bench/voice-commands.mjs
 * measures its size and load time.
 */

/** The sentence knowledge the grammar is built from (the intent engine's, through the SDK). */
export interface GrammarSentences {
  intent: string;
  language: string;
  templates: readonly string[];
  /** Fixed slots of the group: its domain and device class say which devices it can reach. */
  slots?: Readonly<Record<string, string | number>>;
}

export interface GrammarHome {
  /** domain and device_class, when given, leave out sentences about devices the home does not have. */
  entities: ReadonlyArray<{ name: string; aliases: readonly string[]; domain?: string; device_class?: string | null }>;
  areas: ReadonlyArray<{ name: string; aliases: readonly string[]; floor?: string }>;
}

export interface CommandGrammarInput {
  sentences: readonly GrammarSentences[];
  home: GrammarHome;
  /** Words of the pronunciation dictionary (lower case). */
  dictionary: ReadonlySet<string>;
  /** Colour words (the intent engine's COLOURS phrases). */
  colours: readonly string[];
  /** Wake phrases that may come before a command ("hey home"); the pipeline removes them. */
  wakePhrases?: readonly string[];
  /**
   * The first this many options of each written choice ("(in|on|at|of|for|inside|within)",
   * "[(please|can you|could you|...)]"): every option is another way to mishear a command, and the
   * sentence files list the common ones first. Names and numbers are never cut. Default: all.
   */
  maxAlternatives?: number;
  /** The first this many templates of each sentence group (the common forms come first). Default: all. */
  maxTemplatesPerGroup?: number;
}

export interface CommandGrammar {
  /** The grammar in pocketsphinx's FSG text format. */
  fsg: string;
  states: number;
  transitions: number;
  /** Templates turned into rules, after removing duplicates. */
  templates: number;
  /** Templates left out: free text, or every reading needs a word the dictionary lacks. */
  skippedTemplates: number;
  /** Words of templates and names the dictionary lacks, sorted. */
  missingWords: string[];
  /** Entity, area or floor names that could not be spelled (a word missing), as written. */
  missingNames: string[];
}

type Part =
  | { kind: 'words'; text: string }
  | { kind: 'seq'; items: Part[] }
  | { kind: 'alt'; options: Part[]; optional: boolean }
  | { kind: 'slot'; list: string };

/** A template in the intent engine's language, parsed without compiling its lists. */
export function parseTemplateParts(source: string): Part {
  let pos = 0;
  const sequence = (): Part => {
    const items: Part[] = [];
    let text = '';
    const flush = (): void => {
      if (text.trim() !== '') items.push({ kind: 'words', text });
      text = '';
    };
    while (pos < source.length) {
      const ch = source[pos] as string;
      if (ch === '|' || ch === ')' || ch === ']') break;
      if (ch === '(' || ch === '[') {
        flush();
        const close = ch === '(' ? ')' : ']';
        pos += 1;
        const options = [sequence()];
        while (source[pos] === '|') {
          pos += 1;
          options.push(sequence());
        }
        if (source[pos] !== close) throw new Error(`template "${source}": "${ch}" not closed`);
        pos += 1;
        items.push({ kind: 'alt', options, optional: ch === '[' });
      } else if (ch === '{') {
        flush();
        const end = source.indexOf('}', pos);
        if (end < 0) throw new Error(`template "${source}": "{" not closed`);
        const list = (source.slice(pos + 1, end).split(':')[0] ?? '').trim();
        items.push({ kind: 'slot', list });
        pos = end + 1;
      } else {
        text += ch;
        pos += 1;
      }
    }
    flush();
    return items.length === 1 ? (items[0] as Part) : { kind: 'seq', items };
  };
  const part = sequence();
  if (pos !== source.length) throw new Error(`template "${source}": unexpected "${source[pos]}"`);
  return part;
}

/** The words of a phrase as the dictionary spells them: lower case, apostrophes kept, other signs dropped. */
export function spokenWords(text: string): string[] {
  return text
    .toLowerCase()
    .replaceAll('’', "'")
    .split(/[^a-z']+/u)
    .map((word) => word.replace(/^'+|'+$/gu, ''))
    .filter((word) => word !== '');
}

// Number words the intent engine reads (number-words.ts): 0-99 as words, "one hundred".
const DIGIT = '(one|two|three|four|five|six|seven|eight|nine)';
const NUMBER = `(zero|${DIGIT}|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|(twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)[ ${DIGIT}]|[one ]hundred)`;
/** Lists of the intent engine's sentences that are number phrases here (template syntax). */
const NUMBER_LISTS: Record<string, string> = {
  brightness: `(${NUMBER}[ percent]|half|a quarter|three quarters)`,
  position: `(${NUMBER}[ percent]|half|a quarter|three quarters)`,
  volume: `(${NUMBER}[ percent]|half|a quarter|three quarters)`,
  temperature: `[minus ]${NUMBER}[ (degrees|degree)][ (celsius|fahrenheit)]`,
  duration: `((${NUMBER}|a|an)[ and a half] (second|seconds|minute|minutes|hour|hours)|half an hour)`,
};
/**
 * Intents whose sentences name no domain but reach only these (media players, vacuums, the weather):
 * without such a device their sentences would only be more ways to mishear a command.
 */
const INTENT_DOMAINS: Readonly<Record<string, readonly string[]>> = {
  HassMediaPause: ['media_player'],
  HassMediaUnpause: ['media_player'],
  HassMediaNext: ['media_player'],
  HassMediaPrevious: ['media_player'],
  HassSetVolume: ['media_player'],
  HassMediaSearchAndPlay: ['media_player'],
  HassVacuumStart: ['vacuum'],
  HassVacuumReturnToBase: ['vacuum'],
  HassGetWeather: ['weather'],
  HassClimateSetTemperature: ['climate'],
  HassClimateGetTemperature: ['climate', 'sensor'],
};

/** Whether a sentence group can reach a device of the home (always, when the home's domains are not given). */
function reachable(group: GrammarSentences, home: GrammarHome): boolean {
  const domains = new Set(home.entities.flatMap((e) => (e.domain ? [e.domain] : [])));
  if (domains.size === 0) return true;
  const domain = group.slots?.domain;
  const needed = typeof domain === 'string' ? [domain] : INTENT_DOMAINS[group.intent];
  if (needed && !needed.some((d) => domains.has(d))) return false;
  const deviceClass = group.slots?.device_class;
  if (typeof deviceClass === 'string') {
    return home.entities.some((e) => e.device_class === deviceClass && (typeof domain !== 'string' || e.domain === domain));
  }
  return true;
}

/** Lists of free text: a constrained recogniser cannot hear them. */
const FREE_LISTS = new Set(['item', 'list_name', 'timer_name', 'search_query', 'message']);

/** A part that can be said: words, in order, or a choice (possibly of nothing). */
type Said = { kind: 'word'; word: string } | { kind: 'seq'; items: Said[] } | { kind: 'alt'; options: Said[]; optional: boolean };
const NOTHING: Said = { kind: 'seq', items: [] };

const isNothing = (said: Said): boolean => said.kind === 'seq' && said.items.length === 0;

/** The grammar's word automaton while it is built: transitions by state, undefined word = no word. */
class Automaton {
  readonly arcs: Array<Array<{ word: string | undefined; to: number }>> = [];
  state(): number {
    this.arcs.push([]);
    return this.arcs.length - 1;
  }
  arc(from: number, word: string | undefined, to: number): void {
    (this.arcs[from] as Array<{ word: string | undefined; to: number }>).push({ word, to });
  }
  /** Thompson's construction: the part between `from` and the returned state. */
  add(said: Said, from: number): number {
    switch (said.kind) {
      case 'word': {
        const to = this.state();
        this.arc(from, said.word, to);
        return to;
      }
      case 'seq':
        return said.items.reduce((at, item) => this.add(item, at), from);
      case 'alt': {
        const end = this.state();
        for (const option of said.options) this.arc(this.add(option, from), undefined, end);
        if (said.optional) this.arc(from, undefined, end);
        return end;
      }
    }
  }
}

/** The states reachable without a word. */
function closure(automaton: Automaton, states: Iterable<number>): number[] {
  const seen = new Set<number>(states);
  const stack = [...seen];
  while (stack.length > 0) {
    for (const { word, to } of automaton.arcs[stack.pop() as number] ?? []) {
      if (word === undefined && !seen.has(to)) {
        seen.add(to);
        stack.push(to);
      }
    }
  }
  return [...seen].sort((a, b) => a - b);
}

interface Dfa {
  /** Word → next state, per state; state 0 starts. */
  next: Array<Map<string, number>>;
  final: boolean[];
}

/** Subset construction; the grammar has no loops, so it always ends. */
function determinize(automaton: Automaton, start: number, accept: number): Dfa {
  const next: Array<Map<string, number>> = [];
  const final: boolean[] = [];
  const ids = new Map<string, number>();
  const queue: number[][] = [];
  const idOf = (set: number[]): number => {
    const key = set.join(',');
    let id = ids.get(key);
    if (id === undefined) {
      id = next.length;
      ids.set(key, id);
      next.push(new Map());
      final.push(set.includes(accept));
      queue.push(set);
    }
    return id;
  };
  idOf(closure(automaton, [start]));
  for (let index = 0; index < queue.length; index++) {
    const byWord = new Map<string, number[]>();
    for (const state of queue[index] as number[]) {
      for (const { word, to } of automaton.arcs[state] ?? []) {
        if (word === undefined) continue;
        const targets = byWord.get(word) ?? [];
        targets.push(to);
        byWord.set(word, targets);
      }
    }
    for (const [word, targets] of byWord) (next[index] as Map<string, number>).set(word, idOf(closure(automaton, targets)));
  }
  return { next, final };
}

/** The minimal automaton of a finite language: states with the same future are one (bottom-up, Revuz). */
function minimize(dfa: Dfa): Dfa {
  const classOf = new Array<number>(dfa.next.length).fill(-1);
  const signatures = new Map<string, number>();
  const out: Dfa = { next: [], final: [] };
  const visit = (state: number): number => {
    const known = classOf[state] as number;
    if (known >= 0) return known;
    const arcs = [...(dfa.next[state] as Map<string, number>)].map(([word, to]) => [word, visit(to)] as const);
    arcs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    const signature = `${dfa.final[state] ? 1 : 0}|${arcs.map(([word, to]) => `${word}>${to}`).join(' ')}`;
    let id = signatures.get(signature);
    if (id === undefined) {
      id = out.next.length;
      signatures.set(signature, id);
      out.next.push(new Map(arcs));
      out.final.push(dfa.final[state] as boolean);
    }
    classOf[state] = id;
    return id;
  };
  // Depth first from the start; the grammar is shallow (a sentence of tens of words).
  const start = visit(0);
  // Renumber so that the start is state 0.
  if (start === 0) return out;
  const order = [start, ...out.next.keys()].filter((s, i, all) => all.indexOf(s) === i);
  const renumber = new Map(order.map((s, i) => [s, i]));
  return {
    next: order.map((s) => new Map([...(out.next[s] as Map<string, number>)].map(([w, to]) => [w, renumber.get(to) as number]))),
    final: order.map((s) => out.final[s] as boolean),
  };
}

/** pocketsphinx's FSG text format: one final state, reached without a word from every accepting one. */
function fsgText(dfa: Dfa): { text: string; transitions: number } {
  const finalState = dfa.next.length;
  const lines: string[] = [];
  dfa.next.forEach((arcs, from) => {
    for (const [word, to] of arcs) lines.push(`TRANSITION ${from} ${to} 1.0 ${word}`);
    if (dfa.final[from]) lines.push(`TRANSITION ${from} ${finalState} 1.0`);
  });
  const text = [
    'FSG_BEGIN homeagent',
    `NUM_STATES ${finalState + 1}`,
    'START_STATE 0',
    `FINAL_STATE ${finalState}`,
    ...lines,
    'FSG_END',
    '',
  ];
  return { text: text.join('\n'), transitions: lines.length };
}

export function buildCommandGrammar(input: CommandGrammarInput): CommandGrammar {
  const missing = new Set<string>();
  const known = (word: string): boolean => {
    if (input.dictionary.has(word)) return true;
    missing.add(word);
    return false;
  };
  const missingNames: string[] = [];
  const maxAlternatives = input.maxAlternatives ?? Number.POSITIVE_INFINITY;
  const lists = new Map<string, Said>();
  const phrasesList = (phrases: readonly string[]): Said | undefined => {
    const options = new Map<string, Said>();
    for (const phrase of phrases) {
      const words = spokenWords(phrase);
      if (words.length > 0 && words.every(known)) {
        options.set(words.join(' '), { kind: 'seq', items: words.map((word) => ({ kind: 'word', word })) });
      }
    }
    return options.size === 0 ? undefined : { kind: 'alt', options: [...options.values()], optional: false };
  };
  const names = (list: string, items: ReadonlyArray<{ name: string; aliases?: readonly string[] }>): void => {
    const phrases: string[] = [];
    for (const item of items) {
      for (const phrase of [item.name, ...(item.aliases ?? [])]) {
        if (phrase.trim() === '') continue;
        const words = spokenWords(phrase);
        if (words.length === 0 || !words.every(known)) missingNames.push(phrase);
        else phrases.push(phrase);
      }
    }
    const said = phrasesList(phrases);
    if (said) lists.set(list, said);
  };
  names('name', input.home.entities);
  names('area', input.home.areas);
  const floors = [...new Set(input.home.areas.flatMap((area) => (area.floor ? [area.floor] : [])))];
  names(
    'floor',
    floors.map((name) => ({ name })),
  );
  const colours = phrasesList(input.colours);
  if (colours) lists.set('color', colours);

  // undefined: this part cannot be said (a word missing, an empty list, free text).
  const said = (part: Part, limit = maxAlternatives): Said | undefined => {
    switch (part.kind) {
      case 'words': {
        const words = spokenWords(part.text);
        // A sign-only piece ("%", "°") says nothing; a word the dictionary lacks cannot be said.
        if (words.length === 0) return /[\p{L}\p{N}]/u.test(part.text) ? undefined : NOTHING;
        return words.every(known) ? { kind: 'seq', items: words.map((word) => ({ kind: 'word', word })) } : undefined;
      }
      case 'slot': {
        if (FREE_LISTS.has(part.list)) return undefined;
        const number = NUMBER_LISTS[part.list];
        if (number !== undefined) {
          let list = lists.get(part.list);
          if (!list) {
            list = said(parseTemplateParts(number), Number.POSITIVE_INFINITY);
            if (list) lists.set(part.list, list);
          }
          return list;
        }
        return lists.get(part.list);
      }
      case 'seq': {
        const items: Said[] = [];
        for (const item of part.items) {
          const piece = said(item, limit);
          if (piece === undefined) return undefined;
          if (!isNothing(piece)) items.push(piece);
        }
        return items.length === 1 ? (items[0] as Said) : { kind: 'seq', items };
      }
      case 'alt': {
        const options = part.options
          .map((option) => said(option, limit))
          .filter((o): o is Said => o !== undefined)
          .slice(0, limit);
        const spoken = options.filter((o) => !isNothing(o));
        const optional = part.optional || spoken.length < options.length;
        if (spoken.length === 0) return optional ? NOTHING : undefined;
        return { kind: 'alt', options: spoken, optional };
      }
    }
  };

  const automaton = new Automaton();
  const start = automaton.state();
  const accept = automaton.state();
  let body = start;
  const wake = phrasesList(input.wakePhrases ?? []);
  if (wake) {
    body = automaton.state();
    automaton.arc(automaton.add({ kind: 'alt', options: [wake], optional: true }, start), undefined, body);
    // A bare wake phrase: the pipeline answers it with "Yes?".
    automaton.arc(body, undefined, accept);
  }
  let templates = 0;
  let skipped = 0;
  for (const group of input.sentences) {
    if (group.language !== 'en') continue;
    if (!reachable(group, input.home)) {
      skipped += group.templates.length;
      continue;
    }
    for (const [index, template] of group.templates.entries()) {
      if (index >= (input.maxTemplatesPerGroup ?? Number.POSITIVE_INFINITY)) {
        skipped++;
        continue;
      }
      const sentence = said(parseTemplateParts(template));
      if (sentence === undefined || isNothing(sentence)) {
        skipped++;
        continue;
      }
      templates++;
      automaton.arc(automaton.add(sentence, body), undefined, accept);
    }
  }
  const dfa = minimize(determinize(automaton, start, accept));
  const { text, transitions } = fsgText(dfa);
  return {
    fsg: text,
    states: dfa.next.length + 1,
    transitions,
    templates,
    skippedTemplates: skipped,
    missingWords: [...missing].sort(),
    missingNames: [...new Set(missingNames)],
  };
}

/**
 * Keeps the local recogniser's grammar in step with the home (issue 30): built from the intent
 * engine's English sentences and the home's entity, area and alias names, written as an FSG file
 * under the plugin's data directory, and rebuilt after a quiet spell when entities are registered
 * or removed (the same events the intent engine recompiles on). The file's name carries a hash of
 * its text, so the decoder restarts only when the grammar really changed. Names and words the
 * pronunciation dictionary lacks are logged once each.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Area, EntityInfo, Logger } from '../../../src/sdk/index.js';
import { INTENT_COLOURS, INTENT_SENTENCES } from '../../../src/sdk/intent-vocabulary.js';
import { buildCommandGrammar, type CommandGrammar, type GrammarHome } from './command-grammar.js';
import { sttError } from './stt-common.js';

export interface LocalGrammarOptions {
  dir: string;
  /** The model's pronunciation dictionary (LocalModelFiles.dict). */
  dictionary: string;
  entities: () => Promise<readonly EntityInfo[]>;
  areas: () => Promise<readonly Area[]>;
  wakePhrases: () => readonly string[];
  maxStates: () => number;
  /** The options kept of each written choice (command-grammar.ts); undefined: all. */
  maxAlternatives?: () => number;
  /** The templates kept of each sentence group; undefined: all. */
  maxTemplatesPerGroup?: () => number;
  log: Logger;
}

export interface GrammarReport {
  path: string;
  /** The pronunciations of the grammar's words only: the decoder loads in a third of the time and memory. */
  dictionary: string;
  states: number;
  transitions: number;
  bytes: number;
  templates: number;
  build_ms: number;
}

/** The dictionary's words: each line starts with the word, alternates are "word(2)". */
export function dictionaryWords(text: string): Set<string> {
  return new Set(dictionaryLines(text).keys());
}

/** Each word's lines (its pronunciations, alternates included). */
export function dictionaryLines(text: string): Map<string, string[]> {
  const lines = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const entry = line.slice(0, line.indexOf(' '));
    if (entry === '') continue;
    const word = entry.replace(/\(\d+\)$/u, '');
    lines.set(word, [...(lines.get(word) ?? []), line]);
  }
  return lines;
}

/** The words the FSG text says. */
function grammarWords(fsg: string): Set<string> {
  const words = new Set<string>();
  for (const line of fsg.split('\n')) {
    const parts = line.split(' ');
    if (parts[0] === 'TRANSITION' && parts[4]) words.add(parts[4]);
  }
  return words;
}

export function grammarHome(entities: readonly EntityInfo[], areas: readonly Area[]): GrammarHome {
  return {
    entities: entities.map((entity) => ({
      name: entity.name,
      aliases: entity.aliases,
      domain: entity.domain,
      device_class: entity.device_class,
    })),
    areas: areas.map((area) => ({ name: area.name, aliases: area.aliases, ...(area.floor !== undefined && { floor: area.floor }) })),
  };
}

export class LocalGrammar {
  readonly #o: LocalGrammarOptions;
  #dictionary: Promise<Map<string, string[]>> | undefined;
  #current: Promise<GrammarReport> | undefined;
  #timer: NodeJS.Timeout | undefined;
  readonly #logged = new Set<string>();
  #last: GrammarReport | undefined;

  constructor(options: LocalGrammarOptions) {
    this.#o = options;
  }

  /** The grammar file for the home as it is now (built on first use). */
  path(): Promise<string> {
    return this.files().then((files) => files.fsg);
  }

  /** The grammar and its dictionary, for the decoder. */
  files(): Promise<{ fsg: string; dict: string }> {
    this.#current ??= this.#build();
    return this.#current.then((report) => ({ fsg: report.path, dict: report.dictionary }));
  }

  /** Size and build time of the grammar in use, for the status. */
  report(): GrammarReport | undefined {
    return this.#last;
  }

  /** The home's devices changed: rebuild after a quiet spell; the old grammar serves meanwhile. */
  changed(delayMs: number): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      const next = this.#build();
      // A failed rebuild keeps the grammar that works.
      next.then(
        () => {
          this.#current = next;
        },
        (error: unknown) => this.#o.log.warn({ err: error }, 'the local command grammar was not rebuilt'),
      );
    }, delayMs);
    this.#timer.unref();
  }

  close(): void {
    clearTimeout(this.#timer);
  }

  async #build(): Promise<GrammarReport> {
    this.#dictionary ??= readFile(this.#o.dictionary, 'utf8').then(dictionaryLines);
    const [pronunciations, entities, areas] = await Promise.all([this.#dictionary, this.#o.entities(), this.#o.areas()]);
    const dictionary = new Set(pronunciations.keys());
    const started = performance.now();
    const grammar = buildCommandGrammar({
      sentences: INTENT_SENTENCES,
      home: grammarHome(entities, areas),
      dictionary,
      colours: INTENT_COLOURS.flatMap((colour) => colour.phrases),
      wakePhrases: this.#o.wakePhrases(),
      ...(this.#o.maxAlternatives ? { maxAlternatives: this.#o.maxAlternatives() } : {}),
      ...(this.#o.maxTemplatesPerGroup ? { maxTemplatesPerGroup: this.#o.maxTemplatesPerGroup() } : {}),
    });
    const buildMs = Math.round(performance.now() - started);
    this.#logMissing(grammar);
    if (grammar.states > this.#o.maxStates()) {
      throw sttError(
        `the local command grammar has ${grammar.states} states, over plugin.voice.stt.local_max_grammar_states (${this.#o.maxStates()})`,
      );
    }
    const hash = createHash('sha256').update(grammar.fsg).digest('hex').slice(0, 16);
    await mkdir(this.#o.dir, { recursive: true, mode: 0o700 });
    const path = join(this.#o.dir, `commands-${hash}.fsg`);
    const dictionaryPath = join(this.#o.dir, `commands-${hash}.dict`);
    const lines = [...grammarWords(grammar.fsg)].sort().flatMap((word) => pronunciations.get(word) ?? []);
    await writeFile(dictionaryPath, `${lines.join('\n')}\n`, { mode: 0o600 });
    await writeFile(path, grammar.fsg, { mode: 0o600 });
    // Older grammars are of no use once this one is written.
    for (const name of await readdir(this.#o.dir)) {
      const old = join(this.#o.dir, name);
      if (name.startsWith('commands-') && old !== path && old !== dictionaryPath) await rm(old, { force: true });
    }
    const report = {
      path,
      dictionary: dictionaryPath,
      states: grammar.states,
      transitions: grammar.transitions,
      bytes: grammar.fsg.length,
      templates: grammar.templates,
      build_ms: buildMs,
    };
    this.#last = report;
    this.#o.log.info({ ...report, skipped_templates: grammar.skippedTemplates }, 'local command grammar built');
    return report;
  }

  #logMissing(grammar: CommandGrammar): void {
    const words = grammar.missingWords.filter((word) => !this.#logged.has(`w:${word}`));
    const names = grammar.missingNames.filter((name) => !this.#logged.has(`n:${name}`));
    for (const word of words) this.#logged.add(`w:${word}`);
    for (const name of names) this.#logged.add(`n:${name}`);
    if (names.length > 0) {
      this.#o.log.warn(
        { names },
        'names the local recogniser cannot say (a word is missing from its pronunciation dictionary); an alias of dictionary words can be said',
      );
    }
    if (words.length > 0) this.#o.log.info({ words }, 'words left out of the local command grammar (not in the pronunciation dictionary)');
  }
}

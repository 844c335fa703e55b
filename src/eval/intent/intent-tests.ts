/**
 * Loads the intent test sentences of one language folder (home-assistant/intents `tests/<lang>/`,
 * kept under /work/shared/data/ha-intents) into flat cases the scorer can run, plus the folder's
 * `_fixtures.yaml` (floors, areas, entities) typed so the entity registry can be fed from it later.
 * The data is read in place, never copied into the repository; every shape problem is reported as
 * HA_ERR_EVAL_DATA naming the file and the index at fault, so a changed upstream format fails loudly
 * instead of silently scoring fewer sentences.
 *
 * Beside Home Assistant's format (issue 26, agreed with the held-out writers):
 *   `intent: none`        no intent may be recognised (the sentence goes to the model);
 *   `intent: ask`         the recogniser must ask which device is meant;
 *   `intents: [...]`      a compound command: every intent, in order;
 *   `conversation: [...]` steps `{sentence, intent | intents}` spoken in order in one conversation.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { HomeAgentError } from '../../shared/errors.js';

/** One expected slot value: a list means any one of those values is right (e.g. two name spellings). */
export type SlotValue = string | number | boolean | readonly (string | number | boolean)[];

export interface ExpectedIntent {
  name: string;
  slots: Record<string, SlotValue>;
}

/** What a sentence must produce: intents in order (one for most), no intent, or a question back. */
export type Expectation = { kind: 'intents'; intents: ExpectedIntent[] } | { kind: 'none' } | { kind: 'ask' };

/** The bucket names the report files `intent: none` and `intent: ask` under. */
export const NONE_BUCKET = '(none)';
export const ASK_BUCKET = '(ask)';

/** What the satellite already knows when the sentence is spoken ("in here" means this area). */
export interface IntentContext {
  area?: string;
  domain?: string;
  device_class?: string;
}

/** One sentence to recognise with the intent the file expects for it. */
export interface IntentCase {
  /** File name within the language folder, for failure reports. */
  file: string;
  /** Index of the test item in the file's `tests` list. */
  index: number;
  /** The file's language (e.g. `en`, `zh-cn`), handed to the recogniser. */
  language: string;
  sentence: string;
  /**
   * The intent the report files the case under: the only (or first) expected intent, or
   * {name: NONE_BUCKET | ASK_BUCKET, slots: {}}; `expect` says the whole of what is expected
   * (the loader always sets it; a case built by hand without it expects `expected` alone).
   */
  expected: ExpectedIntent;
  expect?: Expectation;
  context: IntentContext;
  /** Set on the steps of a conversation: which one (unique within the set) and the step's place. */
  conversation?: { id: string; step: number };
  /**
   * Devices the test file declares for its own sentences (name_only.yaml's "Overhead Light"): the
   * recogniser's home must hold them besides the fixtures for these cases. Absent when none.
   */
  extra_entities?: readonly TestFileEntity[];
}

/** An entity a test file declares in its top-level `entities` list: only its name and domain. */
export interface TestFileEntity {
  name: string;
  domain: string;
}

export interface FixtureFloor {
  id: string;
  name: string;
  aliases?: string[];
}

export interface FixtureArea {
  id: string;
  name: string;
  /** Floor id; zh-cn areas have none. */
  floor?: string;
  aliases?: string[];
}

/**
 * An entity state is either the plain state or, where the spoken word differs from the stored
 * state (a battery "normal" that is stored "off"), the pair `{in: spoken, out: stored}`.
 */
export type FixtureState = string | { in: string; out: string };

export interface FixtureEntity {
  /** Entity id `domain.object`, e.g. `light.bedroom_lamp`. */
  id: string;
  name: string;
  /** Other names (our own fixture files use them; Home Assistant's have none). */
  aliases?: string[];
  area?: string;
  state?: FixtureState;
  attributes?: Record<string, unknown>;
}

export interface IntentFixtures {
  language: string;
  floors: FixtureFloor[];
  areas: FixtureArea[];
  entities: FixtureEntity[];
}

export interface IntentTestSet {
  language: string;
  cases: IntentCase[];
  fixtures: IntentFixtures;
  /** Files read, in name order, for the report. */
  files: string[];
}

const FIXTURES_FILE = '_fixtures.yaml';
// Header of the response-only files (area_only.yaml, name_only.yaml, default.yaml ...): their
// test items carry `slots` but no `intent`; the intent name is only stated in this first comment.
const HEADER_INTENT = /^#\s*(Hass[A-Za-z]+)\s+-\s/m;

function fail(file: string, where: string, problem: string): HomeAgentError {
  return new HomeAgentError('HA_ERR_EVAL_DATA', `${file}${where === '' ? '' : ` ${where}`}: ${problem}`, {
    details: { file, where },
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isScalar(value: unknown): value is string | number | boolean {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

function readYaml(dir: string, file: string): { text: string; doc: unknown } {
  let text: string;
  try {
    text = readFileSync(join(dir, file), 'utf8');
  } catch (cause) {
    throw new HomeAgentError('HA_ERR_EVAL_DATA', `${file}: cannot be read`, { cause, details: { file } });
  }
  try {
    return { text, doc: parse(text) };
  } catch (cause) {
    throw new HomeAgentError('HA_ERR_EVAL_DATA', `${file}: not valid YAML`, { cause, details: { file } });
  }
}

function parseSlots(raw: unknown, file: string, where: string): Record<string, SlotValue> {
  if (raw === undefined || raw === null) return {};
  if (!isRecord(raw)) throw fail(file, where, 'slots must be a mapping');
  const slots: Record<string, SlotValue> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (isScalar(value)) slots[key] = value;
    else if (Array.isArray(value) && value.length > 0 && value.every(isScalar)) slots[key] = value;
    else throw fail(file, `${where} slot ${key}`, 'must be a string, number, boolean or non-empty list of them');
  }
  return slots;
}

function parseContext(raw: unknown, file: string, where: string): IntentContext {
  if (raw === undefined || raw === null) return {};
  if (!isRecord(raw)) throw fail(file, where, 'context must be a mapping');
  const context: IntentContext = {};
  for (const key of ['area', 'domain', 'device_class'] as const) {
    const value = raw[key];
    if (value === undefined) continue;
    if (typeof value !== 'string') throw fail(file, `${where} context.${key}`, 'must be a string');
    context[key] = value;
  }
  return context;
}

function parseFileEntities(raw: unknown, file: string): TestFileEntity[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw fail(file, 'entities', 'must be a list');
  return raw.map((entry: unknown, i) => {
    const where = `entities[${i}]`;
    if (!isRecord(entry)) throw fail(file, where, 'must be a mapping');
    return { name: requireString(entry, 'name', file, where), domain: requireString(entry, 'domain', file, where) };
  });
}

/** Turns one parsed test file into cases; `header` is the file's first lines (see HEADER_INTENT). */
export function parseTestFile(doc: unknown, file: string, header = ''): { language: string; cases: IntentCase[] } {
  if (!isRecord(doc)) throw fail(file, '', 'must be a mapping with language and tests');
  if (typeof doc.language !== 'string') throw fail(file, '', 'language must be a string');
  if (!Array.isArray(doc.tests)) throw fail(file, '', 'tests must be a list');
  const headerIntent = HEADER_INTENT.exec(header)?.[1];
  const language = doc.language;
  const entities = parseFileEntities(doc.entities, file);
  const extra = entities.length === 0 ? {} : { extra_entities: entities };
  const cases: IntentCase[] = [];
  doc.tests.forEach((item: unknown, index) => {
    const where = `tests[${index}]`;
    if (!isRecord(item)) throw fail(file, where, 'must be a mapping');
    const base = { file, index, language, ...extra };
    if (item.conversation !== undefined) {
      if (!Array.isArray(item.conversation) || item.conversation.length === 0) {
        throw fail(file, `${where}.conversation`, 'must be a non-empty list of steps');
      }
      const id = `${file}#${index}`;
      item.conversation.forEach((step: unknown, i) => {
        const at = `${where}.conversation[${i}]`;
        if (!isRecord(step) || typeof step.sentence !== 'string' || step.sentence === '') {
          throw fail(file, at, 'must be a mapping with a non-empty sentence');
        }
        const { expect, context } = parseExpectation(step, undefined, file, at);
        cases.push({ ...base, sentence: step.sentence, ...bucketed(expect), context, conversation: { id, step: i } });
      });
      return;
    }
    const { sentences } = item;
    if (!Array.isArray(sentences) || sentences.length === 0 || !sentences.every((s) => typeof s === 'string')) {
      throw fail(file, where, 'sentences must be a non-empty list of strings');
    }
    const { expect, context } = parseExpectation(item, headerIntent, file, where);
    for (const sentence of sentences as string[]) cases.push({ ...base, sentence, ...bucketed(expect), context });
  });
  return { language, cases };
}

/** The expected intent (or none, ask, a compound) of a test item or a conversation step. */
function parseExpectation(
  item: Record<string, unknown>,
  headerIntent: string | undefined,
  file: string,
  where: string,
): { expect: Expectation; context: IntentContext } {
  // A compound's satellite area may be stated beside its intents or on any one of them.
  let context = parseContext(item.context, file, where);
  if (item.intents !== undefined) {
    if (!Array.isArray(item.intents) || item.intents.length === 0) throw fail(file, `${where}.intents`, 'must be a non-empty list');
    const intents = item.intents.map((raw: unknown, i) => {
      const { intent, context: own } = parseIntent(raw, file, `${where}.intents[${i}]`);
      if (Object.keys(context).length === 0) context = own;
      return intent;
    });
    return { expect: { kind: 'intents', intents }, context };
  }
  if (item.intent === 'none' || item.intent === 'ask') return { expect: { kind: item.intent }, context };
  if (item.intent !== undefined) {
    const { intent, context: own } = parseIntent(item.intent, file, `${where}.intent`);
    return { expect: { kind: 'intents', intents: [intent] }, context: Object.keys(own).length > 0 ? own : context };
  }
  if (headerIntent !== undefined) {
    return { expect: { kind: 'intents', intents: [{ name: headerIntent, slots: parseSlots(item.slots, file, where) }] }, context };
  }
  throw fail(file, where, 'has no intent and the file has no "# HassIntent - variant" header');
}

function parseIntent(raw: unknown, file: string, where: string): { intent: ExpectedIntent; context: IntentContext } {
  if (!isRecord(raw) || typeof raw.name !== 'string' || raw.name === '') {
    throw fail(file, where, 'must be a mapping with a non-empty name (or none, ask)');
  }
  return { intent: { name: raw.name, slots: parseSlots(raw.slots, file, where) }, context: parseContext(raw.context, file, where) };
}

function bucketed(expect: Expectation): { expected: ExpectedIntent; expect: Expectation } {
  if (expect.kind === 'intents') return { expected: expect.intents[0] as ExpectedIntent, expect };
  return { expected: { name: expect.kind === 'none' ? NONE_BUCKET : ASK_BUCKET, slots: {} }, expect };
}

function optionalAliases(entry: Record<string, unknown>, file: string, where: string): { aliases?: string[] } {
  if (entry.aliases === undefined) return {};
  if (!Array.isArray(entry.aliases) || !entry.aliases.every((a) => typeof a === 'string')) {
    throw fail(file, `${where}.aliases`, 'must be a list of strings');
  }
  return { aliases: entry.aliases };
}

function requireString(entry: Record<string, unknown>, key: string, file: string, where: string): string {
  const value = entry[key];
  if (typeof value !== 'string' || value === '') throw fail(file, `${where}.${key}`, 'must be a non-empty string');
  return value;
}

function optionalString(entry: Record<string, unknown>, key: string, file: string, where: string): string | undefined {
  const value = entry[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw fail(file, `${where}.${key}`, 'must be a string');
  return value;
}

function listOf(doc: Record<string, unknown>, key: string, file: string): Record<string, unknown>[] {
  const list = doc[key];
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw fail(file, key, 'must be a list');
  list.forEach((entry, i) => {
    if (!isRecord(entry)) throw fail(file, `${key}[${i}]`, 'must be a mapping');
  });
  return list as Record<string, unknown>[];
}

function parseState(raw: unknown, file: string, where: string): FixtureState | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw === 'string') return raw;
  if (isRecord(raw) && typeof raw.in === 'string' && typeof raw.out === 'string') return { in: raw.in, out: raw.out };
  throw fail(file, `${where}.state`, 'must be a string or {in, out} strings');
}

/**
 * Parses `_fixtures.yaml`. Its `timers` list only feeds response templates of the timer intents,
 * which the scorer does not check, so it is not read.
 */
export function parseFixtures(doc: unknown, file = FIXTURES_FILE): IntentFixtures {
  if (!isRecord(doc)) throw fail(file, '', 'must be a mapping');
  if (typeof doc.language !== 'string') throw fail(file, '', 'language must be a string');
  const floors = listOf(doc, 'floors', file).map((f, i) => ({
    id: requireString(f, 'id', file, `floors[${i}]`),
    name: requireString(f, 'name', file, `floors[${i}]`),
    ...optionalAliases(f, file, `floors[${i}]`),
  }));
  const areas = listOf(doc, 'areas', file).map((a, i) => {
    const where = `areas[${i}]`;
    const area: FixtureArea = { id: requireString(a, 'id', file, where), name: requireString(a, 'name', file, where) };
    const floor = optionalString(a, 'floor', file, where);
    if (floor !== undefined) area.floor = floor;
    return { ...area, ...optionalAliases(a, file, where) };
  });
  const entities = listOf(doc, 'entities', file).map((e, i) => {
    const where = `entities[${i}]`;
    const entity: FixtureEntity = { id: requireString(e, 'id', file, where), name: requireString(e, 'name', file, where) };
    const area = optionalString(e, 'area', file, where);
    if (area !== undefined) entity.area = area;
    const state = parseState(e.state, file, where);
    if (state !== undefined) entity.state = state;
    if (e.attributes !== undefined) {
      if (!isRecord(e.attributes)) throw fail(file, `${where}.attributes`, 'must be a mapping');
      entity.attributes = e.attributes;
    }
    return { ...entity, ...optionalAliases(e, file, where) };
  });
  return { language: doc.language, floors, areas, entities };
}

/**
 * Reads every test file of one language folder. Files starting with `_` other than
 * `_fixtures.yaml` are skipped: zh-cn has `_test_failures.yaml`, a plain `sentences` list without
 * intents (upstream's list of sentences the grammar must NOT match, or known not to match yet) —
 * it has no expected intent to score against.
 */
export function loadIntentTests(dir: string): IntentTestSet {
  let names: string[];
  try {
    names = readdirSync(dir)
      .filter((n) => n.endsWith('.yaml'))
      .sort();
  } catch (cause) {
    throw new HomeAgentError('HA_ERR_EVAL_DATA', `intent test folder ${dir} cannot be read`, { cause });
  }
  if (!names.includes(FIXTURES_FILE)) throw fail(dir, '', `has no ${FIXTURES_FILE}`);
  const fixtures = parseFixtures(readYaml(dir, FIXTURES_FILE).doc);
  const files = names.filter((n) => !n.startsWith('_'));
  const cases: IntentCase[] = [];
  for (const file of files) {
    const { text, doc } = readYaml(dir, file);
    const parsed = parseTestFile(doc, file, text.slice(0, 400));
    if (parsed.language !== fixtures.language) {
      throw fail(file, '', `language ${parsed.language} differs from ${FIXTURES_FILE} (${fixtures.language})`);
    }
    cases.push(...parsed.cases);
  }
  return { language: fixtures.language, cases, fixtures, files };
}

/**
 * Shape check of the held-out intent sets (issue 26, test/fixtures/intents/heldout): every file
 * parses, every test item has sentences or a conversation, every expected intent is one Home
 * Assistant defines (or `none` / `ask`), every name, area and floor slot names something in that
 * language's `_fixtures.yaml`, and each language has at least 320 sentences. It deliberately does
 * NOT run the recogniser or report its accuracy: these sets are for a final, untuned evaluation only.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { parse } from 'yaml';

const ROOT = fileURLToPath(new URL('../../fixtures/intents/heldout', import.meta.url));
const LANGUAGES: Record<string, string> = { en: 'en', zh: 'zh-cn' };
const MIN_SENTENCES = 320;

/** Intents Home Assistant defines (homeassistant, light, climate, cover, timer, media, todo, vacuum ...). */
const HA_INTENTS = new Set([
  'HassTurnOn',
  'HassTurnOff',
  'HassToggle',
  'HassLightSet',
  'HassGetState',
  'HassClimateGetTemperature',
  'HassClimateSetTemperature',
  'HassSetPosition',
  'HassStartTimer',
  'HassCancelTimer',
  'HassCancelAllTimers',
  'HassPauseTimer',
  'HassUnpauseTimer',
  'HassIncreaseTimer',
  'HassDecreaseTimer',
  'HassTimerStatus',
  'HassGetCurrentTime',
  'HassGetCurrentDate',
  'HassGetWeather',
  'HassMediaPause',
  'HassMediaUnpause',
  'HassMediaNext',
  'HassMediaPrevious',
  'HassSetVolume',
  'HassMediaSearchAndPlay',
  'HassVacuumStart',
  'HassVacuumReturnToBase',
  'HassShoppingListAddItem',
  'HassShoppingListCompleteItem',
  'HassListAddItem',
  'HassListCompleteItem',
  'HassNevermind',
  'HassBroadcast',
  'HassRespond',
]);
/** Timer names are free text the speaker gives the timer, not entities of the home. */
const FREE_NAME_INTENTS = new Set([
  'HassStartTimer',
  'HassCancelTimer',
  'HassPauseTimer',
  'HassUnpauseTimer',
  'HassIncreaseTimer',
  'HassDecreaseTimer',
  'HassTimerStatus',
]);
const DOMAINS = new Set([
  'light',
  'switch',
  'fan',
  'cover',
  'lock',
  'binary_sensor',
  'sensor',
  'climate',
  'media_player',
  'vacuum',
  'todo',
  'scene',
  'script',
  'weather',
]);

type Category = 'single' | 'none' | 'ask' | 'compound' | 'conversation';

interface Home {
  names: Set<string>;
  areas: Set<string>;
  floors: Set<string>;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const lower = (v: unknown): string => String(v).trim().toLowerCase();

function readHome(dir: string, language: string): Home {
  const doc: unknown = parse(readFileSync(join(dir, '_fixtures.yaml'), 'utf8'));
  if (!isRecord(doc) || doc.language !== language) throw new Error(`${dir}/_fixtures.yaml: language must be ${language}`);
  const list = (key: string): Record<string, unknown>[] => (Array.isArray(doc[key]) ? (doc[key] as Record<string, unknown>[]) : []);
  const names = new Set<string>();
  const areaIds = new Set(list('areas').map((a) => String(a.id)));
  const floorIds = new Set(list('floors').map((f) => String(f.id)));
  for (const a of list('areas')) {
    if (a.floor !== undefined && !floorIds.has(String(a.floor))) throw new Error(`area ${a.name}: unknown floor ${a.floor}`);
  }
  for (const e of list('entities')) {
    if (typeof e.id !== 'string' || !e.id.includes('.')) throw new Error(`entity ${e.name}: id must be domain.object`);
    if (e.area !== undefined && !areaIds.has(String(e.area))) throw new Error(`entity ${e.id}: unknown area ${e.area}`);
    names.add(lower(e.name));
    for (const alias of Array.isArray(e.aliases) ? e.aliases : []) names.add(lower(alias));
  }
  return {
    names,
    areas: new Set(list('areas').map((a) => lower(a.name))),
    floors: new Set(list('floors').map((f) => lower(f.name))),
  };
}

/** Checks one expected intent (a mapping, `none` or `ask`); returns problems found. */
function checkIntent(raw: unknown, home: Home, where: string): string[] {
  if (raw === 'none' || raw === 'ask') return [];
  if (!isRecord(raw) || typeof raw.name !== 'string') return [`${where}: intent must be none, ask or a mapping with a name`];
  const problems: string[] = [];
  if (!HA_INTENTS.has(raw.name)) problems.push(`${where}: ${raw.name} is not a Home Assistant intent`);
  const slots = raw.slots ?? {};
  if (!isRecord(slots)) return [...problems, `${where}: slots must be a mapping`];
  const values = (v: unknown): unknown[] => (Array.isArray(v) ? v : [v]);
  for (const [key, value] of Object.entries(slots)) {
    if (value === null || (Array.isArray(value) && value.length === 0)) problems.push(`${where}: slot ${key} is empty`);
    for (const v of values(value)) {
      if (key === 'name' && !FREE_NAME_INTENTS.has(raw.name) && !home.names.has(lower(v))) problems.push(`${where}: no entity named ${v}`);
      if (key === 'area' && !home.areas.has(lower(v))) problems.push(`${where}: no area ${v}`);
      if (key === 'floor' && !home.floors.has(lower(v))) problems.push(`${where}: no floor ${v}`);
      if (key === 'domain' && !DOMAINS.has(String(v))) problems.push(`${where}: unknown domain ${v}`);
    }
  }
  if (raw.context !== undefined) {
    if (!isRecord(raw.context)) problems.push(`${where}: context must be a mapping`);
    else if (raw.context.area !== undefined && !home.areas.has(lower(raw.context.area))) {
      problems.push(`${where}: context area ${raw.context.area} is not in the home`);
    }
  }
  return problems;
}

/** Checks `intent:` xor `intents:` of a test item or conversation step; returns its category. */
function checkExpectation(item: Record<string, unknown>, home: Home, where: string, problems: string[]): Category {
  const hasIntent = item.intent !== undefined;
  const hasIntents = item.intents !== undefined;
  if (hasIntent === hasIntents) {
    problems.push(`${where}: needs exactly one of intent and intents`);
    return 'single';
  }
  if (hasIntents) {
    if (!Array.isArray(item.intents) || item.intents.length < 2) problems.push(`${where}: intents must list at least two intents`);
    else {
      item.intents.forEach((i, n) => {
        problems.push(...checkIntent(i, home, `${where}.intents[${n}]`));
      });
    }
    if (Array.isArray(item.intents) && item.intents.some((i) => i === 'none' || i === 'ask')) {
      problems.push(`${where}: intents lists only real intents`);
    }
    return 'compound';
  }
  problems.push(...checkIntent(item.intent, home, where));
  return item.intent === 'none' ? 'none' : item.intent === 'ask' ? 'ask' : 'single';
}

interface LanguageReport {
  problems: string[];
  counts: Record<Category, number>;
  total: number;
  sentences: string[];
}

function checkLanguage(folder: string, language: string): LanguageReport {
  const dir = join(ROOT, folder);
  const home = readHome(dir, language);
  const problems: string[] = [];
  const counts: Record<Category, number> = { single: 0, none: 0, ask: 0, compound: 0, conversation: 0 };
  const sentences: string[] = [];
  const files = readdirSync(dir)
    .filter((n) => n.endsWith('.yaml') && !n.startsWith('_'))
    .sort();
  for (const file of files) {
    const doc: unknown = parse(readFileSync(join(dir, file), 'utf8'));
    if (!isRecord(doc) || doc.language !== language || !Array.isArray(doc.tests)) {
      problems.push(`${file}: must have language ${language} and a tests list`);
      continue;
    }
    doc.tests.forEach((item: unknown, index) => {
      const where = `${folder}/${file} tests[${index}]`;
      if (!isRecord(item)) {
        problems.push(`${where}: must be a mapping`);
        return;
      }
      if ((item.sentences === undefined) === (item.conversation === undefined)) {
        problems.push(`${where}: needs exactly one of sentences and conversation`);
        return;
      }
      if (item.sentences !== undefined) {
        const list = item.sentences;
        if (!Array.isArray(list) || list.length === 0 || !list.every((s) => typeof s === 'string' && s.trim() !== '')) {
          problems.push(`${where}: sentences must be a non-empty list of strings`);
          return;
        }
        const category = checkExpectation(item, home, where, problems);
        counts[category] += list.length;
        sentences.push(...list);
        return;
      }
      const steps = item.conversation;
      if (!Array.isArray(steps) || steps.length < 2) {
        problems.push(`${where}: conversation must have at least two steps`);
        return;
      }
      steps.forEach((step: unknown, n) => {
        const at = `${where}.conversation[${n}]`;
        if (!isRecord(step) || typeof step.sentence !== 'string' || step.sentence.trim() === '') {
          problems.push(`${at}: step needs a sentence`);
          return;
        }
        checkExpectation(step, home, at, problems);
        counts.conversation += 1;
        sentences.push(step.sentence);
      });
    });
  }
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  return { problems, counts, total, sentences };
}

for (const [folder, language] of Object.entries(LANGUAGES)) {
  t.test(`held-out ${folder} set is well formed`, async (t) => {
    const report = checkLanguage(folder, language);
    t.same(report.problems, [], 'no shape or slot problems');
    t.ok(report.total >= MIN_SENTENCES, `${report.total} sentences (at least ${MIN_SENTENCES})`);
    const seen = new Set<string>();
    const repeated = report.sentences.filter((s) => {
      const key = lower(s);
      if (seen.has(key)) return true;
      seen.add(key);
      return false;
    });
    t.same(repeated, [], 'no sentence appears twice');
    for (const category of ['none', 'ask', 'compound', 'conversation'] as const) {
      t.ok(report.counts[category] > 0, `has ${category} tests`);
    }
    t.comment(`${folder}: ${report.total} sentences ${JSON.stringify(report.counts)}`);
  });
}

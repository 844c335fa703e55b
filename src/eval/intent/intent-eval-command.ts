/**
 * `homeagent intent-eval --tests <dir> [--tests <dir> ...] [--sets a,b] [--fixtures <_fixtures.yaml>]
 * [--noise 0,0.05] [--seed N] [--json] [--failures N]`: runs the local intent engine over folders
 * of intent tests (Home Assistant's format plus issue 26's none/ask/compound/conversation items,
 * read in place) with each folder's fixture home, and prints per set the per-intent accuracy, the
 * wrong-action and refusal rates, and the accuracy at each character-noise level. It measures our
 * own sentence files; nothing of the test data becomes a template.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
import type { IntentSentences } from '../../intent/intent-sentences.js';
import { type IntentHome, IntentRecognizer } from '../../intent/recognizer.js';
import { ALL_SENTENCES } from '../../intent/sentences/index.js';
import { describeError, HomeAgentError } from '../../shared/errors.js';
import { EXIT_CODES } from '../../shared/exit-codes.js';
import { effectHome } from './intent-effect.js';
import { emptyScore, formatReport, type IntentScore, mergeScore, type Recognise, scoreIntents } from './intent-score.js';
import { type IntentCase, type IntentFixtures, loadIntentTests, parseFixtures, type TestFileEntity } from './intent-tests.js';
import { addNoise } from './noise.js';

export const INTENT_EVAL_USAGE =
  'usage: homeagent intent-eval --tests DIR [--tests DIR ...] [--sets DIR,DIR] [--fixtures FILE] [--noise 0,0.05] [--seed N] [--json] [--failures N]';

/** The fixture home in the recogniser's terms: area ids become names, the domain comes from the entity id. */
export function homeFromFixtures(fixtures: IntentFixtures): IntentHome {
  const areaNames = new Map(fixtures.areas.map((a) => [a.id, a.name]));
  const floorNames = new Map(fixtures.floors.map((f) => [f.id, f.name]));
  const aliases = (item: { aliases?: string[] }) => (item.aliases === undefined ? {} : { aliases: item.aliases });
  return {
    floors: fixtures.floors.map((f) => ({ name: f.name, ...aliases(f) })),
    areas: fixtures.areas.map((a) => {
      const floor = a.floor === undefined ? undefined : floorNames.get(a.floor);
      return floor === undefined ? { name: a.name, ...aliases(a) } : { name: a.name, floor, ...aliases(a) };
    }),
    entities: fixtures.entities.map((e) => {
      const domain = e.id.split('.')[0] ?? '';
      const area = e.area === undefined ? undefined : areaNames.get(e.area);
      const deviceClass = e.attributes?.device_class;
      const modes = e.attributes?.supported_color_modes;
      return {
        name: e.name,
        ...aliases(e),
        domain,
        ...(area === undefined ? {} : { area }),
        ...(typeof deviceClass === 'string' ? { device_class: deviceClass } : {}),
        ...(Array.isArray(modes) && modes.every((m) => typeof m === 'string') ? { color_modes: modes as string[] } : {}),
      };
    }),
  };
}

/** The fixture home plus the devices one test file declares for itself (no area: they are said by name). */
export function homeWithExtras(home: IntentHome, extras: readonly TestFileEntity[]): IntentHome {
  if (extras.length === 0) return home;
  return { ...home, entities: [...home.entities, ...extras.map((e) => ({ name: e.name, domain: e.domain }))] };
}

const extrasKey = (c: IntentCase): string => JSON.stringify(c.extra_entities ?? []);

/**
 * Scores the cases with a recogniser whose home holds the fixtures plus each case's own file
 * entities. Cases are scored in runs of the same entity set, in their order, so the merged
 * failures keep the file order; one recogniser is compiled per distinct set (a handful of files).
 */
export function scoreWithFileEntities(
  cases: readonly IntentCase[],
  recogniserFor: (extras: readonly TestFileEntity[]) => Recognise,
  /** The home each recogniser was built on; given, answers are scored by effect (intent-effect.ts). */
  homeFor?: (extras: readonly TestFileEntity[]) => IntentHome,
): IntentScore {
  const recognisers = new Map<string, Recognise>();
  const merged = emptyScore();
  let start = 0;
  while (start < cases.length) {
    const key = extrasKey(cases[start] as IntentCase);
    let end = start + 1;
    while (end < cases.length && extrasKey(cases[end] as IntentCase) === key) end += 1;
    const extras = (cases[start] as IntentCase).extra_entities ?? [];
    let recognise = recognisers.get(key);
    if (recognise === undefined) {
      recognise = recogniserFor(extras);
      recognisers.set(key, recognise);
    }
    const home = homeFor === undefined ? undefined : effectHome(homeFor(extras));
    mergeScore(merged, scoreIntents(cases.slice(start, end), recognise, home));
    start = end;
  }
  return merged;
}

function readFixtures(file: string): IntentFixtures {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (cause) {
    throw new HomeAgentError('HA_ERR_EVAL_DATA', `${file}: cannot be read`, { cause, details: { file } });
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (cause) {
    throw new HomeAgentError('HA_ERR_EVAL_DATA', `${file}: not valid YAML`, { cause, details: { file } });
  }
  return parseFixtures(doc, file);
}

export interface IntentEvalOptions {
  sentences?: readonly IntentSentences[];
  /** The engine under test for one home; the template recogniser with conversations by default. */
  engineFor?: (home: IntentHome, sentences: readonly IntentSentences[]) => Recognise;
  /** Where the report and the errors go; the process streams by default (tests capture them). */
  stdout?: (text: string) => void;
  stderr?: (text: string) => void;
}

/** One set's figures at one noise level (level 0 is the clean text). */
export interface NoiseResult {
  level: number;
  accuracy: number;
  wrong_action_rate: number;
  refusal_rate: number;
}

export interface SetReport {
  /** The folder as given. */
  set: string;
  language: string;
  files: number;
  score: IntentScore;
  /** Present when --noise was given: one entry per level, in the order given. */
  noise?: NoiseResult[];
}

function templateEngine(home: IntentHome, sentences: readonly IntentSentences[]): Recognise {
  const recognizer = new IntentRecognizer(sentences, home);
  return (sentence, language, context) =>
    recognizer.recognise(sentence, language, context.area === undefined ? {} : { area: context.area });
}

/** Exit 0 with the report printed, 64 on bad arguments, 65 when the data cannot be read or scored. */
export async function runIntentEvalCommand(argv: string[], options: IntentEvalOptions = {}): Promise<number> {
  const sentences = options.sentences ?? ALL_SENTENCES;
  const templatesOnly = argv.includes('--templates-only');
  const engineFor = options.engineFor ?? (templatesOnly ? templateEngine : await defaultEngine());
  const stdout = options.stdout ?? ((text: string) => process.stdout.write(text));
  const stderr = options.stderr ?? ((text: string) => process.stderr.write(text));
  let values: ReturnType<typeof parse>['values'];
  let dirs: string[];
  let levels: number[] | undefined;
  let seed: number;
  try {
    values = parse(argv).values;
    dirs = [...(values.tests ?? []), ...(values.sets ?? []).flatMap((list) => list.split(',')).map((d) => d.trim())].filter(
      (d) => d !== '',
    );
    if (dirs.length === 0) throw new Error('--tests DIR is required (or --sets DIR,DIR)');
    if (values.failures !== undefined && !/^\d+$/u.test(values.failures)) throw new Error('--failures is a count');
    levels = values.noise === undefined ? undefined : parseLevels(values.noise);
    if (values.seed !== undefined && !/^\d+$/u.test(values.seed)) throw new Error('--seed is a whole number');
    seed = Number(values.seed ?? 1);
  } catch (error) {
    stderr(`homeagent intent-eval: ${describeError(error)}\n${INTENT_EVAL_USAGE}\n`);
    return EXIT_CODES.USAGE;
  }
  try {
    const reports: SetReport[] = [];
    for (const dir of dirs) {
      const set = loadIntentTests(dir);
      const fixtures = values.fixtures ? readFixtures(values.fixtures) : set.fixtures;
      const home = homeFromFixtures(fixtures);
      // One engine per entity set, shared by the noise levels (each level has its own conversations).
      const engines = new Map<string, Recognise>();
      const engine = (extras: readonly TestFileEntity[]): Recognise => {
        const key = JSON.stringify(extras);
        let found = engines.get(key);
        if (found === undefined) {
          found = engineFor(homeWithExtras(home, extras), sentences);
          engines.set(key, found);
        }
        return found;
      };
      const homeFor = (extras: readonly TestFileEntity[]) => homeWithExtras(home, extras);
      const score = scoreWithFileEntities(set.cases, engine, homeFor);
      const report: SetReport = { set: dir, language: set.language, files: set.files.length, score };
      if (levels !== undefined) {
        report.noise = levels.map((level) => {
          const noisy = level === 0 ? score : scoreWithFileEntities(noisyCases(set.cases, level, seed), engine, homeFor);
          return { level, accuracy: noisy.accuracy, wrong_action_rate: noisy.wrong_action_rate, refusal_rate: noisy.refusal_rate };
        });
      }
      reports.push(report);
    }
    if (values.json) {
      stdout(`${JSON.stringify(reports.length === 1 && !values.sets ? (reports[0] as SetReport).score : { sets: reports }, null, 2)}\n`);
    } else {
      stdout(`${reports.map((r) => formatSet(r, Number(values.failures ?? 0))).join('\n\n')}\n`);
      if (reports.length > 1) stdout(`\n${formatSummary(reports)}\n`);
    }
    return EXIT_CODES.OK;
  } catch (error) {
    stderr(`homeagent intent-eval: ${describeError(error)}\n`);
    return EXIT_CODES.DATA_ERROR;
  }
}

/**
 * The engine the daemon runs (templates, composition, conversations), judged as the daemon's
 * intent stage judges it: a reading less sure than core.intent.min_confidence is not carried out
 * but put to the person or the model as a guess ("did you mean …?"), so it scores as a question
 * back, not as an action. Loaded lazily to keep the CLI quick.
 */
async function defaultEngine(): Promise<NonNullable<IntentEvalOptions['engineFor']>> {
  const { IntentUnderstander } = await import('../../intent/understander.js');
  const { defaultConfig } = await import('../../config/loader.js');
  const threshold = defaultConfig().core.intent.min_confidence;
  return (home, sentences) => {
    const engine = new IntentUnderstander(sentences, home);
    return (sentence, language, context) => {
      const got = engine.understand(sentence, language, {
        ...(context.area !== undefined && { area: context.area }),
        ...(context.conversation !== undefined && { conversation: context.conversation }),
      });
      if (got.kind === 'intents') {
        const sure = Math.min(got.confidence, ...got.intents.map((i) => i.confidence)) >= threshold;
        return sure ? { kind: 'intents', intents: got.intents } : { kind: 'ask' };
      }
      return got.kind === 'ask' ? { kind: 'ask' } : { kind: 'none' };
    };
  };
}

/** The template recogniser alone, for comparing with the whole engine (`--templates-only`). */
export const TEMPLATE_ENGINE = templateEngine;

function parseLevels(text: string): number[] {
  const levels = text.split(',').map((part) => Number(part.trim()));
  if (levels.length === 0 || levels.some((l) => !Number.isFinite(l) || l < 0 || l > 1)) {
    throw new Error('--noise is a comma-separated list of rates between 0 and 1');
  }
  return levels;
}

/** The cases with seeded noise in their sentences; conversations are kept apart per level. */
function noisyCases(cases: readonly IntentCase[], level: number, seed: number): IntentCase[] {
  return cases.map((c) => ({
    ...c,
    sentence: addNoise(c.sentence, level, seed),
    ...(c.conversation && { conversation: { id: `${level}:${c.conversation.id}`, step: c.conversation.step } }),
  }));
}

const pct = (rate: number) => `${(100 * rate).toFixed(1)}%`;

function formatSet(report: SetReport, failures: number): string {
  const lines = [formatReport(report.score, `intent recognition ${report.set} (${report.language}, ${report.files} files)`)];
  if (report.noise !== undefined) {
    lines.push(`noise  ${report.noise.map((n) => `${n.level}: ${pct(n.accuracy)} (wrong ${pct(n.wrong_action_rate)})`).join('  ')}`);
  }
  for (const f of report.score.failures.slice(0, failures)) {
    const wanted = f.expect.kind === 'intents' ? f.expect.intents : f.expect.kind;
    lines.push(
      `${f.wrong_action ? 'WRONG' : 'FAIL'} ${f.file}: "${f.sentence}" expected ${JSON.stringify(wanted)} got ${JSON.stringify(f.got)}`,
    );
  }
  return lines.join('\n');
}

/** One line per set: the figures the goals are stated in. */
function formatSummary(reports: readonly SetReport[]): string {
  const width = Math.max(3, ...reports.map((r) => r.set.length));
  const levels = reports[0]?.noise?.map((n) => n.level) ?? [];
  const head = `${'set'.padEnd(width)}  ${'n'.padStart(5)}  accuracy  wrong  refused${levels.map((l) => `  noise ${l}`).join('')}`;
  const rows = reports.map((r) => {
    const s = r.score;
    const noise = (r.noise ?? []).map((n) => `  ${pct(n.accuracy).padStart(6 + String(n.level).length)}`).join('');
    return `${r.set.padEnd(width)}  ${String(s.total).padStart(5)}  ${pct(s.accuracy).padStart(8)}  ${pct(s.wrong_action_rate).padStart(5)}  ${pct(s.refusal_rate).padStart(7)}${noise}`;
  });
  return [head, ...rows].join('\n');
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    options: {
      tests: { type: 'string', multiple: true },
      sets: { type: 'string', multiple: true },
      fixtures: { type: 'string' },
      noise: { type: 'string' },
      seed: { type: 'string' },
      json: { type: 'boolean' },
      'templates-only': { type: 'boolean' },
      failures: { type: 'string' },
    },
    allowPositionals: false,
  });
}

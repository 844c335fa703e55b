/**
 * `homeagent intent-eval --tests <dir> [--fixtures <_fixtures.yaml>] [--json] [--failures N]`:
 * runs the local intent recogniser over one language folder of Home Assistant's intent tests
 * (read in place) with the folder's fixture home, and prints the per-intent accuracy. It measures
 * our own sentence files; nothing of the test data becomes a template.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { describeError, HomeAgentError } from '../../shared/errors.js';
import { EXIT_CODES } from '../../shared/exit-codes.js';
import type { IntentSentences } from '../intent-sentences.js';
import { type IntentHome, IntentRecognizer } from '../recognizer.js';
import { ALL_SENTENCES } from '../sentences/index.js';
import { formatReport, type IntentScore, type Recognise, scoreIntents } from './intent-score.js';
import { type IntentCase, type IntentFixtures, loadIntentTests, parseFixtures, type TestFileEntity } from './intent-tests.js';

export const INTENT_EVAL_USAGE = 'usage: homeagent intent-eval --tests DIR [--fixtures FILE] [--json] [--failures N]';

/** The fixture home in the recogniser's terms: area ids become names, the domain comes from the entity id. */
export function homeFromFixtures(fixtures: IntentFixtures): IntentHome {
  const areaNames = new Map(fixtures.areas.map((a) => [a.id, a.name]));
  const floorNames = new Map(fixtures.floors.map((f) => [f.id, f.name]));
  return {
    floors: fixtures.floors.map((f) => ({ name: f.name })),
    areas: fixtures.areas.map((a) => {
      const floor = a.floor === undefined ? undefined : floorNames.get(a.floor);
      return floor === undefined ? { name: a.name } : { name: a.name, floor };
    }),
    entities: fixtures.entities.map((e) => {
      const domain = e.id.split('.')[0] ?? '';
      const area = e.area === undefined ? undefined : areaNames.get(e.area);
      const deviceClass = e.attributes?.device_class;
      return {
        name: e.name,
        ...(e.aliases === undefined ? {} : { aliases: e.aliases }),
        domain,
        ...(area === undefined ? {} : { area }),
        ...(typeof deviceClass === 'string' ? { device_class: deviceClass } : {}),
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
): IntentScore {
  const recognisers = new Map<string, Recognise>();
  const merged: IntentScore = { total: 0, correct: 0, accuracy: 0, per_intent: {}, failures: [] };
  let start = 0;
  while (start < cases.length) {
    const key = extrasKey(cases[start] as IntentCase);
    let end = start + 1;
    while (end < cases.length && extrasKey(cases[end] as IntentCase) === key) end += 1;
    let recognise = recognisers.get(key);
    if (recognise === undefined) {
      recognise = recogniserFor((cases[start] as IntentCase).extra_entities ?? []);
      recognisers.set(key, recognise);
    }
    const part = scoreIntents(cases.slice(start, end), recognise);
    merged.total += part.total;
    merged.correct += part.correct;
    merged.failures.push(...part.failures);
    for (const [intent, counts] of Object.entries(part.per_intent)) {
      const bucket = merged.per_intent[intent] ?? { total: 0, correct: 0 };
      bucket.total += counts.total;
      bucket.correct += counts.correct;
      merged.per_intent[intent] = bucket;
    }
    start = end;
  }
  merged.accuracy = merged.total === 0 ? 0 : merged.correct / merged.total;
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
  /** Where the report and the errors go; the process streams by default (tests capture them). */
  stdout?: (text: string) => void;
  stderr?: (text: string) => void;
}

/** Exit 0 with the report printed, 64 on bad arguments, 65 when the data cannot be read or scored. */
export async function runIntentEvalCommand(argv: string[], options: IntentEvalOptions = {}): Promise<number> {
  const sentences = options.sentences ?? ALL_SENTENCES;
  const stdout = options.stdout ?? ((text: string) => process.stdout.write(text));
  const stderr = options.stderr ?? ((text: string) => process.stderr.write(text));
  let values: ReturnType<typeof parse>['values'];
  try {
    values = parse(argv).values;
    if (!values.tests) throw new Error('--tests DIR is required');
    if (values.failures !== undefined && !/^\d+$/u.test(values.failures)) throw new Error('--failures is a count');
  } catch (error) {
    stderr(`homeagent intent-eval: ${describeError(error)}\n${INTENT_EVAL_USAGE}\n`);
    return EXIT_CODES.USAGE;
  }
  try {
    const set = loadIntentTests(values.tests as string);
    const fixtures = values.fixtures ? readFixtures(values.fixtures) : set.fixtures;
    const home = homeFromFixtures(fixtures);
    const score = scoreWithFileEntities(set.cases, (extras) => {
      const recognizer = new IntentRecognizer(sentences, homeWithExtras(home, extras));
      return (sentence, language, context) =>
        recognizer.recognise(sentence, language, context.area === undefined ? {} : { area: context.area });
    });
    if (values.json) {
      stdout(`${JSON.stringify(score, null, 2)}\n`);
    } else {
      const lines = [formatReport(score, `intent recognition (${set.language}, ${set.files.length} files)`)];
      const shown = score.failures.slice(0, Number(values.failures ?? 0));
      for (const f of shown) {
        lines.push(`FAIL ${f.file}: "${f.sentence}" expected ${JSON.stringify(f.expected)} got ${JSON.stringify(f.got)}`);
      }
      stdout(`${lines.join('\n')}\n`);
    }
    return EXIT_CODES.OK;
  } catch (error) {
    stderr(`homeagent intent-eval: ${describeError(error)}\n`);
    return EXIT_CODES.DATA_ERROR;
  }
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    options: {
      tests: { type: 'string' },
      fixtures: { type: 'string' },
      json: { type: 'boolean' },
      failures: { type: 'string' },
    },
    allowPositionals: false,
  });
}

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
import { formatReport, scoreIntents } from './intent-score.js';
import { type IntentFixtures, loadIntentTests, parseFixtures } from './intent-tests.js';

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
        domain,
        ...(area === undefined ? {} : { area }),
        ...(typeof deviceClass === 'string' ? { device_class: deviceClass } : {}),
      };
    }),
  };
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
    const recognizer = new IntentRecognizer(sentences, homeFromFixtures(fixtures));
    const score = scoreIntents(set.cases, (sentence, language, context) =>
      recognizer.recognise(sentence, language, context.area === undefined ? {} : { area: context.area }),
    );
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

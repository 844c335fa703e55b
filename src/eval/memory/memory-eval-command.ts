/**
 * `homeagent memory-eval --locomo <dir> [--k 5,10] [--json] [--details] [--fusion rrf|weighted]
 * [--neighbours N] [--shared]`: ingests LoCoMo-format conversations into fresh memories through
 * the daemon's own memory code, asks the recall used for prompts, and prints recall@k, prompt
 * characters and query latency beside a plain BM25 baseline over the raw turns of the same run.
 */
import { parseArgs } from 'node:util';
import { LogManager } from '../../log/logger.js';
import { RECALL_PATHS, type RecallPath } from '../../memory/recall.js';
import { createTextAnalyzer } from '../../nlp/text-analyzer.js';
import { describeError } from '../../shared/errors.js';
import { EXIT_CODES } from '../../shared/exit-codes.js';
import { householdTable, runHouseholdEval } from './household.js';
import { reportJson, reportTable } from './report.js';
import { parseKs, runMemoryEval } from './run-memory-eval.js';
import { storeMemoryFactory } from './store-memory.js';

export const MEMORY_EVAL_USAGE = `usage: homeagent memory-eval --household DIR [--json]
       homeagent memory-eval --locomo DIR [--k 5,10] [--json] [--details]
                            [--fusion rrf|weighted] [--neighbours N] [--paths lexical,vector,symbol,graph,window]
                            [--item-chars N] [--shared]`;

export async function runMemoryEvalCommand(argv: string[]): Promise<number> {
  let values: ReturnType<typeof parse>['values'];
  try {
    values = parse(argv).values;
    if (!values.locomo && !values.household) throw new Error('--locomo DIR or --household DIR is required');
    if (values.fusion !== undefined && values.fusion !== 'rrf' && values.fusion !== 'weighted')
      throw new Error('--fusion is rrf or weighted');
  } catch (error) {
    process.stderr.write(`homeagent memory-eval: ${describeError(error)}\n${MEMORY_EVAL_USAGE}\n`);
    return EXIT_CODES.USAGE;
  }
  if (values.household) {
    try {
      const rows = await runHouseholdEval(values.household, new LogManager({ level: 'warn', levels: {} }));
      process.stdout.write(`${values.json ? rows.map((r) => JSON.stringify(r)).join('\n') : householdTable(rows)}\n`);
      return EXIT_CODES.OK;
    } catch (error) {
      process.stderr.write(`homeagent memory-eval: ${describeError(error)}\n`);
      return EXIT_CODES.DATA_ERROR;
    }
  }
  const analyzer = createTextAnalyzer();
  try {
    const neighbours = values.neighbours === undefined ? undefined : Number(values.neighbours);
    const result = await runMemoryEval({
      dir: values.locomo as string,
      ks: values.k ? parseKs(values.k) : [5, 10],
      memoryFactory: storeMemoryFactory({
        logs: new LogManager({ level: 'warn', levels: {} }),
        ...(values.fusion ? { fusion: values.fusion as 'rrf' | 'weighted' } : {}),
        ...(neighbours !== undefined && Number.isInteger(neighbours) ? { neighbours } : {}),
        ...(values['item-chars'] ? { itemChars: Number(values['item-chars']) } : {}),
        ...(values.paths ? { paths: values.paths.split(',').filter((p): p is RecallPath => (RECALL_PATHS as string[]).includes(p)) } : {}),
      }),
      memoryName: 'homeagent',
      baselineTokens: (text) => analyzer.tokens(text),
      perConversation: !values.shared,
      onProgress: (line) => {
        if (!values.json) process.stderr.write(`${line}\n`);
      },
    });
    process.stdout.write(`${values.json ? reportJson(result, { details: values.details === true }) : reportTable(result)}\n`);
    return EXIT_CODES.OK;
  } catch (error) {
    process.stderr.write(`homeagent memory-eval: ${describeError(error)}\n`);
    return EXIT_CODES.DATA_ERROR;
  }
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    options: {
      locomo: { type: 'string' },
      household: { type: 'string' },
      k: { type: 'string' },
      json: { type: 'boolean' },
      details: { type: 'boolean' },
      fusion: { type: 'string' },
      neighbours: { type: 'string' },
      shared: { type: 'boolean' },
      paths: { type: 'string' },
      'item-chars': { type: 'string' },
    },
    allowPositionals: false,
  });
}

/** The retrieval evaluation's result as JSON (for scripts) and as a table (for people). */
import { CATEGORY_NAMES, type QuestionCategory } from './locomo.js';
import type { Figures } from './metrics.js';
import type { FiguresAtK, MemoryEvalResult, RatioFigures } from './run-memory-eval.js';

export interface JsonReportOptions {
  /** Include every question with its per-k outcome (large: a few hundred entries). */
  details?: boolean;
}

/** The result as one JSON document; fractions are rounded to 4 decimals. */
export function reportJson(result: MemoryEvalResult, options: JsonReportOptions = {}): string {
  const { details, ...summary } = result;
  const body = options.details ? result : summary;
  return JSON.stringify(
    body,
    (_key, value: unknown) => (typeof value === 'number' && !Number.isInteger(value) ? round(value, 4) : value),
    2,
  );
}

/** How many data warnings the table lists before referring to the JSON. */
const WARNINGS_SHOWN = 5;

/** A readable summary: one block per k, one row per category and overall, memory beside the baseline. */
export function reportTable(result: MemoryEvalResult): string {
  const m = result.memory;
  const b = result.baseline;
  const turns = result.conversations.reduce((total, c) => total + c.turns, 0);
  const adversarial = result.conversations.reduce((total, c) => total + c.skipped.adversarial, 0);
  const noEvidence = result.conversations.reduce((total, c) => total + c.skipped.no_evidence, 0);
  const lines = [
    `LoCoMo retrieval: ${plural(result.conversations.length, 'conversation')}, ${plural(turns, 'turn')}, ` +
      `${plural(result.questions, 'question')} of categories 1–4 ` +
      `(skipped: ${adversarial} adversarial, ${noEvidence} without evidence); ` +
      (result.per_conversation ? 'each conversation in a fresh memory' : 'all conversations in one memory'),
    ...[m, b].map(
      (s) =>
        `${s.name}: ingested ${plural(s.ingest.events, 'turn')} in ${formatMs(s.ingest.ms)} ms, settled in ${formatMs(s.settle_ms)} ms`,
    ),
    '',
  ];
  const header = [
    'k',
    'category',
    'n',
    `recall ${m.name}`,
    b.name,
    '×',
    `chars ${m.name}`,
    b.name,
    '×',
    `p50 ms ${m.name}`,
    b.name,
    `p95 ms ${m.name}`,
    b.name,
  ];
  const rows: string[][] = [];
  for (const k of result.ks) {
    const key = String(k);
    const mk = m.by_k[key] as FiguresAtK;
    const bk = b.by_k[key] as FiguresAtK;
    const rk = result.ratio[key];
    for (const category of Object.keys(mk.by_category)) {
      const name = CATEGORY_NAMES[Number(category) as QuestionCategory] ?? '';
      rows.push(row(key, `${category} ${name}`, mk.by_category[category], bk.by_category[category], rk?.by_category[category]));
    }
    rows.push(row(key, 'all', mk.overall, bk.overall, rk?.overall));
  }
  lines.push(...table(header, rows), '', `× = ${m.name} ÷ ${b.name}; chars = mean characters the k items put into a prompt`);
  if (result.warnings.length > 0) {
    lines.push('', `${plural(result.warnings.length, 'data warning')}:`);
    for (const warning of result.warnings.slice(0, WARNINGS_SHOWN)) lines.push(`  ${warning}`);
    if (result.warnings.length > WARNINGS_SHOWN) lines.push(`  … ${result.warnings.length - WARNINGS_SHOWN} more in the JSON output`);
  }
  return `${lines.join('\n')}\n`;
}

function row(
  k: string,
  label: string,
  memory: Figures | undefined,
  baseline: Figures | undefined,
  ratio: RatioFigures | undefined,
): string[] {
  const cell = (figures: Figures | undefined, pick: (f: Figures) => string) => (figures === undefined ? '—' : pick(figures));
  return [
    k,
    label,
    String(memory?.questions ?? baseline?.questions ?? 0),
    cell(memory, (f) => f.recall.toFixed(3)),
    cell(baseline, (f) => f.recall.toFixed(3)),
    formatRatio(ratio?.recall),
    cell(memory, (f) => Math.round(f.mean_chars).toString()),
    cell(baseline, (f) => Math.round(f.mean_chars).toString()),
    formatRatio(ratio?.mean_chars),
    cell(memory, (f) => formatMs(f.p50_ms)),
    cell(baseline, (f) => formatMs(f.p50_ms)),
    cell(memory, (f) => formatMs(f.p95_ms)),
    cell(baseline, (f) => formatMs(f.p95_ms)),
  ];
}

/** Columns padded to their widest cell; the category column is left-aligned, numbers right. */
function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((r) => (r[column] ?? '').length)));
  const render = (cells: string[]) =>
    cells
      .map((cell, column) => (column === 1 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0)))
      .join('  ')
      .trimEnd();
  return [render(header), ...rows.map(render)];
}

function formatRatio(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : `${value.toFixed(2)}`;
}

function formatMs(ms: number): string {
  return ms >= 100 ? Math.round(ms).toString() : ms.toFixed(2);
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function round(value: number, decimals: number): number {
  const scale = 10 ** decimals;
  return Math.round(value * scale) / scale;
}

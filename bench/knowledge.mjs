// Knowledge library, on the generated household library of test/fixtures/knowledge (hand-written
// target entries among generated ones, Chinese and English, hash embedder on jieba tokens):
// knowledge_reindex_entries_per_s: a full reindex from the files (empty index, 5,000 content.md
// files: read, analyse, embed, write), as after deleting knowledge.db or a first start.
// knowledge_reindex_unchanged_ms: a reindex when nothing changed (the scan a file-watch event costs).
// knowledge_search_ms / knowledge_search_lexical_ms: search at 5,000 entries (goal p95 <= 20 ms).
// knowledge_eval_mrr_lexical / _vector / _hybrid: MRR@10 of the evaluation queries on the 1,000-entry
// library (the figure test/unit/eval/knowledge/knowledge-eval.test.ts checks: hybrid >= lexical).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildLibrary, writeLibrary } from '../test/fixtures/knowledge/library.mjs';
import { size } from './quick.mjs';

const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'src');
const load = (path) => import(join(dist, path));

const ENTRIES = size(5000, 200);
const EVAL_ENTRIES = size(1000, 100);
const ROUNDS = size(4, 1);
const WARMUP = size(30, 2);

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const round = (x, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;

async function modules() {
  const { KnowledgeService } = await load('knowledge/knowledge-service.js');
  const { ManagedDatabase } = await load('store/database.js');
  const { LogManager } = await load('log/logger.js');
  const { systemClock } = await load('shared/clock.js');
  const { defaultConfig } = await load('config/loader.js');
  const { createTextAnalyzer } = await load('nlp/text-analyzer.js');
  const { HashEmbedder } = await load('embed/hash-embedder.js');
  const evaluation = await load('eval/knowledge/knowledge-eval.js');
  return { KnowledgeService, ManagedDatabase, LogManager, systemClock, defaultConfig, createTextAnalyzer, HashEmbedder, evaluation };
}

/** A library written to disk and opened as the daemon opens it; resolves after the first reindex. */
async function openLibrary(m, entries) {
  const dir = mkdtempSync(join(tmpdir(), 'ha-bench-knowledge-'));
  writeLibrary(join(dir, 'knowledge'), entries);
  const log = new m.LogManager({ level: 'silent', levels: {} }).child('knowledge');
  const managed = m.ManagedDatabase.open(
    { name: 'knowledge', file: join(dir, 'knowledge.db'), synchronous: 'NORMAL' },
    { busyTimeoutMs: 5000, startupCheck: 'off', log, clock: m.systemClock },
  );
  const analyzer = m.createTextAnalyzer();
  const embedder = new m.HashEmbedder({ tokens: (text) => analyzer.tokens(text) });
  const settings = { ...m.defaultConfig().core.knowledge, watch: false };
  const kb = new m.KnowledgeService({
    database: () => managed,
    dataDir: dir,
    analyzer,
    embedder,
    settings: () => settings,
    clock: m.systemClock,
    log,
  });
  const first = kb.nextReindex();
  const started = performance.now();
  await kb.start(new AbortController().signal);
  const summary = await first;
  await kb.whenIdle();
  const wallMs = performance.now() - started;
  return {
    kb,
    summary,
    wallMs,
    async close() {
      await kb.stop();
      await embedder.close();
      managed.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function timeSearches(kb, queries, options) {
  for (const q of queries.slice(0, WARMUP)) await kb.search(q.query, options);
  const times = [];
  for (let r = 0; r < ROUNDS; r++) {
    for (const q of queries) {
      const started = performance.now();
      await kb.search(q.query, options);
      times.push(performance.now() - started);
    }
  }
  return times.sort((a, b) => a - b);
}

export async function run(emit) {
  const m = await modules();

  const big = buildLibrary({ size: ENTRIES });
  const library = await openLibrary(m, big.entries);
  try {
    const { summary, wallMs, kb } = library;
    emit({
      name: 'knowledge_reindex_entries_per_s',
      unit: 'entries/s',
      value: Math.round(summary.indexed / (summary.ms / 1000)),
      n: summary.indexed,
      reindex_ms: round(summary.ms, 1),
      start_to_idle_ms: round(wallMs, 1),
      what: `full reindex from ${ENTRIES} content.md files into an empty knowledge.db (read, jieba tokens, FTS5, hash-embedder vectors), at start`,
    });
    const unchanged = await kb.reindex();
    emit({
      name: 'knowledge_reindex_unchanged_ms',
      unit: 'ms',
      value: round(unchanged.ms, 1),
      n: ENTRIES,
      indexed: unchanged.indexed,
      what: `reindex when no file changed (walk and compare signatures of ${ENTRIES} entries)`,
    });
    for (const [name, options, label] of [
      ['knowledge_search_ms', {}, 'hybrid (both paths, default top_k 5)'],
      ['knowledge_search_lexical_ms', { paths: ['lexical'] }, 'lexical path only (top_k 5)'],
    ]) {
      const times = await timeSearches(kb, big.queries, options);
      emit({
        name,
        unit: 'ms',
        value: round(percentile(times, 95)),
        p50: round(percentile(times, 50)),
        p95: round(percentile(times, 95)),
        n: times.length,
        what: `KnowledgeService.search, ${label}, over ${ENTRIES} entries; the ${big.queries.length} evaluation queries (Chinese and English) x ${ROUNDS}; value is p95`,
        goal: 'p95 <= 20',
        goal_met: percentile(times, 95) <= 20,
      });
    }
  } finally {
    await library.close();
  }

  const small = buildLibrary({ size: EVAL_ENTRIES });
  const evalLibrary = await openLibrary(m, small.entries);
  try {
    const { evaluateKnowledge, evaluatePaths } = m.evaluation;
    const result = await evaluateKnowledge(evalLibrary.kb, small.queries);
    const vector = await evaluatePaths(evalLibrary.kb, small.queries, ['vector']);
    const groups = (run) => Object.fromEntries(Object.entries(run.groups).map(([key, f]) => [key, round(f.mrr)]));
    for (const [path, figures] of [
      ['lexical', result.lexical],
      ['vector', vector],
      ['hybrid', result.hybrid],
    ]) {
      emit({
        name: `knowledge_eval_mrr_${path}`,
        unit: 'mrr@10',
        value: round(figures.overall.mrr),
        recall_at_5: round(figures.overall.recall),
        hit_at_1: round(figures.overall.hit_at_1),
        by_group: groups(figures),
        n: figures.overall.queries,
        what: `${path === 'hybrid' ? 'default search (both paths fused)' : `${path} path only`} on the ${EVAL_ENTRIES}-entry evaluation library (test/fixtures/knowledge)`,
        ...(path === 'hybrid' && {
          goal: 'hybrid >= lexical',
          goal_met: result.hybrid.overall.mrr >= result.lexical.overall.mrr,
          lexical: round(result.lexical.overall.mrr),
        }),
      });
    }
  } finally {
    await evalLibrary.close();
  }
}

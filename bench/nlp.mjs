// Text analysis. nlp_jieba_load_ms / nlp_jieba_rss_mb: what the first Chinese call costs, measured
// in a fresh process (jieba loads lazily: the segmenter on the first tokens()/tag()/extract(),
// the TF-IDF table on the first keywords()). nlp_extract_sentences_per_s: extract() over the
// golden household sentences (Chinese and English, Parse → Extract → Verify with the rule parser).
// nlp_tokens_per_s: tokens() over the same mixed sentences.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { size } from './quick.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const analyzerModule = join(root, 'dist', 'src', 'nlp', 'text-analyzer.js');
const runtimeModule = join(root, 'dist', 'src', 'nlp', 'jieba-runtime.js');
const fixtures = join(root, 'test', 'unit', 'nlp', 'fixtures');

const ROUNDS = size(40, 1);
const WARMUP_ROUNDS = size(3, 1);
const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
const mb = (bytes) => round(bytes / 1024 / 1024);

function sentences() {
  const out = [];
  for (const file of ['zh-golden.json', 'en-golden.json', 'zh-holdout.json', 'en-holdout.json']) {
    for (const c of JSON.parse(readFileSync(join(fixtures, file), 'utf8')).cases) out.push(c.text);
  }
  return out;
}

/** Load cost in a process that has loaded nothing else, so the RSS growth is jieba's. */
function measureLoad() {
  const script = `
    const { createTextAnalyzer } = await import(${JSON.stringify(analyzerModule)});
    const { jiebaLoadStats } = await import(${JSON.stringify(runtimeModule)});
    const before = process.memoryUsage.rss();
    const analyzer = createTextAnalyzer();
    analyzer.sentences('我住在杭州。');
    const idle = process.memoryUsage.rss();
    analyzer.tokens('我住在杭州');
    analyzer.keywords('我住在杭州', 3);
    const after = process.memoryUsage.rss();
    process.stdout.write(JSON.stringify({ before, idle, after, stats: jiebaLoadStats() }));
  `;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  if (child.status !== 0) throw new Error(`load probe failed: ${child.stderr}`);
  return JSON.parse(child.stdout);
}

export async function run(emit) {
  const load = measureLoad();
  emit({
    name: 'nlp_jieba_load_ms',
    unit: 'ms',
    value: Math.round(load.stats.segmenterLoadMs + load.stats.tfidfLoadMs),
    segmenter_ms: Math.round(load.stats.segmenterLoadMs),
    tfidf_ms: Math.round(load.stats.tfidfLoadMs),
    n: 1,
    what: 'first tokens() plus first keywords() in a fresh process: Jieba.withDict + household dictionary, then TfIdf.withDict',
  });
  emit({
    name: 'nlp_jieba_rss_mb',
    unit: 'MB',
    value: mb(load.after - load.idle),
    segmenter_mb: mb(load.stats.segmenterRssBytes),
    tfidf_mb: mb(load.stats.tfidfRssBytes),
    before_any_call_mb: mb(load.before),
    after_sentences_mb: mb(load.idle),
    n: 1,
    what: 'RSS growth from loading jieba (segmenter + TF-IDF table); createTextAnalyzer() and sentences() load nothing',
  });

  const { createTextAnalyzer } = await import(analyzerModule);
  const analyzer = createTextAnalyzer();
  const texts = sentences();
  let triples = 0;
  for (let r = 0; r < WARMUP_ROUNDS; r++) for (const text of texts) analyzer.extract(text);
  let started = performance.now();
  for (let r = 0; r < ROUNDS; r++) for (const text of texts) triples += analyzer.extract(text).length;
  let seconds = (performance.now() - started) / 1000;
  emit({
    name: 'nlp_extract_sentences_per_s',
    unit: 'sentences/s',
    value: Math.round((ROUNDS * texts.length) / seconds),
    n: ROUNDS * texts.length,
    triples_per_round: triples / ROUNDS,
    what: `extract() over ${texts.length} golden household sentences (zh and en), rule parser, ${ROUNDS} rounds`,
  });

  let tokens = 0;
  const chars = texts.reduce((sum, t) => sum + t.length, 0);
  started = performance.now();
  for (let r = 0; r < ROUNDS; r++) for (const text of texts) tokens += analyzer.tokens(text).length;
  seconds = (performance.now() - started) / 1000;
  emit({
    name: 'nlp_tokens_per_s',
    unit: 'sentences/s',
    value: Math.round((ROUNDS * texts.length) / seconds),
    n: ROUNDS * texts.length,
    chars_per_s: Math.round((ROUNDS * chars) / seconds),
    tokens_per_round: tokens / ROUNDS,
    what: `tokens() over the same ${texts.length} sentences: jieba search-mode cut for Chinese, stems for English`,
  });
}

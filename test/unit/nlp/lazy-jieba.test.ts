/**
 * jieba costs tens of MB of RSS, so nothing may load it until Chinese text is actually segmented:
 * not importing the module, not creating an analyzer, not splitting sentences.
 */
import { createRequire } from 'node:module';
import t from 'tap';
import { jiebaLoadStats } from '../../../src/nlp/jieba-runtime.js';
import { createTextAnalyzer } from '../../../src/nlp/text-analyzer.js';

const loadedModules = (): string[] => Object.keys(createRequire(import.meta.url).cache).filter((path) => path.includes('@node-rs'));

t.test('jieba loads on first segmentation, the IDF table on first keywords, each once', async (t) => {
  const analyzer = createTextAnalyzer();
  t.same(analyzer.sentences('我住在杭州。我喜欢喝茶！'), ['我住在杭州。', '我喜欢喝茶！']);
  t.same(loadedModules(), [], 'importing, creating an analyzer and splitting sentences load no jieba module');
  t.equal(jiebaLoadStats().segmenterLoaded, false);

  t.same(analyzer.tokens('智能家居'), ['智能', '家居', '智能家居']);
  const first = jiebaLoadStats();
  t.equal(first.segmenterLoaded, true, 'tokens() loaded the segmenter');
  t.equal(first.tfidfLoaded, false, 'but not the IDF table');
  t.ok(first.segmenterLoadMs > 0, 'load time is recorded');
  t.ok(loadedModules().length > 0, 'the native module is in the require cache now');

  analyzer.tokens('再来一次');
  analyzer.tag('我叫张伟');
  t.equal(jiebaLoadStats().segmenterLoadMs, first.segmenterLoadMs, 'a second call does not load again');

  t.ok(analyzer.keywords('客厅的智能家居由树莓派控制', 2).length > 0);
  t.equal(jiebaLoadStats().tfidfLoaded, true, 'keywords() loaded the IDF table');
});

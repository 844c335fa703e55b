import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { BUILTIN_DEFINITIONS } from '../../../src/config/definitions.js';
import { defaultConfig, getByKey, loadConfig } from '../../../src/config/loader.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

t.test('config/default.yaml loads as a configuration file and equals the schema defaults', async (t) => {
  const loaded = loadConfig({ file: join(repo, 'config', 'default.yaml'), env: {}, systemFile: '/nonexistent' });
  t.same(loaded.config, defaultConfig());
  for (const def of BUILTIN_DEFINITIONS) {
    t.same(getByKey(loaded.config, def.key), def.default, def.key);
  }
});

t.test('the generated files match the schema (npm run gen was run)', async (t) => {
  const r = spawnSync(process.execPath, [join(repo, 'scripts', 'gen.mjs'), '--check'], { encoding: 'utf8' });
  t.equal(r.status, 0, r.stderr);
});

import t from 'tap';
import { repo, runScript, tree } from './script-tree.js';

function check(root: string) {
  return runScript('check-boundaries.mjs', root);
}

t.test('the repository itself passes', async (t) => {
  const r = check(repo);
  t.equal(r.code, 0, r.out);
});

t.test('a clean tree passes', async (t) => {
  const root = tree(t, {
    'src/shared/a.ts': 'export const a = 1;\n',
    'src/config/b.ts': "import { a } from '../shared/a.js';\nexport const b = a;\n",
    'src/sdk/index.ts': "export { b } from '../config/b.js';\n",
    'plugins/x/index.ts': "import { b } from '../../src/sdk/index.js';\nimport { y } from './y.js';\nexport const x = b + y;\n",
    'plugins/x/y.ts': 'export const y = 2;\n',
  });
  const r = check(root);
  t.equal(r.code, 0, r.out);
});

t.test('each rule is reported', async (t) => {
  const root = tree(t, {
    'src/shared/a.ts': "import { h } from '../supervisor/h.js';\nexport const a = h;\n",
    'src/supervisor/h.ts': "export const h = 1;\nimport '../main.js';\n",
    'src/main.ts': 'export {};\n',
    'src/config/db.ts': "import Database from 'better-sqlite3';\nexport const d = Database;\n",
    'src/config/gpio.ts': "import { Gpio } from 'onoff';\nexport const g = Gpio;\n",
    'package.json': JSON.stringify({ homeagent: { hardwareLibraries: ['onoff'] } }),
    'src/agent/loop.ts': "import { p } from '../llm/providers/openai.js';\nexport const l = p;\n",
    'src/llm/providers/openai.ts': 'export const p = 1;\n',
    'plugins/x/index.ts': "import { b } from '../../src/config/db.js';\nimport mqtt from 'mqtt';\nexport const x = [b, mqtt];\n",
    'src/store/c1.ts': "import { c2 } from './c2.js';\nexport const c1 = c2;\n",
    'src/store/c2.ts': "import { c1 } from './c1.js';\nexport const c2 = c1;\n",
  });
  const r = check(root);
  t.equal(r.code, 1);
  t.match(r.out, /src\/shared\/a\.ts: layer 0 \(src\/shared\) may not import layer 4/);
  t.match(r.out, /nothing may import src\/main\.ts/);
  t.match(r.out, /only src\/store may import better-sqlite3/);
  t.match(r.out, /only devices\/\*\* may import the hardware library onoff/);
  t.match(r.out, /src\/agent sees LLMs only through src\/llm\/spec/);
  t.match(r.out, /plugins\/\*\* may import only src\/sdk/);
  t.match(r.out, /only plugins\/mqtt may import mqtt/);
  t.match(r.out, /import cycle: src\/store\/c1\.ts -> src\/store\/c2\.ts -> src\/store\/c1\.ts/);
});

t.test('settings schemas: composed by the one catalogue, importing only TypeBox and src/sdk/settings.ts', async (t) => {
  const clean = tree(t, {
    'src/config/setting-schema.ts': 'export const pluginMeta = 1;\n',
    'src/sdk/settings.ts': "export { pluginMeta } from '../config/setting-schema.js';\n",
    'plugins/x/settings-schema.ts':
      "import { Type } from '@sinclair/typebox';\nimport { pluginMeta } from '../../src/sdk/settings.js';\nexport const settingsSchema = [Type, pluginMeta];\n",
    'src/config/plugin-sections.ts': "export { settingsSchema as x } from '../../plugins/x/settings-schema.js';\n",
  });
  t.equal(check(clean).code, 0, check(clean).out);

  const broken = tree(t, {
    'src/config/setting-schema.ts': 'export const pluginMeta = 1;\n',
    'src/sdk/settings.ts': "export { pluginMeta } from '../config/setting-schema.js';\nexport { p } from './plugin.js';\n",
    'src/sdk/plugin.ts': 'export const p = 1;\n',
    'plugins/x/settings-schema.ts':
      "import { Type } from '@sinclair/typebox';\nimport { y } from './y.js';\nimport os from 'node:os';\nexport const settingsSchema = [Type, y, os];\n",
    'plugins/x/y.ts': 'export const y = 2;\n',
    'devices/d/settings-schema.ts': 'export const settingsSchema = 1;\n',
    'src/config/plugin-sections.ts':
      "export { settingsSchema as x } from '../../plugins/x/settings-schema.js';\nexport { y } from '../../plugins/x/y.js';\n",
    'src/config/other.ts': "export { settingsSchema } from '../../plugins/x/settings-schema.js';\n",
  });
  const r = check(broken);
  t.equal(r.code, 1);
  t.match(
    r.out,
    /plugins\/x\/settings-schema\.ts: a settings schema imports only @sinclair\/typebox and src\/sdk\/settings\.ts, not plugins\/x\/y\.ts/,
  );
  t.match(r.out, /plugins\/x\/settings-schema\.ts: a settings schema imports only .* not node:os/);
  t.match(r.out, /src\/sdk\/settings\.ts: imports only src\/config\/setting-schema\.ts/);
  t.match(r.out, /src\/config\/plugin-sections\.ts: exports only plugins' and devices' settings-schema\.ts, not plugins\/x\/y\.ts/);
  t.match(r.out, /src\/config\/other\.ts: the kernel may not import plugins\/x\/settings-schema\.ts/);
});

t.test('error codes: plain data, composed only by the generated index', async (t) => {
  const clean = tree(t, {
    'devices/d/error-codes.ts': "export const errorCodes = { HA_ERR_D_IO: 'd failed' } as const;\n",
    'src/shared/plugin-error-codes.ts': "export { errorCodes as d } from '../../devices/d/error-codes.js';\n",
  });
  t.equal(check(clean).code, 0, check(clean).out);

  const broken = tree(t, {
    'devices/d/error-codes.ts': "import { x } from './x.js';\nexport const errorCodes = { HA_ERR_D_IO: x } as const;\n",
    'devices/d/x.ts': "export const x = 'd failed';\n",
    'src/shared/plugin-error-codes.ts':
      "export { errorCodes as d } from '../../devices/d/error-codes.js';\nexport { x } from '../../devices/d/x.js';\n",
  });
  const r = check(broken);
  t.equal(r.code, 1);
  t.match(r.out, /devices\/d\/error-codes\.ts: error codes are plain data and import nothing, not \.\/x\.js/);
  t.match(r.out, /src\/shared\/plugin-error-codes\.ts: exports only plugins' and devices' error-codes\.ts, not devices\/d\/x\.ts/);
});

t.test('the wire types import only src/api', async (t) => {
  const root = tree(t, {
    'src/shared/a.ts': 'export const a = 1;\n',
    'src/api/home.ts':
      "import type { a } from '../shared/a.js';\nimport type { Foo } from 'some-package';\nexport type H = [typeof a, Foo];\n",
    'src/api/status.ts': "import type { H } from './home.js';\nexport type S = H;\n",
    'src/sdk/api.ts': "export type * from '../api/status.js';\nexport type * from '../shared/a.js';\n",
  });
  const r = check(root);
  t.equal(r.code, 1);
  t.match(r.out, /src\/api\/home\.ts: the wire types import only src\/api, not src\/shared\/a\.ts/);
  t.match(r.out, /src\/api\/home\.ts: the wire types import only src\/api, not some-package/);
  t.match(r.out, /src\/sdk\/api\.ts: the wire types import only src\/api, not src\/shared\/a\.ts/);
  t.notMatch(r.out, /src\/api\/status\.ts/);
});

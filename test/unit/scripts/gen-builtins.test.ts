import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ERROR_CODES } from '../../../src/shared/errors.js';
import { repo, runScript, tree } from './script-tree.js';

function gen(root: string, ...args: string[]) {
  return runScript('gen-builtins.mjs', root, ...args);
}

t.test('the committed indexes match the repository', async (t) => {
  const r = gen(repo, '--check');
  t.equal(r.code, 0, r.out);
});

t.test('a new plugin or device folder is picked up with nothing else written by hand', async (t) => {
  const root = tree(t, {
    'devices/lamp/settings-schema.ts': 'export const settingsSchema = 1;\n',
    'devices/lamp/error-codes.ts': "export const errorCodes = { HA_ERR_LAMP_IO: 'the lamp failed' } as const;\n",
    'plugins/weather/settings-schema.ts': 'export const settingsSchema = 2;\n',
    'plugins/plain/index.ts': 'export {};\n',
  });
  t.equal(gen(root, '--check').code, 1, 'missing indexes are stale');
  t.equal(gen(root).code, 0);
  const sections = readFileSync(join(root, 'src/config/plugin-sections.ts'), 'utf8');
  t.match(sections, "export { settingsSchema as lamp } from '../../devices/lamp/settings-schema.js';\n");
  t.match(sections, "export { settingsSchema as weather } from '../../plugins/weather/settings-schema.js';\n");
  t.ok(sections.indexOf('as lamp') < sections.indexOf('as weather'), 'devices come first');
  t.notMatch(sections, 'plain');
  const codes = readFileSync(join(root, 'src/shared/plugin-error-codes.ts'), 'utf8');
  t.match(codes, "export { errorCodes as lamp } from '../../devices/lamp/error-codes.js';\n");
  t.notMatch(codes, 'weather');
  t.equal(gen(root, '--check').code, 0, 'up to date after writing');

  mkdirSync(join(root, 'devices/fan'));
  writeFileSync(join(root, 'devices/fan/error-codes.ts'), 'export const errorCodes = {} as const;\n');
  const stale = gen(root, '--check');
  t.equal(stale.code, 1);
  t.match(stale.out, /src\/shared\/plugin-error-codes\.ts does not match the plugin and device folders: run `npm run build`/);
});

t.test('a folder name that cannot be an export name is refused by name', async (t) => {
  const root = tree(t, { 'plugins/my-plugin/settings-schema.ts': 'export const settingsSchema = 1;\n' });
  const r = gen(root);
  t.not(r.code, 0);
  t.match(r.out, /plugins\/my-plugin\/settings-schema\.ts: a built-in folder with a settings-schema\.ts needs a name like/);
});

t.test('the catalogue joins the kernel codes and every built-in folder codes', async (t) => {
  t.match(ERROR_CODES.HA_ERR_INTERNAL, /unexpected/);
  t.match(ERROR_CODES.HA_ERR_GPIO_IO, /GPIO pin/);
  t.match(ERROR_CODES.HA_ERR_ZIGBEE_TIMEOUT, /Zigbee2MQTT/);
  t.ok(Object.isFrozen(ERROR_CODES));
});

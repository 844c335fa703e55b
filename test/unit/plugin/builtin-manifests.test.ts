/**
 * Every built-in plugin's plugin.json passes the manifest check the plugin host applies at start.
 * A refused manifest does not stop the daemon (the host logs "plugin refused before loading" and
 * goes on), so without this a built-in could ship that never loads: remotedevice's description
 * was longer than the schema allows and the plugin was silently absent from every daemon.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { checkEngine, readManifest } from '../../../src/plugin/manifest.js';
import { REPO_ROOT } from '../../helpers/daemon.js';

const PLUGINS = join(REPO_ROOT, 'plugins');

t.test('every built-in plugin manifest is accepted, named after its folder, built in', async (t) => {
  const folders = readdirSync(PLUGINS).filter((name) => existsSync(join(PLUGINS, name, 'plugin.json')));
  t.ok(folders.length >= 10, `found ${folders.length} built-in plugins`);
  for (const folder of folders) {
    const manifest = readManifest(join(PLUGINS, folder, 'plugin.json'));
    t.equal(manifest.name, folder, `${folder}: name`);
    t.equal(manifest.kind, 'builtin', `${folder}: kind`);
    t.doesNotThrow(() => checkEngine(manifest), `${folder}: engine`);
  }
});

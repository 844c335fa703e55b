import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { defaultConfig } from '../../../../src/config/loader.js';
import { checkManifest, type Manifest } from '../../../../src/plugin/manifest.js';
import type { RuntimeContext } from '../../../../src/plugin/runtime.js';
import { SkillLibrary } from '../../../../src/plugin/skills/skill-library.js';
import { parseSkill } from '../../../../src/plugin/skills/skill-parser.js';
import { createSkillRuntime, skillManifest } from '../../../../src/plugin/skills/skill-plugin.js';
import { createTestPluginContext } from '../../../helpers/plugin-context.js';
import { captureLogs, expectError, expectErrorAsync, tempDir } from '../../fixtures/support.js';
import { simpleSkill, skillText, writeSkillFolder } from './fixtures/skill-folder.js';

function runtimeContext(root: string, dir: string, manifest: Manifest, log = captureLogs()): RuntimeContext {
  const { context } = createTestPluginContext({ name: manifest.name, dataDir: root, trust: 'external', root: dir });
  return {
    manifest,
    dir,
    context,
    limits: () => defaultConfig().core.plugins,
    dataDir: root,
    log: log.logs.child('plugin'),
    reportState: () => undefined,
  };
}

t.test('skillManifest derives a valid manifest from the front matter', async (t) => {
  const root = tempDir(t, 'ha-skill-plugin-');
  const dir = writeSkillFolder(root, 'laundry', {
    skillMd: skillText(['name: laundry', 'description: Wash clothes.', 'version: 1.1', 'author: Ada']),
  });
  const manifest = skillManifest(dir);
  t.same(manifest, {
    name: 'laundry',
    version: '1.1.0',
    description: 'Wash clothes.',
    engine: '*',
    kind: 'skill',
    entry: 'SKILL.md',
    author: 'Ada',
  });
  t.same(checkManifest(manifest, 'test'), manifest, 'it passes the manifest check');

  const plain = writeSkillFolder(root, 'plain', { skillMd: skillText(['name: plain', `description: ${'x'.repeat(900)}`]) });
  const derived = skillManifest(plain);
  t.equal(derived.version, '0.0.0', 'no version gives 0.0.0');
  t.equal([...derived.description].length, 500, 'a long description is cut to the manifest limit');

  const broken = writeSkillFolder(root, 'broken', { skillMd: '# no front matter' });
  expectError(t, () => skillManifest(broken), 'HA_ERR_SKILL_INVALID');
});

t.test('the runtime adds the skill on start, removes it on stop, and answers health', async (t) => {
  const root = tempDir(t, 'ha-skill-plugin-');
  const dir = writeSkillFolder(root, 'wifi', { skillMd: simpleSkill('wifi', 'Fix the Wi-Fi.') });
  const library = new SkillLibrary();
  const runtime = createSkillRuntime(library);
  const instance = await runtime(runtimeContext(root, dir, skillManifest(dir)));

  t.match(await instance.health?.(), { ok: false }, 'not healthy before start');
  await instance.start(new AbortController().signal);
  t.equal(library.get('wifi')?.owner, 'plugin:wifi');
  t.equal(library.get('wifi')?.dir, dir);
  t.match(await instance.health?.(), { ok: true, detail: /wifi/ });

  // Hot reload: the new instance starts before the old one stops.
  writeFileSync(join(dir, 'SKILL.md'), simpleSkill('wifi', 'Fix the Wi-Fi, version two.'));
  const next = await runtime(runtimeContext(root, dir, skillManifest(dir)));
  await next.start(new AbortController().signal);
  await instance.stop();
  t.equal(library.get('wifi')?.skill.description, 'Fix the Wi-Fi, version two.', 'after a reload the new text is loaded');
  t.match(await instance.health?.(), { ok: false }, 'the old instance reports not loaded');
  t.match(await next.health?.(), { ok: true });

  await next.stop();
  t.equal(library.get('wifi'), undefined, 'stop removes the skill');
  await next.stop();
  t.pass('stop twice is harmless');
});

t.test('warnings are logged; bad skills, clashing names and a mismatched plugin.json fail start', async (t) => {
  const root = tempDir(t, 'ha-skill-plugin-');
  const library = new SkillLibrary();
  const runtime = createSkillRuntime(library);

  const logs = captureLogs();
  const renamed = writeSkillFolder(root, 'folder', { skillMd: simpleSkill('named') });
  const instance = await runtime(runtimeContext(root, renamed, skillManifest(renamed), logs));
  await instance.start(new AbortController().signal);
  t.match(logs.text(), /differs from the folder name/, 'parser warnings reach the plugin log');
  t.equal(library.get('named')?.owner, 'plugin:named');

  const clash = writeSkillFolder(root, 'clash', { skillMd: simpleSkill('clash') });
  library.add(parseSkill(clash), { owner: 'plugin:other' });
  const clashing = await runtime(runtimeContext(root, clash, skillManifest(clash)));
  const taken = await expectErrorAsync(t, () => clashing.start(new AbortController().signal), 'HA_ERR_PLUGIN_LOAD');
  t.match(taken.message, /already loaded by plugin:other/, 'a name another plugin holds is refused');
  t.equal(library.get('clash')?.owner, 'plugin:other');

  const mismatch = writeSkillFolder(root, 'mismatch', { skillMd: simpleSkill('mismatch') });
  const manifest: Manifest = { ...skillManifest(mismatch), name: 'something-else' };
  const wrong = await runtime(runtimeContext(root, mismatch, manifest));
  const error = await expectErrorAsync(t, () => wrong.start(new AbortController().signal), 'HA_ERR_SKILL_INVALID');
  t.match(error.message, /plugin\.json says "something-else"/);
  t.equal(library.get('mismatch'), undefined, 'nothing was added');

  const good = writeSkillFolder(root, 'good', { skillMd: simpleSkill('good') });
  const goodManifest = skillManifest(good);
  writeFileSync(join(good, 'SKILL.md'), 'broken now');
  const broken = await runtime(runtimeContext(root, good, goodManifest));
  await expectErrorAsync(t, () => broken.start(new AbortController().signal), 'HA_ERR_SKILL_INVALID');
  await broken.stop();
  t.equal(library.get('good'), undefined, 'a failed start leaves the library untouched and stop is safe');
});

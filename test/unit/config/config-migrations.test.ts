import { spawnSync } from 'node:child_process';
import { copyFileSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { migrateConfigFile } from '../../../src/config/config-migrate-command.js';
import {
  CONFIG_MIGRATIONS,
  CONFIG_VERSION,
  type ConfigMigration,
  migrateConfigDocument,
  parseConfigText,
  renamedSettingKeys,
} from '../../../src/config/config-migrations.js';
import { loadConfig } from '../../../src/config/loader.js';
import { expectError, tempDir } from '../fixtures/support.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const RELEASES = join(repo, 'test', 'fixtures', 'config');
const NO_SYSTEM = '/nonexistent/homeagent/config.yaml';

/** Two made-up releases after this one: a rename, then a rename of a nested key and a value change. */
const LATER: ConfigMigration[] = [
  { version: 2, description: 'the stop timeout is named for its unit', renames: { 'core.daemon.stop_ms': 'core.daemon.stop_timeout_ms' } },
  {
    version: 3,
    description: 'pins moved under gpio.outputs; the name is shorter',
    renames: { 'core.old_name': 'core.name' },
    transform(doc) {
      if (doc.getIn(['core', 'log', 'level']) !== 'verbose') return [];
      doc.setIn(['core', 'log', 'level'], 'debug');
      return ['core.log.level verbose became debug'];
    },
  },
];

t.test('every release file in test/fixtures/config loads at this version without a problem', async (t) => {
  const files = readdirSync(RELEASES).filter((name) => name.endsWith('.yaml'));
  t.ok(files.includes('release-0.1.0.yaml'), 'the file of release 0.1.0 is among them');
  for (const name of files) {
    const loaded = loadConfig({ file: join(RELEASES, name), env: {}, systemFile: NO_SYSTEM });
    t.equal(loaded.migration?.to, CONFIG_VERSION, `${name} is read at version ${CONFIG_VERSION}`);
    t.same(loaded.warnings, [], `${name}: no warnings`);
  }
  const release = loadConfig({ file: join(RELEASES, 'release-0.1.0.yaml'), env: {}, systemFile: NO_SYSTEM });
  t.equal(release.migration?.from, 1, 'a file without version is version 1');
  t.equal(release.config.core.name, 'Haus Li');
  t.equal(release.config.plugin.gpio.pins[0]?.id, 'garden_pump', "the file's values are the configuration");
  t.equal(CONFIG_MIGRATIONS.at(-1)?.version ?? 1, CONFIG_VERSION, 'the last migration produces CONFIG_VERSION');
});

t.test('version: the current one is accepted and is no setting; newer or malformed ones are refused', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'config.yaml');
  writeFileSync(file, `version: ${CONFIG_VERSION}\ncore:\n  name: Versioned\n`);
  const loaded = loadConfig({ file, env: {}, systemFile: NO_SYSTEM });
  t.equal(loaded.config.core.name, 'Versioned');
  t.notOk('version' in loaded.config, 'version is not part of the configuration');

  writeFileSync(file, `version: ${CONFIG_VERSION + 1}\ncore:\n  name: Future\n`);
  const newer = expectError(t, () => loadConfig({ file, env: {}, systemFile: NO_SYSTEM }), 'HA_ERR_CONFIG_VERSION');
  t.match(newer.message, new RegExp(`written for configuration version ${CONFIG_VERSION + 1}.*upgrade HomeAgent`));

  for (const bad of ['two', '0', '1.5', '[1]']) {
    writeFileSync(file, `version: ${bad}\n`);
    const error = expectError(t, () => loadConfig({ file, env: {}, systemFile: NO_SYSTEM }), 'HA_ERR_CONFIG_FILE');
    t.match(error.message, /version must be a whole number of at least 1/, `version: ${bad}`);
  }
});

t.test('migrations run in order from the file version, rename keys, keep comments and set the version', async (t) => {
  const text = `# my house
core:
  # shown in the status
  old_name: Home of Li
  daemon:
    stop_ms: 20000 # long, the disk is slow
  log:
    level: verbose
`;
  const { doc, from, to, changes } = migrateConfigDocument(parseConfigText(text), 'config.yaml', LATER, 3);
  t.equal(from, 1);
  t.equal(to, 3);
  t.same(changes, [
    'core.daemon.stop_ms renamed core.daemon.stop_timeout_ms (migration 2: the stop timeout is named for its unit)',
    'core.old_name renamed core.name (migration 3: pins moved under gpio.outputs; the name is shorter)',
    'core.log.level verbose became debug (migration 3: pins moved under gpio.outputs; the name is shorter)',
  ]);
  t.same(doc.toJS(), { core: { daemon: { stop_timeout_ms: 20000 }, log: { level: 'debug' }, name: 'Home of Li' }, version: 3 });
  const written = doc.toString();
  t.match(written, /# my house/, 'the head comment stays');
  t.match(written, /stop_timeout_ms: 20000 # long, the disk is slow/, 'a moved value keeps its comment');

  const fromTwo = migrateConfigDocument(parseConfigText('version: 2\ncore:\n  daemon:\n    stop_ms: 5000\n'), 'f', LATER, 3);
  t.same(fromTwo.changes, [], 'migration 2 does not run again on a version 2 file');
  t.same(fromTwo.doc.toJS(), { version: 3, core: { daemon: { stop_ms: 5000 } } }, 'and its old key is left for the loader to name');

  const both = migrateConfigDocument(parseConfigText('core:\n  old_name: A\n  name: B\n'), 'f', LATER, 3);
  t.same(both.doc.toJS(), { core: { name: 'B' }, version: 3 }, 'when both names are set the new one wins');
  t.match(both.changes[0], /^core.old_name dropped: core.name is set too and wins/);

  const current = migrateConfigDocument(parseConfigText('core:\n  name: A\n'), 'f', LATER, 1);
  t.same(current.doc.toJS(), { core: { name: 'A' } }, 'a file at the current version is left as it is');
});

t.test('stored setting renames over all migrations, chains followed to their end', async (t) => {
  t.same(
    [...renamedSettingKeys([...LATER, { version: 4, description: 'again', renames: { 'core.name': 'core.house_name' } }])],
    [
      ['core.daemon.stop_ms', 'core.daemon.stop_timeout_ms'],
      ['core.old_name', 'core.house_name'],
      ['core.name', 'core.house_name'],
    ],
  );
  t.same([...renamedSettingKeys()], [], 'this release renames nothing');
});

t.test('config-migrate writes the migrated file after a backup, atomically, keeping its mode', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'config.yaml');
  const old = '# mine\ncore:\n  daemon:\n    stop_ms: 20000\n';
  writeFileSync(file, old, { mode: 0o640 });

  const dry = migrateConfigFile({ file, dryRun: true, migrations: LATER, current: 3 });
  t.equal(dry.backup, undefined);
  t.equal(readFileSync(file, 'utf8'), old, 'a dry run writes nothing');

  const result = migrateConfigFile({ file, migrations: LATER, current: 3 });
  t.equal(result.backup, `${file}.v1.bak`);
  t.equal(readFileSync(`${file}.v1.bak`, 'utf8'), old, 'the old file is kept');
  t.equal(readFileSync(file, 'utf8'), '# mine\ncore:\n  daemon:\n    stop_timeout_ms: 20000\nversion: 3\n');
  t.equal(statSync(file).mode & 0o777, 0o640, 'the mode is kept');
  t.same(readdirSync(dir).sort(), ['config.yaml', 'config.yaml.v1.bak'], 'no temporary file is left');

  t.same(migrateConfigFile({ file, migrations: LATER, current: 3 }).changes, [], 'a second run has nothing to do');
  copyFileSync(`${file}.v1.bak`, file);
  t.equal(migrateConfigFile({ file, migrations: LATER, current: 3 }).backup, `${file}.v1.bak.1`, 'an older backup is never replaced');

  t.equal(migrateConfigFile({ file: join(RELEASES, 'release-0.1.0.yaml') }).backup, undefined, "this release's file needs no writing");
});

t.test('homeagent config-migrate on the command line', async (t) => {
  const main = join(repo, 'dist', 'src', 'main.js');
  const dir = tempDir(t);
  const file = join(dir, 'config.yaml');
  copyFileSync(join(RELEASES, 'release-0.1.0.yaml'), file);
  const ok = spawnSync(process.execPath, [main, 'config-migrate', '--config', file], { encoding: 'utf8' });
  t.equal(ok.status, 0, ok.stderr);
  t.match(ok.stdout, new RegExp(`is at configuration version ${CONFIG_VERSION}: nothing to migrate`));

  writeFileSync(file, `version: ${CONFIG_VERSION + 1}\n`);
  const newer = spawnSync(process.execPath, [main, 'config-migrate', '--config', file], { encoding: 'utf8' });
  t.equal(newer.status, 78, 'a file for a newer HomeAgent is a configuration error');
  t.match(newer.stderr, /HA_ERR_CONFIG_VERSION|newer|knows versions up to/);
  t.equal(readFileSync(file, 'utf8'), `version: ${CONFIG_VERSION + 1}\n`, 'and is left alone');

  const missing = spawnSync(process.execPath, [main, 'config-migrate', '--config', join(dir, 'absent.yaml')], { encoding: 'utf8' });
  t.equal(missing.status, 78);
  t.match(missing.stderr, /no such file/);
});

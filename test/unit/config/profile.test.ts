// core.profile: the small-board defaults are laid under the file and the environment (an explicit
// value always wins), every key of a profile is a real setting with a value its schema accepts,
// and an unknown profile is refused naming it.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { BUILTIN_DEFINITIONS, checkValue } from '../../../src/config/definitions.js';
import { defaultConfig, getByKey, loadConfig } from '../../../src/config/loader.js';
import { PROFILE_DEFAULTS, PROFILES } from '../../../src/config/profiles.js';
import type { HomeAgentError } from '../../../src/shared/errors.js';
import { expectError, tempDir } from '../fixtures/support.js';

const NO_SYSTEM = '/nonexistent/homeagent/config.yaml';

function writeConfig(dir: string, text: string): string {
  const file = join(dir, 'config.yaml');
  writeFileSync(file, text);
  return file;
}

t.test('every profile key is a setting and its value passes the setting schema', async (t) => {
  const defs = new Map(BUILTIN_DEFINITIONS.map((d) => [d.key, d]));
  t.same([...PROFILES], Object.keys(PROFILE_DEFAULTS), 'every profile has its defaults');
  t.same(defs.get('core.profile')?.default, 'standard');
  for (const [name, values] of Object.entries(PROFILE_DEFAULTS)) {
    for (const [key, value] of Object.entries(values)) {
      const def = defs.get(key);
      if (!def) {
        t.fail(`${name}: ${key} is not a setting`);
        continue;
      }
      t.equal(checkValue(def, value), undefined, `${name}: ${key} = ${JSON.stringify(value)} is valid`);
      t.notSame(value, def.default, `${name}: ${key} differs from the schema default`);
    }
  }
  t.ok(Object.keys(PROFILE_DEFAULTS.small).length >= 10, 'small lowers a good number of settings');
});

t.test('standard (the default) changes nothing', async (t) => {
  const loaded = loadConfig({ env: {}, systemFile: NO_SYSTEM });
  t.equal(loaded.config.core.profile, 'standard');
  t.same(loaded.config, defaultConfig());
  t.notOk(
    [...loaded.sources.values()].some((s) => s.startsWith('profile:')),
    'no value from a profile',
  );
});

t.test('small from the file lays its defaults and names them as their source', async (t) => {
  const file = writeConfig(tempDir(t), 'core:\n  profile: small\n');
  const loaded = loadConfig({ env: {}, systemFile: NO_SYSTEM, file });
  t.equal(loaded.config.core.profile, 'small');
  t.equal(loaded.sources.get('core.profile'), file);
  for (const [key, value] of Object.entries(PROFILE_DEFAULTS.small)) {
    t.same(getByKey(loaded.config, key), value, `${key} from the profile`);
    t.equal(loaded.sources.get(key), 'profile:small', `${key} source`);
  }
  t.equal(loaded.config.core.agent.max_context_size, 16);
  t.equal(loaded.sources.get('core.agent.max_tool_turns'), 'default', 'a setting the profile leaves is the default');
});

t.test('a value in the file or the environment wins over the profile', async (t) => {
  const file = writeConfig(
    tempDir(t),
    'core:\n  profile: small\n  agent:\n    max_context_size: 40\nplugin:\n  cli:\n    max_connections: 12\n',
  );
  const loaded = loadConfig({ env: { HOMEAGENT_SETTINGS_HISTORY_MAX_ROWS: '777' }, systemFile: NO_SYSTEM, file });
  t.equal(loaded.config.core.agent.max_context_size, 40, 'file value wins');
  t.equal(loaded.sources.get('core.agent.max_context_size'), file);
  t.equal(loaded.config.plugin.cli.max_connections, 12, 'file value in a plugin section wins');
  t.equal(loaded.config.core.settings.history_max_rows, 777, 'environment wins');
  t.equal(loaded.sources.get('core.settings.history_max_rows'), 'env:HOMEAGENT_SETTINGS_HISTORY_MAX_ROWS');
  t.equal(loaded.config.core.agent.max_parallel_tools, 2, 'the rest still comes from the profile');
});

t.test('the profile can be chosen by the environment, which wins over the file', async (t) => {
  const file = writeConfig(tempDir(t), 'core:\n  profile: standard\n');
  const loaded = loadConfig({ env: { HOMEAGENT_PROFILE: 'small' }, systemFile: NO_SYSTEM, file });
  t.equal(loaded.config.core.profile, 'small');
  t.equal(loaded.config.core.agent.max_context_size, 16);
  const none = loadConfig({ env: { HOMEAGENT_PROFILE: 'small' }, systemFile: NO_SYSTEM });
  t.equal(none.config.core.agent.ready_queue_size, 64, 'without a file too');
});

t.test('an unknown profile is refused naming it and the known ones', async (t) => {
  const file = writeConfig(tempDir(t), 'core:\n  profile: tiny\n');
  const error = expectError(t, () => loadConfig({ env: {}, systemFile: NO_SYSTEM, file }), 'HA_ERR_CONFIG_INVALID') as HomeAgentError;
  const problems = error.details?.problems as string[];
  const line = problems.find((p) => p.startsWith('core.profile'));
  t.ok(line, 'a problem for core.profile');
  t.match(line, /tiny/, 'names the unknown profile');
  t.match(line, /standard/, 'names a known one');
  t.match(line, /small/, 'names the other');
  t.equal(problems.length, 1, 'and nothing else (no profile values were laid down)');
});

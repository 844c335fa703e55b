import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { BUILTIN_DEFINITIONS } from '../../../src/config/definitions.js';
import { chooseConfigFile, defaultConfig, getByKey, loadConfig, setByKey } from '../../../src/config/loader.js';
import type { HomeAgentError } from '../../../src/shared/errors.js';
import { expectError, tempDir } from '../fixtures/support.js';

const NO_SYSTEM = '/nonexistent/homeagent/config.yaml';

function writeConfig(dir: string, text: string, name = 'config.yaml'): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

function problemsOf(error: HomeAgentError): string[] {
  const problems = error.details?.problems;
  if (!Array.isArray(problems)) throw new Error('details.problems is missing');
  return problems as string[];
}

t.test('defaults when no file and no environment', async (t) => {
  const loaded = loadConfig({ env: {}, systemFile: NO_SYSTEM });
  t.equal(loaded.file, undefined);
  t.same(loaded.warnings, []);
  t.same(loaded.config, defaultConfig());
  t.equal(loaded.config.core.daemon.stop_timeout_ms, 10000);
  t.equal(loaded.config.core.data_dir, './data');
  t.equal(loaded.config.plugin.cli.max_frame_bytes, 1048576);
  t.equal(loaded.config.core.llm.base_url, '');
  t.equal(loaded.sources.size, BUILTIN_DEFINITIONS.length, 'a source for every setting');
  for (const def of BUILTIN_DEFINITIONS) {
    t.equal(loaded.sources.get(def.key), 'default', `${def.key} comes from the default`);
    t.same(getByKey(loaded.config, def.key), def.default, `${def.key} has its default value`);
  }
});

t.test('an empty file is allowed and changes nothing', async (t) => {
  const dir = tempDir(t);
  const file = writeConfig(dir, '# nothing here\n');
  const loaded = loadConfig({ env: {}, file, systemFile: NO_SYSTEM });
  t.equal(loaded.file, file);
  t.same(loaded.config, defaultConfig());
});

t.test('file values override defaults; the source names the file', async (t) => {
  const dir = tempDir(t);
  const file = writeConfig(
    dir,
    [
      'core:',
      '  name: Kitchen',
      '  daemon:',
      '    stop_timeout_ms: 20000',
      '  log:',
      '    level: debug',
      '    levels: {store: warn}',
      'plugin:',
      '  cli:',
      '    max_frame_bytes: 2048',
      '',
    ].join('\n'),
  );
  const loaded = loadConfig({ env: { HOMEAGENT_CONFIG: file }, systemFile: NO_SYSTEM });
  t.equal(loaded.file, file);
  t.equal(loaded.config.core.name, 'Kitchen');
  t.equal(loaded.config.core.daemon.stop_timeout_ms, 20000);
  t.equal(loaded.config.core.daemon.plugin_timeout_ms, 10000, 'siblings keep their defaults');
  t.equal(loaded.config.core.log.level, 'debug');
  t.same(loaded.config.core.log.levels, { store: 'warn' });
  t.equal(loaded.config.plugin.cli.max_frame_bytes, 2048);
  t.equal(loaded.sources.get('core.name'), file);
  t.equal(loaded.sources.get('core.daemon.stop_timeout_ms'), file);
  t.equal(loaded.sources.get('plugin.cli.max_frame_bytes'), file);
  t.equal(loaded.sources.get('core.daemon.plugin_timeout_ms'), 'default');
});

t.test('the environment overrides the file; the source names the variable', async (t) => {
  const dir = tempDir(t);
  const file = writeConfig(dir, 'core:\n  daemon:\n    stop_timeout_ms: 20000\n  llm:\n    base_url: http://file.example\n');
  const loaded = loadConfig({
    env: {
      HOMEAGENT_CONFIG: file,
      HOMEAGENT_DAEMON_STOP_TIMEOUT_MS: '30000',
      HOMEAGENT_LLM_BASE_URL: 'http://127.0.0.1:11434/v1',
      HOMEAGENT_DATA_DIR: '/var/lib/homeagent-test',
      HOMEAGENT_PLUGIN_CLI_MAX_FRAME_BYTES: '4096',
      PATH: '/usr/bin',
    },
    systemFile: NO_SYSTEM,
  });
  t.equal(loaded.config.core.daemon.stop_timeout_ms, 30000, 'number parsed from text');
  t.equal(loaded.config.core.llm.base_url, 'http://127.0.0.1:11434/v1');
  t.equal(loaded.config.core.data_dir, '/var/lib/homeagent-test', 'HOMEAGENT_DATA_DIR maps to core.data_dir');
  t.equal(loaded.config.plugin.cli.max_frame_bytes, 4096);
  t.equal(loaded.sources.get('core.daemon.stop_timeout_ms'), 'env:HOMEAGENT_DAEMON_STOP_TIMEOUT_MS');
  t.equal(loaded.sources.get('core.llm.base_url'), 'env:HOMEAGENT_LLM_BASE_URL');
  t.equal(loaded.sources.get('core.data_dir'), 'env:HOMEAGENT_DATA_DIR');
  t.equal(loaded.sources.get('plugin.cli.max_frame_bytes'), 'env:HOMEAGENT_PLUGIN_CLI_MAX_FRAME_BYTES');
  t.same(loaded.warnings, [], 'HOMEAGENT_CONFIG and non-HomeAgent variables are not warnings');
});

t.test('an explicit file wins over HOMEAGENT_CONFIG', async (t) => {
  const dir = tempDir(t);
  const a = writeConfig(dir, 'core:\n  name: A\n', 'a.yaml');
  const b = writeConfig(dir, 'core:\n  name: B\n', 'b.yaml');
  const loaded = loadConfig({ env: { HOMEAGENT_CONFIG: a }, file: b, systemFile: NO_SYSTEM });
  t.equal(loaded.config.core.name, 'B');
  t.equal(loaded.file, b);
});

t.test('the system file is used only when it exists', async (t) => {
  const dir = tempDir(t);
  const missing = join(dir, 'etc-config.yaml');
  t.equal(chooseConfigFile({ env: {}, systemFile: missing }), undefined);
  const absent = loadConfig({ env: {}, systemFile: missing });
  t.equal(absent.file, undefined, 'a missing system file is not an error');
  t.equal(absent.config.core.name, 'HomeAgent');

  writeConfig(dir, 'core:\n  name: FromEtc\n', 'etc-config.yaml');
  t.same(chooseConfigFile({ env: {}, systemFile: missing }), { path: missing, required: false });
  const present = loadConfig({ env: {}, systemFile: missing });
  t.equal(present.file, missing);
  t.equal(present.config.core.name, 'FromEtc');
  t.equal(present.sources.get('core.name'), missing);

  const other = writeConfig(dir, 'core:\n  name: FromEnv\n', 'other.yaml');
  const byEnv = loadConfig({ env: { HOMEAGENT_CONFIG: other }, systemFile: missing });
  t.equal(byEnv.config.core.name, 'FromEnv', 'HOMEAGENT_CONFIG replaces the system file');
});

t.test('HOMEAGENT_CONFIG pointing to a missing file is an error', async (t) => {
  const dir = tempDir(t);
  const missing = join(dir, 'nope.yaml');
  const error = expectError(t, () => loadConfig({ env: { HOMEAGENT_CONFIG: missing }, systemFile: NO_SYSTEM }), 'HA_ERR_CONFIG_FILE');
  t.match(error.message, missing);
  t.match(error.message, 'no such file');
});

t.test('a YAML syntax error is HA_ERR_CONFIG_FILE naming the file', async (t) => {
  const dir = tempDir(t);
  const file = writeConfig(dir, 'core:\n  name: [unclosed\n  daemon: {\n');
  const error = expectError(t, () => loadConfig({ env: {}, file, systemFile: NO_SYSTEM }), 'HA_ERR_CONFIG_FILE');
  t.match(error.message, file);
  t.ok(problemsOf(error).length > 0);
});

t.test('duplicate keys and a non-mapping top level are file errors', async (t) => {
  const dir = tempDir(t);
  const dup = writeConfig(dir, 'core:\n  name: A\n  name: B\n', 'dup.yaml');
  expectError(t, () => loadConfig({ env: {}, file: dup, systemFile: NO_SYSTEM }), 'HA_ERR_CONFIG_FILE');
  const list = writeConfig(dir, '- core\n- plugin\n', 'list.yaml');
  const error = expectError(t, () => loadConfig({ env: {}, file: list, systemFile: NO_SYSTEM }), 'HA_ERR_CONFIG_FILE');
  t.match(error.message, 'top level must be a mapping');
});

t.test('an invalid file value names key, expected, found and file', async (t) => {
  const dir = tempDir(t);
  const file = writeConfig(dir, 'core:\n  daemon:\n    stop_timeout_ms: 5\n');
  const error = expectError(t, () => loadConfig({ env: {}, file, systemFile: NO_SYSTEM }), 'HA_ERR_CONFIG_INVALID');
  const problems = problemsOf(error);
  t.equal(problems.length, 1, 'one line per problem');
  t.equal(problems[0], `core.daemon.stop_timeout_ms: expected an integer from 1000 to 120000, found 5 (in ${file})`);
  t.match(error.message, problems[0] as string, 'the message carries the problem lines');
});

t.test('an invalid environment value names key, expected, found and variable', async (t) => {
  const error = expectError(
    t,
    () => loadConfig({ env: { HOMEAGENT_DAEMON_STOP_TIMEOUT_MS: 'soon' }, systemFile: NO_SYSTEM }),
    'HA_ERR_CONFIG_INVALID',
  );
  t.same(problemsOf(error), [
    'core.daemon.stop_timeout_ms: expected an integer from 1000 to 120000, found "soon" (from environment variable HOMEAGENT_DAEMON_STOP_TIMEOUT_MS)',
  ]);
});

t.test('several problems at once are all reported, one line each', async (t) => {
  const dir = tempDir(t);
  const file = writeConfig(
    dir,
    [
      'core:',
      '  name: ""',
      '  daemon:',
      '    stop_timeout_ms: 999999',
      '    plugin_timeout_ms: 1.5',
      '  log:',
      '    level: loud',
      '  store:',
      '    startup_check: sometimes',
      '  bogus: 1',
      'plugin:',
      '  cli:',
      '    socket_mode: "999"',
      '  external: 7',
      '',
    ].join('\n'),
  );
  const error = expectError(
    t,
    () =>
      loadConfig({
        env: { HOMEAGENT_PLUGIN_CLI_MAX_FRAME_BYTES: '12', HOMEAGENT_PLUGIN_CLI_ENABLED: 'maybe' },
        file,
        systemFile: NO_SYSTEM,
      }),
    'HA_ERR_CONFIG_INVALID',
  );
  const problems = problemsOf(error);
  t.equal(problems.length, 10, problems.join('\n'));
  const expectLine = (key: string, ...parts: string[]) => {
    const line = problems.find((p) => p.startsWith(`${key}:`));
    t.ok(line, `a line for ${key}`);
    for (const part of parts) t.match(line ?? '', part, `${key} line mentions ${part}`);
  };
  expectLine('core.name', 'a non-empty string of at most 64 characters', 'found ""', file);
  expectLine('core.daemon.stop_timeout_ms', 'an integer from 1000 to 120000', 'found 999999', file);
  expectLine('core.daemon.plugin_timeout_ms', 'an integer from 100 to 120000', 'found 1.5', file);
  expectLine('core.log.level', 'one of fatal, error, warn, info, debug, trace, silent', 'found "loud"', file);
  expectLine('core.store.startup_check', 'one of full, quick, off', 'found "sometimes"', file);
  expectLine('core.bogus', 'unknown key', file);
  expectLine('plugin.cli.socket_mode', 'an octal file mode within 0660', 'found "999"', file);
  expectLine('plugin.external', 'a mapping', 'found 7', file);
  expectLine('plugin.cli.max_frame_bytes', 'an integer from 1024 to 16777216', 'found 12', 'HOMEAGENT_PLUGIN_CLI_MAX_FRAME_BYTES');
  expectLine('plugin.cli.enabled', 'true or false', 'found "maybe"', 'HOMEAGENT_PLUGIN_CLI_ENABLED');
  for (const line of problems) t.notMatch(line, '\n', 'each problem is a single line');
});

t.test('an unknown key in the file is named with the list of known keys', async (t) => {
  const dir = tempDir(t);
  const file = writeConfig(dir, 'core:\n  daemon:\n    stop_timeout: 5000\n');
  const error = expectError(t, () => loadConfig({ env: {}, file, systemFile: NO_SYSTEM }), 'HA_ERR_CONFIG_INVALID');
  t.same(problemsOf(error), [
    `core.daemon.stop_timeout: unknown key (did you mean stop_timeout_ms?), expected one of: stop_timeout_ms, plugin_timeout_ms (in ${file})`,
  ]);

  const top = writeConfig(dir, 'cor:\n  name: x\n', 'top.yaml');
  const topError = expectError(t, () => loadConfig({ env: {}, file: top, systemFile: NO_SYSTEM }), 'HA_ERR_CONFIG_INVALID');
  t.same(problemsOf(topError), [`cor: unknown key (did you mean core?), expected one of: core, plugin (in ${top})`]);
});

t.test('a section given as a scalar is reported', async (t) => {
  const dir = tempDir(t);
  const file = writeConfig(dir, 'core:\n  daemon: fast\n');
  const error = expectError(t, () => loadConfig({ env: {}, file, systemFile: NO_SYSTEM }), 'HA_ERR_CONFIG_INVALID');
  t.same(problemsOf(error), [`core.daemon: expected a section (a mapping), found "fast" (in ${file})`]);
});

t.test('free-form sections of other plugins are kept as given and listed for the plugin host', async (t) => {
  const dir = tempDir(t);
  const file = writeConfig(dir, 'plugin:\n  weather:\n    enabled: false\n    city: Berlin\n  cli:\n    enabled: true\n');
  const loaded = loadConfig({ env: {}, file, systemFile: NO_SYSTEM });
  t.same((loaded.config.plugin as Record<string, unknown>).weather, { enabled: false, city: 'Berlin' });
  t.equal(loaded.config.plugin.cli.enabled, true, 'the built-in plugin section keeps its defaults');
  t.same(loaded.pluginSections, ['weather'], 'only sections the schema does not know wait for a manifest');
});

t.test('unknown keys are refused at every level, inside the built-in plugin sections too, with near misses', async (t) => {
  const dir = tempDir(t);
  const file = writeConfig(
    dir,
    [
      'core:',
      '  knowledge:',
      '    top_kk: 3',
      '  log:',
      '    levels:',
      '      Store: debug',
      '  llm:',
      '    sources:',
      '      spare:',
      '        adapter: openai',
      '        modle: x',
      'plugin:',
      '  cli:',
      '    sockt_path: /run/x.sock',
      '  webui:',
      '    login_max_failurs: 3',
      '    zzzzzzzz: 1',
      '',
    ].join('\n'),
  );
  const problems = problemsOf(expectError(t, () => loadConfig({ env: {}, file, systemFile: NO_SYSTEM }), 'HA_ERR_CONFIG_INVALID'));
  t.equal(problems.length, 6, problems.join('\n'));
  const line = (key: string) => problems.find((p) => p.startsWith(key)) ?? '';
  t.match(line('core.knowledge.top_kk:'), /unknown key \(did you mean top_k\?\), expected one of: .*top_k/);
  t.match(line('core.llm.sources.spare.modle:'), /unknown key, expected one of: adapter, .*model/, 'inside a structured setting');
  t.ok(
    line('core.log.levels.Store:').includes('the name "Store" does not match ^[a-z0-9_.-]+$'),
    'a mapping key outside its pattern is not let through',
  );
  t.match(line('plugin.cli.sockt_path:'), /unknown key \(did you mean socket_path\?\), expected one of: enabled, socket_path/);
  t.match(line('plugin.webui.login_max_failurs:'), 'did you mean login_max_failures?');
  t.match(line('plugin.webui.zzzzzzzz:'), /unknown key, expected one of: enabled, host/, 'no near miss: only the list');
  for (const problem of problems) t.match(problem, file, 'each line names the file');
});

t.test('a list where a mapping belongs is named as a whole', async (t) => {
  const dir = tempDir(t);
  const file = writeConfig(dir, 'core:\n  llm:\n    sources:\n      - adapter: openai\n');
  const problems = problemsOf(expectError(t, () => loadConfig({ env: {}, file, systemFile: NO_SYSTEM }), 'HA_ERR_CONFIG_INVALID'));
  t.same(problems, [`core.llm.sources: expected a mapping (key: value), found [{"adapter":"openai"}] (in ${file})`]);
});

t.test('a socket mode wider than 0660 is refused at load, from the file and the environment', async (t) => {
  const dir = tempDir(t);
  for (const [mode, gained] of [
    ['0666', 'others'],
    ['0662', 'others'],
    ['0670', 'the group'],
    ['0760', 'the owner'],
    ['777', 'the owner and the group and others'],
  ] as const) {
    const file = writeConfig(dir, `plugin:\n  cli:\n    socket_mode: "${mode}"\n`, `mode-${mode}.yaml`);
    const [problem] = problemsOf(expectError(t, () => loadConfig({ env: {}, file, systemFile: NO_SYSTEM }), 'HA_ERR_CONFIG_INVALID'));
    t.match(
      problem,
      `plugin.cli.socket_mode: expected an octal file mode within 0660 (read and write for the owner, read and write for the group, nothing for others), found "${mode}", which gives ${gained} more`,
    );
  }
  const fromEnv = problemsOf(
    expectError(t, () => loadConfig({ env: { HOMEAGENT_PLUGIN_CLI_SOCKET_MODE: '0606' }, systemFile: NO_SYSTEM }), 'HA_ERR_CONFIG_INVALID'),
  );
  t.match(fromEnv[0], /plugin\.cli\.socket_mode: .*found "0606", which gives others more .*HOMEAGENT_PLUGIN_CLI_SOCKET_MODE/);
  for (const mode of ['0660', '0600', '660', '0640', '0000']) {
    const file = writeConfig(dir, `plugin:\n  cli:\n    socket_mode: "${mode}"\n`, `ok-${mode}.yaml`);
    t.equal(loadConfig({ env: {}, file, systemFile: NO_SYSTEM }).config.plugin.cli.socket_mode, mode, `${mode} is accepted`);
  }
});

t.test('an unknown HOMEAGENT_ variable with a near miss names it', async (t) => {
  const loaded = loadConfig({ env: { HOMEAGENT_LOG_LEVL: 'debug' }, systemFile: NO_SYSTEM });
  t.same(loaded.warnings, [
    'HOMEAGENT_LOG_LEVL is not a HomeAgent setting and is ignored (did you mean HOMEAGENT_LOG_LEVEL or HOMEAGENT_LOG_LEVELS?)',
  ]);
});

t.test('an unknown HOMEAGENT_ variable is a warning, not an error', async (t) => {
  const loaded = loadConfig({ env: { HOMEAGENT_FOO: 'bar', HOMEAGENT_SOCKET: '/run/x.sock' }, systemFile: NO_SYSTEM });
  t.same(loaded.warnings, ['HOMEAGENT_FOO is not a HomeAgent setting and is ignored']);
  t.same(loaded.config, defaultConfig());
});

t.test('secret values never appear in error messages', async (t) => {
  const secret = `sk-${'s3cr3t'.repeat(700)}`; // longer than the 4096 characters allowed
  const error = expectError(
    t,
    () => loadConfig({ env: { HOMEAGENT_LLM_API_KEY: secret }, systemFile: NO_SYSTEM }),
    'HA_ERR_CONFIG_INVALID',
  );
  const problems = problemsOf(error);
  t.equal(problems.length, 1);
  t.match(problems[0], 'core.llm.api_key');
  t.match(problems[0], 'a value (hidden: secret)');
  t.match(problems[0], 'HOMEAGENT_LLM_API_KEY');
  t.notMatch(error.message, 's3cr3t');
  t.notMatch(JSON.stringify(error.details), 's3cr3t');

  const dir = tempDir(t);
  const file = writeConfig(dir, 'core:\n  llm:\n    api_key: 123456789\n');
  const fileError = expectError(t, () => loadConfig({ env: {}, file, systemFile: NO_SYSTEM }), 'HA_ERR_CONFIG_INVALID');
  t.match(fileError.message, 'core.llm.api_key: expected a string of at most 4096 characters, found a value (hidden: secret)');
  t.notMatch(fileError.message, '123456789');
});

t.test('a valid secret from the environment is loaded', async (t) => {
  const loaded = loadConfig({ env: { HOMEAGENT_LLM_API_KEY: 'sk-live-1' }, systemFile: NO_SYSTEM });
  t.equal(loaded.config.core.llm.api_key, 'sk-live-1');
  t.equal(loaded.sources.get('core.llm.api_key'), 'env:HOMEAGENT_LLM_API_KEY');
});

t.test('text from the environment is coerced to booleans and numbers', async (t) => {
  const cases: Array<[Record<string, string>, string, unknown]> = [
    [{ HOMEAGENT_PLUGIN_CLI_ENABLED: 'yes' }, 'plugin.cli.enabled', true],
    [{ HOMEAGENT_PLUGIN_CLI_ENABLED: 'NO' }, 'plugin.cli.enabled', false],
    [{ HOMEAGENT_PLUGIN_CLI_ENABLED: '0' }, 'plugin.cli.enabled', false],
    [{ HOMEAGENT_PLUGIN_CLI_ENABLED: '1' }, 'plugin.cli.enabled', true],
    [{ HOMEAGENT_PLUGIN_CLI_ENABLED: ' off ' }, 'plugin.cli.enabled', false],
    [{ HOMEAGENT_DAEMON_STOP_TIMEOUT_MS: '1e3' }, 'core.daemon.stop_timeout_ms', 1000],
    [{ HOMEAGENT_SETTINGS_HISTORY_MAX_ROWS: ' 12 ' }, 'core.settings.history_max_rows', 12],
    [{ HOMEAGENT_SETTINGS_HISTORY_MAX_ROWS: '0' }, 'core.settings.history_max_rows', 0],
    [{ HOMEAGENT_LOG_LEVELS: '{"store":"debug"}' }, 'core.log.levels', { store: 'debug' }],
    [{ HOMEAGENT_NAME: ' Spaced ' }, 'core.name', ' Spaced '],
  ];
  for (const [env, key, expected] of cases) {
    const loaded = loadConfig({ env, systemFile: NO_SYSTEM });
    t.same(getByKey(loaded.config, key), expected, `${JSON.stringify(env)} → ${JSON.stringify(expected)}`);
  }
  const notInteger = expectError(
    t,
    () => loadConfig({ env: { HOMEAGENT_DAEMON_STOP_TIMEOUT_MS: '1500.5' }, systemFile: NO_SYSTEM }),
    'HA_ERR_CONFIG_INVALID',
  );
  t.match(problemsOf(notInteger)[0], 'found 1500.5');
  const empty = expectError(
    t,
    () => loadConfig({ env: { HOMEAGENT_DAEMON_STOP_TIMEOUT_MS: '' }, systemFile: NO_SYSTEM }),
    'HA_ERR_CONFIG_INVALID',
  );
  t.match(problemsOf(empty)[0], 'found ""', 'empty text is not zero');
});

t.test('loading does not share state between calls', async (t) => {
  const a = loadConfig({ env: {}, systemFile: NO_SYSTEM });
  a.config.core.log.levels.store = 'trace';
  const b = loadConfig({ env: {}, systemFile: NO_SYSTEM });
  t.same(b.config.core.log.levels, {}, 'defaults are copied, not shared');
  const def = BUILTIN_DEFINITIONS.find((d) => d.key === 'core.log.levels');
  t.same(def?.default, {});
});

t.test('setByKey and getByKey', async (t) => {
  const target: Record<string, unknown> = {};
  setByKey(target, 'plugin.x.y', 3);
  t.same(target, { plugin: { x: { y: 3 } } });
  t.equal(getByKey(target, 'plugin.x.y'), 3);
  t.equal(getByKey(target, 'plugin.x.z'), undefined);
  t.equal(getByKey(target, 'plugin.x.y.deeper'), undefined);
});

t.test('list items written short get their defaults; a bad field is named by item and path', async (t) => {
  const dir = tempDir(t);
  const good = writeConfig(dir, ['plugin:', '  gpio:', '    pins:', '      - { id: hall_light, bcm: 17, direction: out }', ''].join('\n'));
  const loaded = loadConfig({ file: good, env: {}, systemFile: NO_SYSTEM });
  const [pin] = loaded.config.plugin.gpio.pins;
  t.match(pin, { id: 'hall_light', bcm: 17, direction: 'out', safe: 0, debounce_ms: 20, max_on_time_s: 0, aliases: [] });

  const bad = writeConfig(
    dir,
    ['plugin:', '  gpio:', '    pins:', '      - { id: hall_light, bcm: 99, direction: out }', ''].join('\n'),
    'bad.yaml',
  );
  const error = expectError(t, () => loadConfig({ file: bad, env: {}, systemFile: NO_SYSTEM }), 'HA_ERR_CONFIG_INVALID') as HomeAgentError;
  t.match(error.message, /plugin\.gpio\.pins\[0\]\.bcm: .*57, found 99/);
});

/**
 * The built daemon refusing configuration it does not know or must not accept: an unknown key
 * inside a built-in plugin's section, a socket mode wider than 0660, a key the manifest of an
 * installed plugin does not declare (found only once the plugin host read the manifests, still
 * before anything starts): exit 78 naming each. A section of a plugin that is not installed is a
 * warning, once, and the daemon runs. `homeagentctl config set` refuses an unknown key and a too
 * wide mode with exit 78 too.
 */
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { runHomeagent, spawnDaemon, tempDir } from '../helpers/daemon.js';

function writeConfig(dir: string, lines: string[]): string {
  const file = join(dir, 'config.yaml');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** An installed plugin (in <data>/plugins) declaring plugin.weather.city. */
function installWeather(dataDir: string): void {
  const dir = join(dataDir, 'plugins', 'weather');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'plugin.json'),
    JSON.stringify({
      name: 'weather',
      version: '1.0.0',
      description: 'A test plugin with one setting.',
      engine: '>=0.1.0',
      kind: 'process',
      entry: 'index.js',
      config: { city: { type: 'string', default: 'Paris', description: 'Where.' } },
    }),
  );
  writeFileSync(
    join(dir, 'index.js'),
    "export default { kind: 'homeagent-plugin', create() { return { async start() {}, async stop() {} }; } };\n",
  );
}

const problemLines = (stderr: string) => stderr.split('\n').filter((l) => l.startsWith('  '));

t.test('unknown keys in built-in sections and a socket mode wider than 0660: exit 78, one line each', async (t) => {
  const dir = tempDir(t);
  const dataDir = join(dir, 'data');
  const config = writeConfig(dir, [
    'plugin:',
    '  cli:',
    '    socket_mode: "0666"',
    '    sockt_path: /tmp/x.sock',
    '  webui:',
    '    portt: 1',
  ]);
  const r = await runHomeagent(['run'], { dataDir, env: { HOMEAGENT_CONFIG: config } });
  t.equal(r.code, 78, 'exit 78 (EX_CONFIG)');
  const problems = problemLines(r.stderr);
  t.equal(problems.length, 3, r.stderr);
  t.ok(
    problems.some((l) =>
      /plugin\.cli\.socket_mode: expected an octal file mode within 0660 .*found "0666", which gives others more/.test(l),
    ),
  );
  t.ok(problems.some((l) => /plugin\.cli\.sockt_path: unknown key \(did you mean socket_path\?\)/.test(l)));
  t.ok(problems.some((l) => /plugin\.webui\.portt: unknown key \(did you mean port\?\)/.test(l)));
});

t.test("a key an installed plugin's manifest does not declare: exit 78 before any plugin starts", async (t) => {
  const dir = tempDir(t);
  const dataDir = join(dir, 'data');
  installWeather(dataDir);
  const config = writeConfig(dir, ['plugin:', '  weather:', '    citty: Berlin']);
  const r = await runHomeagent(['run'], { dataDir, env: { HOMEAGENT_CONFIG: config, HOMEAGENT_PLUGIN_WEBUI_PORT: '0' } });
  t.equal(r.code, 78, `exit 78: ${r.stderr}`);
  const problems = problemLines(r.stderr);
  t.equal(problems.length, 1, r.stderr);
  t.match(problems[0], /plugin\.weather\.citty: unknown key \(did you mean city\?\), expected one of: enabled, city .*in .*config\.yaml/);
  t.notOk(
    (() => {
      try {
        return statSync(join(dataDir, 'run', 'homeagent.sock')).isSocket();
      } catch {
        return false;
      }
    })(),
    'the CLI socket was never opened (no plugin started)',
  );
});

t.test(
  'a section of a plugin that is not installed is warned about once; config set refuses unknown keys and wide modes with 78',
  async (t) => {
    const dir = tempDir(t);
    const dataDir = join(dir, 'data');
    installWeather(dataDir);
    const config = writeConfig(dir, ['plugin:', '  weather:', '    city: Berlin', '  wether:', '    city: Rome']);
    const daemon = spawnDaemon(t, { dataDir, env: { HOMEAGENT_CONFIG: config } });
    await daemon.waitForReady();
    const warnings = daemon.logs.filter((l) => l.msg?.startsWith('plugin.wether in '));
    t.equal(warnings.length, 1, 'one warning');
    t.match(warnings[0]?.msg, /no plugin named wether is installed, so the section is not used \(did you mean weather\?\)/);
    t.equal(warnings[0]?.json?.level, 'warn');
    t.match(
      (await daemon.ctl(['config', 'get', 'plugin.weather.city', '--json'])).json(),
      { value: 'Berlin' },
      'the section that fits is used',
    );

    const unknown = await daemon.ctl(['config', 'set', 'plugin.weather.citty', 'Rome', '--json']);
    t.equal(unknown.code, 78);
    t.match(unknown.json(), {
      ok: false,
      error: {
        code: 'HA_ERR_SETTINGS_UNKNOWN_KEY',
        message: /no setting named plugin\.weather\.citty; did you mean plugin\.weather\.city\?/,
      },
    });
    const wide = await daemon.ctl(['config', 'set', 'plugin.cli.socket_mode', '0666']);
    t.equal(wide.code, 78);
    t.match(wide.stderr, /plugin\.cli\.socket_mode: expected an octal file mode within 0660/);
    t.match((await daemon.ctl(['config', 'get', 'plugin.cli.socket_mode', '--json'])).json(), { value: '0660' });
    t.equal(statSync(daemon.socketPath).mode & 0o777, 0o660, 'the socket is 0660');
  },
);

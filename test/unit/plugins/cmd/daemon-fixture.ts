/**
 * A daemon's secrets laid out for real, for the cmd plugin's isolation tests: a data folder with a
 * state.db (a real SQLite file holding a secret row), a backup of it under backups/, the web
 * page's credentials.json, a configuration file (its own folder) that names a TLS key file in a
 * third folder, the kernel's `config.list` answered by a real SettingsRegistry over that state.db
 * and that file, and a "daemon" process of this user whose environment holds an API key. The
 * plugin under test gets a context over the same data folder.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import { BUILTIN_DEFINITIONS } from '../../../../src/config/definitions.js';
import { loadConfig } from '../../../../src/config/loader.js';
import { SettingsRegistry } from '../../../../src/config/settings-registry.js';
import { EventBus } from '../../../../src/events/event-bus.js';
import { systemClock } from '../../../../src/shared/clock.js';
import { createTestPluginContext, type TestPluginContext } from '../../../helpers/plugin-context.js';
import { silentLogs, startStore, type Teardown, tempDir } from '../../fixtures/support.js';

export const SECRET = 'sk-canary-7f3a9c2e41d8';
const NO_SYSTEM = '/nonexistent/homeagent/config.yaml';

export interface DaemonFixture {
  tc: TestPluginContext;
  /** Real paths. */
  data: string;
  /** The plugin's own folder, the default working directory. */
  cwd: string;
  config: string;
  keyFile: string;
  backup: string;
  credentials: string;
  /** A process of this user with HOMEAGENT_LLM_API_KEY=SECRET in its environment; its cwd is the data folder. */
  daemon: ChildProcess & { pid: number };
}

export const CMD_DEFAULTS = {
  timeout_ms: 30000,
  max_output_bytes: 32000,
  workdir: '',
  history: 100,
  isolation: 'in_process',
  runner_socket: '/nonexistent/homeagent-cmd/cmd.sock',
};

export async function daemonFixture(t: Teardown, pluginSettings: Record<string, unknown>): Promise<DaemonFixture> {
  const data = realpathSync(tempDir(t, 'ha-cmd-data-'));
  const configDir = realpathSync(tempDir(t, 'ha-cmd-etc-'));
  const keyDir = realpathSync(tempDir(t, 'ha-cmd-tls-'));
  const keyFile = join(keyDir, 'client.key');
  writeFileSync(keyFile, `-----BEGIN PRIVATE KEY-----\n${SECRET}\n-----END PRIVATE KEY-----\n`);
  const config = join(configDir, 'config.yaml');
  writeFileSync(config, `plugin:\n  mqtt:\n    key_file: ${keyFile}\n`);

  const { store } = await startStore(t, data);
  const state = store.database('state');
  state.db.exec(`CREATE TABLE canary (secret TEXT); INSERT INTO canary VALUES ('${SECRET}')`);
  mkdirSync(join(data, 'backups'));
  const backup = join(data, 'backups', 'state-2026-01-31T03-00-00.db');
  await state.backup(backup);
  const credentials = join(data, 'plugin-data', 'webui', 'credentials.json');
  mkdirSync(join(data, 'plugin-data', 'webui'), { recursive: true });
  writeFileSync(credentials, JSON.stringify({ password_hash: SECRET }));

  const logs = silentLogs();
  const settings = new SettingsRegistry({
    database: () => store.database('state'),
    definitions: BUILTIN_DEFINITIONS,
    loaded: loadConfig({ file: config, env: {}, systemFile: NO_SYSTEM }),
    events: new EventBus(logs.child('events')),
    logs,
    clock: systemClock,
  });
  await settings.start();
  t.teardown(() => settings.stop());

  const tc = createTestPluginContext({ name: 'cmd', dataDir: data, settings: { ...CMD_DEFAULTS, ...pluginSettings } });
  t.teardown(() => tc.close());
  // The kernel's config.list (src/supervisor/kernel-methods.ts) answers exactly this.
  tc.control.register({
    name: 'config.list',
    description: 'Every setting whose key starts with prefix.',
    params: Type.Object({ prefix: Type.Optional(Type.String({ maxLength: 256 })) }),
    handler: ({ prefix }) => settings.list(prefix ?? ''),
  });

  const daemon = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1e9)'], {
    cwd: data,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOMEAGENT_LLM_API_KEY: SECRET },
    stdio: 'ignore',
  });
  t.teardown(() => void daemon.kill('SIGKILL'));
  if (daemon.pid === undefined) throw new Error('the stand-in daemon did not start');
  return {
    tc,
    data,
    cwd: realpathSync(tc.context.paths.data),
    config,
    keyFile,
    backup,
    credentials,
    daemon: daemon as ChildProcess & { pid: number },
  };
}

/** The outside tester's ten reads, with this daemon's pid and data folder. */
export function tenReads(pid: number, data: string): string[][] {
  return [
    ['cat', `/proc/${pid}/./environ`],
    ['cat', `/proc//${pid}/environ`],
    ['cat', `/proc/self/../${pid}/environ`],
    ['ps', `ewwp${pid}`],
    ['grep', '-a', '-r', '--include=environ', SECRET, `/proc/${pid}`],
    ['grep', '-a', '-r', SECRET, data],
    ['grep', SECRET, `${data}/backups/state-*.db`],
    ['cat', `${data}/plugin-data/webui/credentials.json`],
    ['grep', '-f', `/proc/${pid}/./environ`, '/etc/hostname'],
    ['du', `--files0-from=/proc/${pid}/./environ`],
  ];
}

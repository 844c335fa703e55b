/**
 * The remotedevice tests' rig: the real plugin (its real gateway on a loopback port chosen by the
 * system) in a test plugin context with a real entity registry, media store and control registry,
 * and the real companion client (tools/companion/companion.mjs) as a child process over a real
 * socket. A device is added the way `homeagentctl devices add` adds it (the control method, as the
 * owner); the companion's printed lines are what the tests wait for.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Value } from '@sinclair/typebox/value';
import { RemotedevicePlugin } from '../../../plugins/remotedevice/index.js';
import { settingsSchema } from '../../../plugins/remotedevice/settings-schema.js';
import { ToolError } from '../../../src/shared/tool.js';
import { createTestPluginContext, type TestPluginContext } from '../../helpers/plugin-context.js';
import { until } from '../../helpers/until.js';
import { type Teardown, tempDir } from '../fixtures/support.js';

export const COMPANION = resolve(fileURLToPath(import.meta.url), '../../../../tools/companion/companion.mjs');
export const OWNER = { actor: 'cli', owner: true, proof: 'the CLI socket' };

/** A real 2x1 PNG. */
export const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAYAAAD0In+KAAAAEUlEQVR42mP8z8DwnwEJMAIAEP8B/0Z8wrIAAAAASUVORK5CYII=',
  'base64',
);

/** A short real WAV: 8 kHz mono 16-bit, 80 samples of silence. */
export function wav(samples = 80): Buffer {
  const data = Buffer.alloc(samples * 2);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVE', 8);
  header.write('fmt ', 12);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(16000, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

export const DEFAULTS = Value.Default(settingsSchema, {}) as Record<string, unknown>;

export interface Companion {
  child: ChildProcessWithoutNullStreams;
  lines: string[];
  /** Resolves with the first line (from `from` on) matching. */
  waitFor(pattern: RegExp, from?: number): Promise<string>;
  exited: Promise<number | null>;
}

export interface Rig {
  tc: TestPluginContext;
  plugin: RemotedevicePlugin;
  dataDir: string;
  url(): string;
  add(id: string, options?: { name?: string; capabilities?: string[] }): Promise<string>;
  companion(args: string[]): Companion;
  /** Stops the plugin and starts a new one on the same data (a daemon restart, as far as the plugin sees it). */
  restart(): Promise<void>;
  state(id: string): Promise<string | null | number | undefined>;
}

export async function startRig(
  t: Teardown,
  settings: Record<string, unknown> = {},
  dataDir = tempDir(t, 'ha-remotedevice-'),
): Promise<Rig> {
  const tc = createTestPluginContext({ name: 'remotedevice', dataDir, settings: { ...DEFAULTS, enabled: true, ...settings } });
  t.teardown(() => tc.close());
  let plugin = new RemotedevicePlugin(tc.context, { port: 0 });
  await plugin.start();
  t.teardown(() => plugin.stop());
  const rig: Rig = {
    tc,
    get plugin() {
      return plugin;
    },
    dataDir,
    url: () => plugin.url,
    add: async (id, options = {}) => {
      const answer = (await tc.control.call('remotedevice.add', { id, ...options }, OWNER)) as { token: string };
      return answer.token;
    },
    companion: (args) => {
      const child = spawn(
        process.execPath,
        [COMPANION, '--url', plugin.url, '--reconnect-min-ms', '100', '--reconnect-max-ms', '500', ...args],
        {
          env: { ...process.env, LANG: 'C' },
        },
      );
      const lines: string[] = [];
      const waiters: Array<{ pattern: RegExp; from: number; resolve: (line: string) => void }> = [];
      createInterface({ input: child.stdout }).on('line', (line) => {
        lines.push(line);
        for (const waiter of [...waiters]) {
          if (waiter.pattern.test(line) && lines.length > waiter.from) {
            waiters.splice(waiters.indexOf(waiter), 1);
            waiter.resolve(line);
          }
        }
      });
      child.stderr.resume();
      const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
      t.teardown(async () => {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill('SIGCONT');
          child.kill('SIGKILL');
          await exited;
        }
      });
      return {
        child,
        lines,
        exited,
        waitFor: (pattern, from = 0) => {
          const found = lines.slice(from).find((line) => pattern.test(line));
          if (found !== undefined) return Promise.resolve(found);
          return new Promise<string>((resolveLine, reject) => {
            const timer = setTimeout(() => reject(new Error(`no companion line ${pattern}; it printed:\n${lines.join('\n')}`)), 30_000);
            waiters.push({
              pattern,
              from,
              resolve: (line) => {
                clearTimeout(timer);
                resolveLine(line);
              },
            });
          });
        },
      };
    },
    restart: async () => {
      const port = Number(new URL(plugin.url).port);
      await plugin.stop();
      plugin = new RemotedevicePlugin(tc.context, { port });
      await plugin.start();
    },
    state: async (id) => (await tc.entities.resolve(`binary_sensor.device_${id}`)).state as string | null | number | undefined,
  };
  return rig;
}

/** The ToolError a tool call fails with (the test fails when the call succeeds or throws something else). */
export async function toolError(promise: Promise<unknown>): Promise<ToolError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ToolError) return error;
    throw error;
  }
  throw new Error('the tool call succeeded');
}

export { join, until };

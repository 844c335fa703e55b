/**
 * A kbtree plugin on real parts: a PluginGeneration (the context the daemon builds, with its trust
 * checks and staged registrations) over a real SettingsRegistry (config from a loaded environment),
 * a real ControlRegistry with PluginControlMethods, and a real KnowledgeService on SQLite in a temp
 * directory. Requests go over real TCP with node:http.
 */
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { KbtreePlugin } from '../../../../plugins/kbtree/index.js';
import { StageRegistry } from '../../../../src/agent/stage-registry.js';
import { ToolRegistry } from '../../../../src/agent/tool-registry.js';
import { BUILTIN_DEFINITIONS } from '../../../../src/config/definitions.js';
import { loadConfig } from '../../../../src/config/loader.js';
import { SettingsRegistry } from '../../../../src/config/settings-registry.js';
import { EventBus } from '../../../../src/events/event-bus.js';
import { InputScheduler } from '../../../../src/io/input-scheduler.js';
import { IoManager } from '../../../../src/io/io-manager.js';
import { ControlRegistry } from '../../../../src/plugin/control-registry.js';
import { HttpRouteRegistry } from '../../../../src/plugin/http-routes.js';
import { checkManifest } from '../../../../src/plugin/manifest.js';
import {
  type HostKnowledge,
  type KernelServices,
  PluginControlMethods,
  PluginGeneration,
} from '../../../../src/plugin/plugin-generation.js';
import type { PluginTrust } from '../../../../src/sdk/plugin.js';
import { systemClock } from '../../../../src/shared/clock.js';
import { type CapturedLogs, captureLogs, startStore, type Teardown, tempDir } from '../../fixtures/support.js';
import { startKnowledge } from './knowledge-setup.js';

export const PLUGIN_ROOT = join(import.meta.dirname, '..', '..', '..', '..', 'plugins', 'kbtree');
const NO_SYSTEM = '/nonexistent/homeagent/config.yaml';

export interface Kernel {
  services: KernelServices;
  control: ControlRegistry;
  controlMethods: PluginControlMethods;
  settings: SettingsRegistry;
  captured: CapturedLogs;
  dir: string;
}

export interface KernelOptions {
  /** HOMEAGENT_* variables (the loaded configuration). */
  env?: Record<string, string>;
  /** The library; `null` for a daemon without one; a fresh real KnowledgeService by default. */
  knowledge?: HostKnowledge | null;
}

/** Real kernel parts a plugin context reaches; everything is stopped at teardown. */
export async function startKernel(t: Teardown, options: KernelOptions = {}): Promise<Kernel> {
  const dir = tempDir(t, 'ha-kbtree-');
  const captured = captureLogs();
  const { store } = await startStore(t, dir, { logs: captured.logs });
  const events = new EventBus(captured.logs.child('events'));
  const settings = new SettingsRegistry({
    database: () => store.database('state'),
    definitions: BUILTIN_DEFINITIONS,
    loaded: loadConfig({ env: options.env ?? {}, systemFile: NO_SYSTEM }),
    events,
    logs: captured.logs,
    clock: systemClock,
  });
  await settings.start();
  t.teardown(() => settings.stop());
  const log = captured.logs.child('agent');
  const scheduler = new InputScheduler({
    runner: { run: async () => ({ text: '' }) },
    limits: () => ({ dedupe_window_ms: 0, ready_queue_size: 8, interrupt_queue_size: 8 }),
    log,
  });
  const control = new ControlRegistry();
  const controlMethods = new PluginControlMethods(control);
  const knowledge = options.knowledge === undefined ? await startKnowledge(t, join(dir, 'data')) : options.knowledge;
  const services: KernelServices = {
    settings,
    events,
    logs: captured.logs,
    control,
    controlMethods,
    io: new IoManager(),
    scheduler,
    tools: new ToolRegistry({ log }),
    stages: new StageRegistry(log),
    routes: new HttpRouteRegistry(),
    ...(knowledge === null ? {} : { knowledge }),
    newId: randomUUID,
    now: Date.now,
  };
  return { services, control, controlMethods, settings, captured, dir };
}

/** A generation of the kbtree plugin (or of another name/trust, for the context's own checks). */
export function generation(kernel: Kernel, options: { name?: string; trust?: PluginTrust } = {}): PluginGeneration {
  const name = options.name ?? 'kbtree';
  const manifest = checkManifest(
    {
      name,
      version: '0.1.0',
      description: `the ${name} plugin`,
      engine: '>=0.1.0',
      kind: options.trust === 'external' ? 'process' : 'builtin',
      entry: 'index.js',
    },
    'test',
  );
  return new PluginGeneration({
    manifest,
    trust: options.trust ?? 'builtin',
    root: PLUGIN_ROOT,
    dataDir: join(kernel.dir, 'plugin-data', name),
    runtimeDir: join(kernel.dir, 'run'),
    kernel: kernel.services,
  });
}

export interface Running {
  plugin: KbtreePlugin;
  generation: PluginGeneration;
  port: number;
  /** The token logged at start (or the configured one). */
  token: string;
  stop(): Promise<void>;
}

/** Starts kbtree on an ephemeral port through a committed generation, as the host does. */
export async function startKbtree(t: Teardown, kernel: Kernel): Promise<Running> {
  const gen = generation(kernel);
  const plugin = new KbtreePlugin(gen.context, { port: 0 });
  gen.instance = plugin;
  await plugin.start();
  gen.commit();
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    gen.retire();
    await plugin.stop();
    await gen.removeAll();
  };
  t.teardown(stop);
  const info = (await kernel.control.call('kbtree.token', {}, { actor: 'cli' })) as { token: string };
  return { plugin, generation: gen, port: plugin.address()?.port ?? 0, token: info.token, stop };
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}

/** One HTTP request on its own connection; the body parsed as JSON. */
export function request(
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string>; host?: string } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: options.host ?? '127.0.0.1', port, path, method: options.method ?? 'GET', headers: options.headers ?? {}, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: Record<string, unknown> = {};
          if (text !== '') body = JSON.parse(text) as Record<string, unknown>;
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** A GET with the token as X-API-Key. */
export function get(running: Running, path: string): Promise<Reply> {
  return request(running.port, path, { headers: { 'x-api-key': running.token } });
}

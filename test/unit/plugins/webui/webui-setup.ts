/**
 * A webui plugin on a test plugin context (createTestPluginContext: a real ControlRegistry and
 * route table), listening on an ephemeral port, with plugin.webui.* at their defaults unless the
 * test says otherwise. Requests go over real TCP with node:http, the Host header as the test sets it.
 */
import { request as httpRequest } from 'node:http';
import type { WebuiPluginOptions } from '../../../../plugins/webui/index.js';
import { WebuiPlugin } from '../../../../plugins/webui/index.js';
import type { RouteModule, WebuiSettings } from '../../../../plugins/webui/types.js';
import { defaultConfig } from '../../../../src/config/loader.js';
import type { LogManager } from '../../../../src/log/logger.js';
import { createTestPluginContext, type TestPluginContext } from '../../../helpers/plugin-context.js';
import { type Teardown, tempDir } from '../../fixtures/support.js';

export interface WebuiSetupOptions {
  settings?: Partial<WebuiSettings>;
  routeModules?: RouteModule[];
  pageDir?: string;
  now?: () => number;
  /** Reuse a data directory (a restart); a fresh one by default. */
  dataDir?: string;
  /** A fixed port (hot-reload tests); an ephemeral one by default. */
  port?: number;
  /** Whether "stderr" is a terminal (the first start prints the credentials only to one); true by default. */
  terminal?: boolean;
  /** Where the plugin's log lines go; silent by default. */
  logs?: LogManager;
}

export interface RunningWebui {
  plugin: WebuiPlugin;
  test: TestPluginContext;
  port: number;
  password: string;
  apiKey: string;
  dataDir: string;
  /** What the first start printed to "stderr". */
  printed: string[];
  stop(): Promise<void>;
}

export function webuiSettings(overrides: Partial<WebuiSettings> = {}): WebuiSettings {
  return { ...(defaultConfig().plugin.webui as WebuiSettings), ...overrides };
}

export async function startWebui(t: Teardown, options: WebuiSetupOptions = {}): Promise<RunningWebui> {
  const dataDir = options.dataDir ?? tempDir(t, 'ha-webui-');
  const test = createTestPluginContext({
    name: 'webui',
    dataDir,
    settings: { ...webuiSettings(options.settings) },
    ...(options.logs && { logs: options.logs }),
  });
  const printed: string[] = [];
  const pluginOptions: WebuiPluginOptions = {
    routeModules: options.routeModules ?? [],
    port: options.port ?? 0,
    pageDir: options.pageDir ?? `${dataDir}/no-page`,
    stderr: { write: (text: string) => printed.push(text), isTTY: options.terminal ?? true },
  };
  if (options.now) pluginOptions.now = options.now;
  const plugin = new WebuiPlugin(test.context, pluginOptions);
  await plugin.start();
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await plugin.stop();
    await test.close();
  };
  t.teardown(stop);
  const secrets = (await test.control.call('webui.credentials', {}, { actor: 'cli' })) as { password: string; api_key: string };
  return {
    plugin,
    test,
    port: plugin.address()?.port ?? 0,
    password: secrets.password,
    apiKey: secrets.api_key,
    dataDir,
    printed,
    stop,
  };
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The body parsed as JSON ({} when empty or not JSON). */
  body: Record<string, unknown>;
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string>;
  /** The Host header; `127.0.0.1:<port>` by default, `null` to send none. */
  host?: string | null;
  body?: unknown;
}

/** One request on its own connection. */
export function send(port: number, path: string, options: RequestOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  let payload: Buffer | undefined;
  if (options.body !== undefined) {
    payload = Buffer.isBuffer(options.body)
      ? options.body
      : Buffer.from(typeof options.body === 'string' ? options.body : JSON.stringify(options.body));
    headers['content-type'] ??= 'application/json';
    headers['content-length'] = String(payload.length);
  }
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers, agent: false, setHost: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: Record<string, unknown> = {};
          try {
            if (text !== '') body = JSON.parse(text) as Record<string, unknown>;
          } catch {
            // not JSON: the test reads `text`
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
        });
        res.on('error', reject);
      },
    );
    if (options.host !== null) req.setHeader('host', options.host ?? `127.0.0.1:${port}`);
    req.on('error', reject);
    req.end(payload);
  });
}

/** The session cookie value of a login answer. */
export function sessionFrom(reply: Reply): string {
  const cookie = [reply.headers['set-cookie'] ?? []].flat().find((c) => c.startsWith('ha_session='));
  const id = cookie?.slice('ha_session='.length).split(';')[0];
  if (!id) throw new Error(`no session cookie in ${JSON.stringify(reply.headers)}`);
  return id;
}

/** Logs in over HTTP as the page does; answers the cookie header to send. */
export async function login(running: RunningWebui): Promise<string> {
  const reply = await send(running.port, '/api/v1/auth/login', {
    method: 'POST',
    body: { password: running.password },
    headers: { 'sec-fetch-site': 'same-origin' },
  });
  if (reply.status !== 200) throw new Error(`login failed: ${reply.status} ${reply.text}`);
  return `ha_session=${sessionFrom(reply)}`;
}

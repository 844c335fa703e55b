/**
 * The web page in a real browser against the real daemon, for the browser tests and the
 * screenshot script (scripts/screenshots.mjs): Debian's chromium driven by playwright-core (no
 * browser download), a daemon with a simulated home (GPIO relays, a door contact, a BME280 on a
 * simulated I2C bus) and a scripted LLM server, its web credentials read over the CLI socket as
 * `homeagentctl webui credentials` reads them, and an API-key client for what the test sets up or
 * checks behind the page's back. A failed step keeps a screenshot in the test's fixture directory
 * (.tap/fixtures/...) and names it in the failure.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { type HelperTest, tempDir } from './daemon.js';
import { type InProcessDaemonHandle as DaemonHandle, startDaemon } from './in-process-daemon.js';
import { RpcConnection } from './rpc.js';
import { type ScriptedServer, type ScriptStep, startScriptedServer } from './scripted-llm-server.js';

/** Debian's chromium (.ci/run installs it); HOMEAGENT_TEST_CHROMIUM points elsewhere. */
export const CHROMIUM_PATH = process.env.HOMEAGENT_TEST_CHROMIUM ?? '/usr/bin/chromium';

/** Why browser tests cannot run here, or undefined when they can. */
export function chromiumMissing(): string | undefined {
  return existsSync(CHROMIUM_PATH)
    ? undefined
    : `no chromium at ${CHROMIUM_PATH} (apt-get install chromium, or set HOMEAGENT_TEST_CHROMIUM)`;
}

export async function launchChromium(t: HelperTest): Promise<Browser> {
  // --no-sandbox: CI runs as root in a container, where chromium's sandbox cannot start.
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox'] });
  t.teardown(() => browser.close());
  return browser;
}

/** A phone (the page is built for one first) and a laptop. */
export const PHONE = { width: 390, height: 844 };
export const LAPTOP = { width: 1280, height: 800 };

/** The simulated home: two areas, two relays, a door contact and a climate sensor. */
export const HOME_CONFIG = {
  core: {
    home: {
      areas: [
        { id: 'hall', name: 'Hall', aliases: [] },
        { id: 'living_room', name: 'Living room', aliases: ['lounge'] },
      ],
    },
  },
  plugin: {
    gpio: {
      backend: 'simulated',
      pins: [
        // An active-low relay board channel: on = low wire.
        { id: 'hall_relay', name: 'Hall light', bcm: 17, direction: 'out', active_low: true, safe: 0, area: 'hall' },
        { id: 'reading_lamp', name: 'Reading lamp', bcm: 18, direction: 'out', domain: 'light', safe: 0, area: 'living_room' },
        { id: 'front_door', name: 'Front door', bcm: 22, direction: 'in', domain: 'binary_sensor', area: 'hall', debounce_ms: 20 },
      ],
    },
    i2c: {
      buses: [{ bus: 1, backend: 'simulated' }],
      sensors: [{ id: 'lounge', name: 'Lounge', driver: 'bme280', bus: 1, interval_s: 1, area: 'living_room' }],
    },
  },
};

/** The relay's entity and its wire as the simulator writes it ("0"/"1"). */
export const RELAY_ENTITY = 'switch.hall_relay';
export function relayWire(home: WebuiHome): string | undefined {
  const file = join(home.daemon.dataDir, 'plugin-data', 'gpio', 'simulated-gpio', 'gpio17');
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : undefined;
}

export interface WebuiHome {
  daemon: DaemonHandle;
  llm: ScriptedServer;
  /** The page's address, `http://127.0.0.1:<port>/`. */
  url: string;
  password: string;
  apiKey: string;
  /** The CLI socket (control methods as homeagentctl calls them). */
  control: RpcConnection;
  /** A call to /api/v1 with the API key; the envelope's result, or an error naming code and message. */
  api<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
  /** A control method over the CLI socket; its result, or an error naming code and message. */
  call<T = unknown>(method: string, params?: object): Promise<T>;
}

export interface StartOptions {
  /** Replaces {@link HOME_CONFIG}. */
  config?: object;
  /** More environment for the daemon. */
  env?: Record<string, string>;
}

/** Starts the scripted LLM server and the daemon with the simulated home; resolves once the page is served. */
export async function startWebuiHome(t: HelperTest, options: StartOptions = {}): Promise<WebuiHome> {
  const llm = await startScriptedServer(t);
  const dir = tempDir(t, 'ha-webui-');
  const configFile = join(dir, 'config.yaml');
  // JSON is YAML.
  writeFileSync(configFile, JSON.stringify(options.config ?? HOME_CONFIG, null, 2));
  const daemon = await startDaemon(t, {
    dataDir: join(dir, 'data'),
    env: {
      HOMEAGENT_CONFIG: configFile,
      HOMEAGENT_LLM_BASE_URL: llm.url,
      HOMEAGENT_LLM_API_KEY: 'sk-test-key',
      HOMEAGENT_LLM_MODEL: 'test-model',
      ...options.env,
    },
  });
  await daemon.waitForReady(30_000);
  const control = await RpcConnection.connect(daemon.socketPath);
  t.teardown(() => control.close());

  const call = async <T>(method: string, params: object = {}): Promise<T> => {
    const r = await control.request(method, params);
    if (!r.ok) throw new Error(`${method}: ${r.error?.code}: ${r.error?.message}`);
    return r.result as T;
  };
  const credentials = await call<{ url: string; password: string; api_key: string }>('webui.credentials');
  const url = credentials.url.endsWith('/') ? credentials.url : `${credentials.url}/`;
  const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const init: RequestInit = { method, headers: { 'X-API-Key': credentials.api_key } };
    if (body !== undefined) {
      init.headers = { ...init.headers, 'Content-Type': 'application/json' };
      init.body = JSON.stringify(body);
    }
    const response = await fetch(new URL(`api/v1${path}`, url), init);
    const envelope = (await response.json()) as { ok: boolean; result?: unknown; error?: { code: string; message: string } };
    if (!envelope.ok) throw new Error(`${method} ${path}: ${response.status} ${envelope.error?.code}: ${envelope.error?.message}`);
    return envelope.result as T;
  };
  return { daemon, llm, url, password: credentials.password, apiKey: credentials.api_key, control, api, call };
}

/** Entries of the knowledge library the tests and screenshots browse (two categories share "salt"). */
export const KNOWLEDGE_ENTRIES: ReadonlyArray<{ name: string; content: string }> = [
  {
    name: 'recipes/soup/tomato_soup',
    content: '# Tomato soup\n\nSimmer tomatoes with an onion, a pinch of salt and basil for 20 minutes, then blend.',
  },
  { name: 'recipes/soup/miso_soup', content: '# Miso soup\n\nDashi, tofu and wakame; stir in the miso off the heat.' },
  { name: 'recipes/bread/sourdough', content: '# Sourdough\n\nFlour, water, starter and salt; proof overnight in the fridge.' },
  {
    name: 'home/appliances/washing_machine',
    content: '# Washing machine\n\nThe filter is behind the flap at the bottom left; clean it monthly.',
  },
];

export async function addKnowledge(home: WebuiHome): Promise<void> {
  for (const entry of KNOWLEDGE_ENTRIES) await home.api('POST', '/knowledge/entries', entry);
}

/** How far the page's main content reaches past the viewport: the document's width, the viewport's and the widest culprits. */
export interface Overflow {
  scrollWidth: number;
  width: number;
  wide: string[];
}

const OVERFLOW = `(() => {
  const width = document.documentElement.clientWidth;
  const wide = [];
  for (const el of document.querySelectorAll('main *')) {
    const r = el.getBoundingClientRect();
    if (r.right > width + 1) wide.push(el.tagName.toLowerCase() + (el.className ? '.' + el.className : '') + ' ' + Math.round(r.right) + 'px');
  }
  return { scrollWidth: document.scrollingElement.scrollWidth, width, wide: wide.slice(0, 5) };
})()`;

export async function overflow(page: Page): Promise<Overflow> {
  return (await page.evaluate(OVERFLOW)) as Overflow;
}

/** Opens the page and logs in with the admin password; resolves once the navigation shows. */
export async function login(page: Page, home: WebuiHome): Promise<void> {
  await page.goto(home.url);
  await page.locator('input[type=password]').fill(home.password);
  await page.getByRole('button', { name: /log in|登录/i }).click();
  await page.locator('nav.tabs').waitFor();
}

/** One chat.completion.chunk of the scripted OpenAI-compatible server. */
function chunk(delta: Record<string, unknown>, finish: string | null = null): object {
  return {
    id: 'chatcmpl-web',
    object: 'chat.completion.chunk',
    created: 1764460800,
    model: 'test-model',
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}

/** An answer streamed in `pieces`, `delayMs` apart (so a browser sees it grow). */
export function streamedAnswer(pieces: string[], delayMs = 0): ScriptStep {
  return {
    sse: [
      chunk({ role: 'assistant', content: '' }),
      ...pieces.map((content) => chunk({ content })),
      chunk({}, 'stop'),
      {
        id: 'chatcmpl-web',
        object: 'chat.completion.chunk',
        choices: [],
        usage: { prompt_tokens: 40, completion_tokens: pieces.length, total_tokens: 40 + pieces.length },
      },
    ],
    done: true,
    delayMs,
  };
}

/** A round in which the model calls one tool. */
export function toolCall(name: string, args: object, id = 'call_1'): ScriptStep {
  return {
    sse: [
      chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id, type: 'function', function: { name, arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: JSON.stringify(args) } }] }),
      chunk({}, 'tool_calls'),
    ],
    done: true,
  };
}

/** The parts of a tap test a failure screenshot needs. */
export interface ScreenshotTest {
  saveFixture: boolean;
  testdir(): string;
  passing(): boolean;
  fail(message: string): void;
}

/**
 * Saves what the page shows into the test's fixture directory, kept after the run (saveFixture),
 * and returns the file; a page that cannot be captured any more gives the reason instead.
 */
export async function failureScreenshot(t: ScreenshotTest, page: Page, name: string): Promise<string> {
  try {
    t.saveFixture = true;
    const file = join(t.testdir(), `${name.replace(/[^a-z0-9_-]+/gi, '-')}.png`);
    await page.screenshot({ path: file, fullPage: true });
    return file;
  } catch (error) {
    return `(no screenshot: ${(error as Error).message})`;
  }
}

/**
 * Runs one browser step. When it throws, or an assertion in it failed, a screenshot of the page is
 * kept and the failure names its path.
 */
export async function step(t: ScreenshotTest, page: Page, name: string, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (error) {
    const file = await failureScreenshot(t, page, name);
    throw new Error(`${name}: ${(error as Error).message}\nscreenshot of the page: ${file}`, { cause: error });
  }
  if (!t.passing()) t.fail(`${name} failed; screenshot of the page: ${await failureScreenshot(t, page, name)}`);
}

#!/usr/bin/env node
/**
 * Writes docs/screenshots/*.png: the web page of a real daemon with a simulated home, driven by
 * Debian's chromium, set up as the browser tests set it up (test/helpers/browser.ts, loaded through
 * the tests' TypeScript loader). Home (a sensor's chart open), memory, settings and health are
 * taken on a laptop (1280x800) and on a 375 px phone, in English and in Chinese
 * (<page>-<en|zh>-<desktop|phone>.png); chat (phone) and knowledge (laptop) in English. The Home
 * view's Zigbee network panel (zigbee-<en|zh>-<desktop|phone>.png) is taken against a mosquitto
 * with the tests' scripted Zigbee2MQTT bridge (test/helpers/scripted-z2m-bridge.ts).
 *
 * The conversation is scripted (the scripted LLM server answers), so the pictures show real
 * rendering of real daemon data, not mock-ups. The one thing made up is the lounge's past week:
 * readings every 10 minutes are written into the daemon's home database beside it (as the registry
 * writes them, raw rows), with a 6-hour stop of the daemon three days ago and a sensor unavailable
 * for 40 minutes this morning, so the charts show their gaps; the last minutes are live reports.
 *
 * The Chinese pictures need a font with Chinese characters (apt-get install fonts-wqy-microhei);
 * without one chromium draws boxes, so the script refuses to start.
 *
 *   npm run build && node scripts/screenshots.mjs [output folder]
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = resolve(process.argv[2] ?? join(root, 'docs', 'screenshots'));
const Database = createRequire(import.meta.url)('better-sqlite3');

// The helpers are TypeScript; the tests' loader (test/helpers/swc-register.mjs) runs them as the tests do.
await import(join(root, 'test', 'helpers', 'swc-register.mjs'));
const helpers = await import(join(root, 'test', 'helpers', 'browser.ts'));
const { addKnowledge, chromiumMissing, HOME_CONFIG, LAPTOP, launchChromium, login, startWebuiHome, streamedAnswer, toolCall } = helpers;
const { Mosquitto, mosquittoMissing } = await import(join(root, 'test', 'helpers', 'mosquitto.ts'));
const { connectTestLink } = await import(join(root, 'test', 'helpers', 'mqtt-test-broker.ts'));
const { ScriptedBridge, Z2M_BASE, Z2M_DEVICES } = await import(join(root, 'test', 'helpers', 'scripted-z2m-bridge.ts'));

const PHONE = { width: 375, height: 812 };
const LANGUAGES = [
  { lang: 'en', locale: 'en-GB' },
  { lang: 'zh', locale: 'zh-CN' },
];
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** A picture larger than this is reported (docs/ should stay light). */
const MAX_BYTES = 300 * 1024;

function chineseFontMissing() {
  try {
    return execFileSync('fc-list', [':lang=zh'], { encoding: 'utf8' }).trim() === ''
      ? 'no font with Chinese characters (apt-get install fonts-wqy-microhei): the Chinese pictures would show boxes'
      : undefined;
  } catch (error) {
    return `fc-list failed (${error.message}): cannot tell whether a Chinese font is installed`;
  }
}

const missing = chromiumMissing() ?? mosquittoMissing() ?? chineseFontMissing();
if (missing) {
  console.error(missing);
  process.exit(1);
}

/** Stands in for tap's `t`: what the helpers register is undone at the end, last first. */
const cleanups = [];
const t = { teardown: (fn) => cleanups.push(fn) };

async function until(what, probe, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** The page as the screen shows it, or the part of the whole page one element covers (`element`, a CSS selector). */
async function shoot(page, name, element) {
  // Fonts and the chart settle after the data arrives.
  await page.evaluate('document.fonts.ready');
  await sleep(400);
  const file = join(out, `${name}.png`);
  // A full-page picture clipped to the element: an element screenshot would show the sticky tab bar over it.
  const clip =
    element &&
    (await page.evaluate((selector) => {
      const r = document.querySelector(selector).getBoundingClientRect();
      return { x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height };
    }, element));
  await page.screenshot(clip ? { path: file, fullPage: true, clip } : { path: file });
  const size = statSync(file).size;
  console.log(`wrote ${file} (${Math.round(size / 1024)} KB)${size > MAX_BYTES ? ' — larger than 300 KB' : ''}`);
}

/** A Zigbee2MQTT bridge on a private mosquitto, for the Zigbee panel. */
async function startZigbee() {
  const dir = mkdtempSync(join(tmpdir(), 'ha-screenshots-broker-'));
  const broker = await Mosquitto.start({ dir, persistence: false });
  cleanups.push(async () => {
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const link = await connectTestLink(broker.url, 'scripted-z2m');
  cleanups.push(() => link.end());
  const bridge = new ScriptedBridge(link);
  await link.client.subscribeAsync('test/sync', { qos: 1 });
  await bridge.publishAll();
  return { url: broker.url, bridge, link };
}

/** The daemon's home database (where the registry keeps entities and their history). */
function homeDatabase(dataDir) {
  const name = readdirSync(dataDir).find((file) => /^home.*\.db$/.test(file));
  if (name === undefined) throw new Error(`no home database in ${dataDir}`);
  return join(dataDir, name);
}

/**
 * A week of lounge temperatures before `until`: a daily swing with some noise, every 10 minutes,
 * stored as the registry stores reports (JSON text, raw rows). The daemon was stopped for 6 hours
 * three days ago (after it the sensor starts unknown, as an I2C sensor does), and the sensor was
 * unavailable for 40 minutes this morning.
 */
function seedHistory(file, until) {
  const db = new Database(file);
  db.pragma('busy_timeout = 5000');
  const insert = db.prepare('INSERT INTO state_history (entity_id, at, state, period_ms) VALUES (?, ?, ?, 0)');
  const stopped = [until - 3 * DAY, until - 3 * DAY + 6 * HOUR];
  const away = [until - 5 * HOUR, until - 5 * HOUR + 40 * MINUTE];
  let noise = 0;
  db.transaction(() => {
    for (let at = until - 7 * DAY; at < until; at += 10 * MINUTE) {
      if (at >= stopped[0] && at < stopped[1]) continue;
      if (at >= away[0] && at < away[1]) continue;
      noise = noise * 0.8 + (Math.sin(at / 7_919) + Math.sin(at / 3_307)) * 0.08;
      const hour = new Date(at).getHours() + new Date(at).getMinutes() / 60;
      const value = 21.5 + 1.6 * Math.sin(((hour - 9) / 24) * 2 * Math.PI) + noise;
      insert.run('sensor.lounge_temperature', at, JSON.stringify(Math.round(value * 10) / 10));
    }
    insert.run('sensor.lounge_temperature', stopped[1], 'null');
    insert.run('sensor.lounge_temperature', away[0], JSON.stringify('unavailable'));
  })();
  db.close();
}

/** What a running network reports (after the daemon listens: these are not retained): availability, and with each message link quality and last seen. */
async function reportZigbee({ bridge, link }) {
  let quality = 40;
  for (const device of Z2M_DEVICES) {
    const name = device.friendly_name;
    if (device.type === 'Coordinator' || name === 'Front door') continue;
    await link.publish(`${Z2M_BASE}/${name}/availability`, JSON.stringify({ state: 'online' }), { qos: 1, retain: true });
    quality = (quality * 7 + 23) % 220;
    await bridge.state(name, { linkquality: 30 + quality, last_seen: new Date(Date.now() - quality * 9_000).toISOString() });
  }
}

try {
  mkdirSync(out, { recursive: true });
  const zigbee = await startZigbee();
  const home = await startWebuiHome(t, {
    config: { ...HOME_CONFIG, plugin: { ...HOME_CONFIG.plugin, mqtt: { url: zigbee.url, zigbee2mqtt: true } } },
  });
  await until('the Zigbee device list', async () => (await home.api('GET', '/zigbee')).devices.length > 0);
  await reportZigbee(zigbee);
  await until('link qualities', async () => (await home.api('GET', '/zigbee')).devices.some((d) => d.linkquality !== null));
  await addKnowledge(home);
  seedHistory(homeDatabase(home.daemon.dataDir), Date.now() - 5 * MINUTE);
  // The last minutes: live reports of the simulated BME280.
  for (const temperature of [21.4, 21.6, 21.7]) {
    await home.call('i2c.simulate', { sensor: 'lounge', values: { temperature, humidity: 45, pressure: 1012 } });
    await sleep(1100);
  }

  const browser = await launchChromium(t);

  // Chat on a phone: a fact remembered through a tool, then a device switched.
  const phone = await browser.newContext({ viewport: PHONE, locale: 'en-GB' });
  const page = await phone.newPage();
  await login(page, home);
  home.llm.enqueue(
    toolCall('memory_commit', {
      triples: [
        { subject: 'Alice', relation: 'lives_in', object: 'Paris' },
        { subject: 'Alice', relation: 'works_as', object: 'nurse' },
      ],
      sentence_text: 'Alice lives in Paris since last spring. She works as a nurse there.',
    }),
    streamedAnswer(['Noted: ', 'Alice lives in Paris ', 'and works as a nurse.'], 60),
    toolCall('entity_call', { entity: 'switch.hall_relay', service: 'turn_on' }, 'call_2'),
    streamedAnswer(['The hall light ', 'is on.'], 60),
  );
  const send = async (text, answers) => {
    await page.getByPlaceholder('Ask HomeAgent…').fill(text);
    await page.getByRole('button', { name: 'Send' }).click();
    await page
      .locator('[data-testid=chat-answer][data-status=done]')
      .nth(answers - 1)
      .waitFor();
  };
  await send('Alice lives in Paris since last spring. She works as a nurse there.', 1);
  await send('Turn on the hall light, please.', 2);
  await page.locator('[data-testid=tool-call] summary').last().click();
  await shoot(page, 'chat-en-phone');
  await until('memory to know Alice', async () => {
    try {
      return (await home.api('GET', '/memory/entities/Alice')).current.length >= 2;
    } catch {
      return false;
    }
  });

  // Knowledge on a laptop: scoped to recipes/soup, a search in it and the entry it found.
  const laptop = await browser.newContext({ viewport: LAPTOP, locale: 'en-GB' });
  const wide = await laptop.newPage();
  await login(wide, home);
  await wide.goto(`${home.url}#/knowledge`);
  await wide.locator('button.caret[aria-label="recipes"]').click();
  await wide.locator('button.caret[aria-label="home"]').click();
  await wide.locator('button[data-category="recipes/soup"]').click();
  await wide.getByPlaceholder('Search the library').fill('salt');
  await wide.getByRole('button', { name: 'Search' }).click();
  await wide.locator('button[data-entry="recipes/soup/tomato_soup"]').click();
  await wide.locator('[data-testid=kb-entry] pre.content').waitFor();
  await shoot(wide, 'knowledge-en-desktop');
  await laptop.close();
  await phone.close();

  for (const { lang, locale } of LANGUAGES) {
    for (const [form, viewport] of [
      ['desktop', LAPTOP],
      ['phone', PHONE],
    ]) {
      const context = await browser.newContext({ viewport, locale });
      const p = await context.newPage();
      await login(p, home);
      const name = (view) => `${view}-${lang}-${form}`;

      // Home with the lounge temperature's chart: the week (statistics) on a laptop, the day on a phone.
      await p.goto(`${home.url}#/home`);
      await p.locator('li[data-entity="switch.hall_relay"][data-state=on]').waitFor();
      await p.locator('li[data-entity="sensor.lounge_temperature"] button.value').click();
      await p.locator('[data-testid=history-chart][data-source=raw] canvas').waitFor();
      if (form === 'desktop') {
        await p.locator('button[data-span=week]').click();
        await p.locator('[data-testid=history-chart][data-source=statistics] canvas').waitFor();
      }
      await shoot(p, name('home'));

      // The Zigbee network panel at the end of Home, whole, with the chart closed.
      await p
        .locator('.panel', { has: p.locator('[data-testid=history-chart]') })
        .getByRole('button', { name: /close|关闭/i })
        .click();
      const panel = p.getByTestId('zigbee');
      await panel.locator('li.zigbee-device').first().waitFor();
      await shoot(p, name('zigbee'), '[data-testid=zigbee]');

      // Memory: Alice's facts with where one came from.
      await p.goto(`${home.url}#/memory/Alice`);
      const fact = p.locator('.facts .fact', { has: p.locator('.sources button') }).first();
      await fact.locator('details.provenance summary').click();
      await fact.locator('.sources button').first().click();
      await p.locator('[data-testid=memory-event]', { hasText: 'Alice lives in Paris' }).waitFor();
      await shoot(p, name('memory'));

      // Settings: the web server's own settings.
      await p.goto(`${home.url}#/settings`);
      await p.locator('input[type=search]').first().fill('plugin.webui');
      await p.locator('.field[data-key="plugin.webui.chat_timeout_ms"]').waitFor();
      await shoot(p, name('settings'));

      // Health: checks, status and the recent log.
      await p.goto(`${home.url}#/health`);
      await p.locator('[data-testid=health-state]').waitFor();
      await p.locator('[data-testid=log-lines] li').first().waitFor();
      await shoot(p, name('health'));
      await context.close();
    }
  }
} finally {
  for (const cleanup of cleanups.reverse()) {
    try {
      await cleanup();
    } catch (error) {
      console.error(`cleanup: ${error.message}`);
    }
  }
}

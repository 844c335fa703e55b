#!/usr/bin/env node
/**
 * Writes docs/screenshots/{chat,home,knowledge,memory,settings}.png: the web page of a real daemon
 * with a simulated home, driven by Debian's chromium, set up exactly as the browser tests set it up
 * (test/helpers/browser.ts, loaded through tap's TypeScript loader). Chat and home are taken on a
 * phone (390x844), the others on a laptop (1280x800). The conversation is scripted (the scripted
 * LLM server answers), so the pictures show real rendering of real daemon data, not mock-ups.
 *
 *   npm run build && node scripts/screenshots.mjs [output folder]
 */
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = resolve(process.argv[2] ?? join(root, 'docs', 'screenshots'));

// The helpers are TypeScript; the tests' loader (test/helpers/swc-register.mjs) runs them as the tests do.
await import(join(root, 'test', 'helpers', 'swc-register.mjs'));
const helpers = await import(join(root, 'test', 'helpers', 'browser.ts'));
const { addKnowledge, chromiumMissing, LAPTOP, launchChromium, login, PHONE, startWebuiHome, streamedAnswer, toolCall } = helpers;

const missing = chromiumMissing();
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

async function shoot(page, name) {
  // Fonts and the chart settle after the data arrives.
  await page.evaluate('document.fonts.ready');
  await sleep(300);
  const file = join(out, `${name}.png`);
  await page.screenshot({ path: file });
  console.log(`wrote ${file}`);
}

try {
  mkdirSync(out, { recursive: true });
  const home = await startWebuiHome(t);
  await addKnowledge(home);

  // A climate history worth a chart: the simulated BME280 is polled every second.
  const temperatures = [20.5, 20.8, 21.2, 21.9, 22.4, 22.6, 22.3, 21.8, 21.5, 21.7, 22.1, 22.8, 23.4, 23.1, 22.7, 22.2];
  for (const temperature of temperatures) {
    await home.call('i2c.simulate', { sensor: 'lounge', values: { temperature, humidity: 40 + temperature, pressure: 1012 } });
    await sleep(1100);
  }

  const browser = await launchChromium(t);

  // Chat on a phone: a fact remembered through a tool, then a device switched.
  const phone = await browser.newContext({ viewport: PHONE, locale: 'en-US' });
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
  await shoot(page, 'chat');

  // Home on a phone, with the lounge temperature's history open.
  await page.getByRole('link', { name: 'Home' }).click();
  await page.locator('li[data-entity="switch.hall_relay"][data-state=on]').waitFor();
  await page.locator('li[data-entity="sensor.lounge_temperature"] button').click();
  await page.locator('[data-testid=history-chart] canvas').waitFor();
  await shoot(page, 'home');

  // Knowledge on a laptop: scoped to recipes/soup, a search in it and the entry it found.
  const laptop = await browser.newContext({ viewport: LAPTOP, locale: 'en-US' });
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
  await shoot(wide, 'knowledge');

  // Memory on a laptop: Alice's facts with where one came from.
  await until('memory to know Alice', async () => {
    try {
      return (await home.api('GET', '/memory/entities/Alice')).current.length >= 2;
    } catch {
      return false;
    }
  });
  await wide.goto(`${home.url}#/memory/Alice`);
  // A fact whose evidence names the input it came from (the turn's own sentence).
  const fact = wide.locator('.facts .fact', { has: wide.locator('.sources button') }).first();
  await fact.locator('details.provenance summary').click();
  await fact.locator('.sources button').first().click();
  await wide.locator('[data-testid=memory-event]', { hasText: 'Alice lives in Paris' }).waitFor();
  await shoot(wide, 'memory');

  // Settings on a laptop: the web server's own settings.
  await wide.goto(`${home.url}#/settings`);
  await wide.getByPlaceholder('Filter settings').fill('plugin.webui');
  await wide.locator('.field[data-key="plugin.webui.chat_timeout_ms"]').waitFor();
  await shoot(wide, 'settings');
} finally {
  for (const cleanup of cleanups.reverse()) {
    try {
      await cleanup();
    } catch (error) {
      console.error(`cleanup: ${error.message}`);
    }
  }
}

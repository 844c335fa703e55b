/**
 * The web page on a 375 px phone in Debian's chromium, in English (an en-GB browser) and Chinese:
 * no page is wider than the screen, also with long unbreakable tokens in memory (an API key said in
 * chat, an entity named by it, the source event's id) and every detail opened; the tab bar says it
 * scrolls (its edges fade while tabs lie beyond) and keeps the active tab in view; a sensor's chart
 * reads every report for a day and the statistics for a week, in the page's language; dates are
 * written in the page's locale (zh: 2026/12/3 14:05:09, en-GB: 03/12/2026, 14:05:09).
 * A failed step keeps a screenshot under .tap/fixtures/ and names it in the failure.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import t from 'tap';
import {
  addKnowledge,
  chromiumMissing,
  launchChromium,
  login,
  overflow,
  startWebuiHome,
  step,
  streamedAnswer,
  toolCall,
  type WebuiHome,
} from '../helpers/browser.js';
import { REPO_ROOT } from '../helpers/daemon.js';

const WAIT_MS = 15_000;
const PAGE_INDEX = join(REPO_ROOT, 'dist', 'plugins', 'webui', 'page', 'index.html');
const PHONE_375 = { width: 375, height: 812 };
/** No spaces, no hyphens: nothing lets a browser break it unless the page says it may. */
const TOKEN = 'sk_live_51HxQ2pLkT9vWm3ZrB8cD4eF6gH7jK0nP2qR5sU8wX1yA3bC6dE9fG2hJ4kL7';
const VIEWS = ['chat', 'home', 'knowledge', 'memory', 'settings', 'plugins', 'changes', 'sequences', 'health'] as const;

const LANGUAGES = [
  {
    locale: 'en-GB',
    mean: 'Mean',
    // 03/12/2026, 14:05:09 — day first: the browser's locale, not the US one.
    date: /\b\d{2}\/\d{2}\/\d{4},? \d{2}:\d{2}:\d{2}\b/,
  },
  { locale: 'zh-CN', mean: '平均', date: /\b\d{4}\/\d{1,2}\/\d{1,2} \d{2}:\d{2}:\d{2}\b/ },
] as const;

const skip = chromiumMissing() ?? (existsSync(PAGE_INDEX) ? undefined : `${PAGE_INDEX} is missing: run \`npm run build\` first`);

/**
 * Waits until `expression` (browser code, kept as text: this file is compiled without the DOM's
 * types) is true. Polled through evaluate: the page's CSP forbids the eval waitForFunction uses.
 */
async function until(page: Page, what: string, expression: string): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!(await page.evaluate(expression))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await page.waitForTimeout(50);
  }
}

/** Opens a view and waits until it shows its data (nothing says loading any more). */
async function open(page: Page, home: WebuiHome, view: string): Promise<void> {
  await page.goto(`${home.url}#/${view}`);
  await page.locator('main section').first().waitFor();
  await until(
    page,
    `${view} loaded`,
    `![...document.querySelectorAll('main p.muted')].some((p) => /Loading…|加载中…/.test(p.textContent))`,
  );
}

/** Everything on the memory page that can be opened: a recall, the provenance, the source events. */
async function openEverything(page: Page): Promise<void> {
  await page.locator('.memory form.row input[type=search]').fill('Alice wifi');
  await page.locator('.memory form.row button[type=submit]').click();
  await page.locator('.memory ul.hits li').first().waitFor();
  const closed = page.locator('.memory details:not([open]) > summary');
  while ((await closed.count()) > 0) await closed.first().click();
  const sources = page.locator('.memory .sources button');
  for (let i = 0; i < (await sources.count()); i++) await sources.nth(i).click();
  await page.locator('[data-testid=memory-event]').first().waitFor();
}

async function seed(home: WebuiHome): Promise<void> {
  await addKnowledge(home);
  const said = `Alice lives in Paris. The wifi key is ${TOKEN}`;
  home.llm.enqueue(
    toolCall('memory_commit', {
      triples: [
        { subject: 'Alice', relation: 'lives_in', object: 'Paris' },
        { subject: 'Alice', relation: 'wifi_key', object: TOKEN },
      ],
      sentence_text: said,
    }),
    streamedAnswer(['Noted.']),
  );
  await home.call('agent.chat', { text: said });
  // A short climate history: the simulated BME280 reports what it is told.
  for (const temperature of [20.5, 21.25, 22]) {
    await home.call('i2c.simulate', { sensor: 'lounge', values: { temperature, humidity: 45, pressure: 1012 } });
    await new Promise((resolve) => setTimeout(resolve, 1100));
  }
}

t.test('the page on a 375 px phone, in English and Chinese', { skip: skip ?? false }, async (t) => {
  const home = await startWebuiHome(t);
  await seed(home);
  const browser: Browser = await launchChromium(t);

  for (const language of LANGUAGES) {
    await t.test(language.locale, async (t) => {
      const context = await browser.newContext({ viewport: PHONE_375, locale: language.locale });
      t.teardown(() => context.close());
      const page = await context.newPage();
      page.setDefaultTimeout(WAIT_MS);
      const pageErrors: string[] = [];
      page.on('pageerror', (error) => pageErrors.push(error.message));
      await login(page, home);

      await t.test('no page is wider than the screen', async (t) => {
        for (const view of [...VIEWS, 'memory/Alice']) {
          await step(t, page, `${language.locale}-${view.replace('/', '-')}`, async () => {
            await open(page, home, view);
            if (view === 'memory/Alice') await openEverything(page);
            if (view === 'home') {
              await page.locator('li[data-entity="sensor.lounge_temperature"] button.value').click();
              await page.locator('[data-testid=history-chart] canvas').waitFor();
            }
            const o = await overflow(page);
            t.ok(
              o.scrollWidth <= PHONE_375.width,
              `${view}: ${o.scrollWidth} px wide on a ${PHONE_375.width} px screen ${o.wide.join(', ')}`,
            );
          });
        }
      });

      await t.test('the tab bar shows that it scrolls and keeps the active tab in view', async (t) => {
        await step(t, page, `${language.locale}-tabs`, async () => {
          await open(page, home, 'chat');
          const frame = page.locator('.tabs-frame');
          await until(page, 'the tab bar at its start', `document.querySelector('.tabs').scrollLeft === 0`);
          t.equal(await frame.getAttribute('data-more-left'), 'false', 'at the start nothing lies to the left');
          if (language.locale === 'en-GB')
            t.equal(await frame.getAttribute('data-more-right'), 'true', 'more tabs lie to the right: that edge fades');
          await open(page, home, 'health');
          await until(
            page,
            'the active tab in view',
            `(() => {
            const bar = document.querySelector('.tabs').getBoundingClientRect();
            const tab = document.querySelector('.tabs a.active').getBoundingClientRect();
            return tab.left >= bar.left - 1 && tab.right <= bar.right + 1;
          })()`,
          );
          t.pass('the active tab (the last one) was scrolled fully into view');
          if (language.locale === 'en-GB') {
            await until(page, 'the left edge to fade', `document.querySelector('.tabs-frame').dataset.moreLeft === 'true'`);
            t.pass('now the left edge fades');
          }
        });
      });

      await t.test('the chart: a day of every report, a week of statistics, in the page language', async (t) => {
        await step(t, page, `${language.locale}-chart`, async () => {
          await open(page, home, 'home');
          await page.locator('li[data-entity="sensor.lounge_temperature"] button.value').click();
          const chart = page.locator('[data-testid=history-chart]');
          await chart.and(page.locator('[data-source=raw]')).locator('canvas').waitFor();
          t.pass('24 hours: every report');
          await page.locator('button[data-span=week]').click();
          await chart.and(page.locator('[data-source=statistics]')).locator('canvas').waitFor();
          t.match(await chart.locator('.u-legend').textContent(), language.mean, 'the legend names the mean in the page language');
          t.equal(await page.locator('button[data-span=week]').getAttribute('aria-pressed'), 'true');
        });
      });

      await t.test("dates are written in the page's locale", async (t) => {
        await step(t, page, `${language.locale}-dates`, async () => {
          await open(page, home, 'memory/Alice');
          const line = page.locator('[data-testid=memory-entity] p.muted.small').first();
          await line.waitFor();
          const text = (await line.textContent()) ?? '';
          t.match(text, language.date, `the date in "${text}"`);
          t.notMatch(text, /AM|PM|上午|下午/, 'a 24-hour clock');
        });
      });

      t.same(pageErrors, [], 'no script error on the page');
    });
  }
});

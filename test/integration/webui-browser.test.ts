/**
 * The web page in Debian's chromium against the built daemon (npm run build builds the page too):
 * log in, a chat round trip with a tool call against the scripted LLM server (the answer grows on
 * the page while it streams), a simulated relay switched from the page and from the API (the page
 * follows live), the knowledge tree scoping a search and the reset to the whole library, and a
 * setting edited (a refused value shown next to its field; a valid one saved, read back through
 * the API). The page runs on a phone-sized viewport. A failed step keeps a screenshot under
 * .tap/fixtures/ and names it in the failure.
 *
 * Time here is real (a daemon and a browser): every wait is for a condition, with a deadline.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import t from 'tap';
import {
  addKnowledge,
  chromiumMissing,
  launchChromium,
  login,
  PHONE,
  RELAY_ENTITY,
  relayWire,
  startWebuiHome,
  step,
  streamedAnswer,
  toolCall,
} from '../helpers/browser.js';
import { REPO_ROOT } from '../helpers/daemon.js';

const WAIT_MS = 15_000;
const PAGE_INDEX = join(REPO_ROOT, 'dist', 'plugins', 'webui', 'page', 'index.html');

interface Entity {
  entity_id: string;
  state: unknown;
}
interface Setting {
  key: string;
  value: unknown;
  source: string;
}

const skip = chromiumMissing() ?? (existsSync(PAGE_INDEX) ? undefined : `${PAGE_INDEX} is missing: run \`npm run build\` first`);

t.test('the web page in a browser', { skip: skip ?? false }, async (t) => {
  const home = await startWebuiHome(t);
  await addKnowledge(home);
  const browser = await launchChromium(t);
  const context = await browser.newContext({ viewport: PHONE, locale: 'en-US' });
  const page = await context.newPage();
  page.setDefaultTimeout(WAIT_MS);
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));

  await t.test('a wrong password shows the server message; the right one logs in', async (t) => {
    await step(t, page, 'login', async () => {
      await page.goto(home.url);
      await page.locator('input[type=password]').fill('not-the-password');
      await page.getByRole('button', { name: 'Log in' }).click();
      const error = page.locator('form.login [role=alert]');
      await error.waitFor();
      t.match(await error.textContent(), /HA_ERR_/, 'the envelope code of the 401 is shown');
      await login(page, home);
      t.equal(await page.locator('nav.tabs a.active').textContent(), 'Chat', 'the chat view opens first');
      const cookies = await context.cookies();
      t.ok(
        cookies.some((c) => c.httpOnly && c.sameSite === 'Strict'),
        'the session is an HttpOnly SameSite=Strict cookie',
      );
      // The event stream is open: live state and chat depend on it.
      await page.locator('[data-testid=stream-status].live').waitFor();
    });
  });

  await t.test('a chat round trip: a tool call row, then the answer streamed in', async (t) => {
    const ASKED = 'Which channels can you reach me on?';
    const answer = ['I can ', 'reach you ', 'here ', 'on the ', 'web page.'];
    home.llm.enqueue(toolCall('output_list_channels', {}), streamedAnswer(answer, 150));
    const before = home.llm.requests.length;
    await step(t, page, 'chat', async () => {
      await recordLiveText(page);
      // Nothing the local intent engine answers itself (it does "is the hall light on?"): this asks the model.
      await page.getByPlaceholder('Ask HomeAgent…').fill(ASKED);
      await page.getByRole('button', { name: 'Send' }).click();
      const done = page.locator('[data-testid=chat-answer][data-status=done] [data-testid=answer-text]');
      await done.waitFor();
      t.equal(await done.textContent(), answer.join(''), 'the scripted answer is shown');
      const seen = await liveTexts(page);
      const full = answer.join('');
      t.ok(
        seen.some((text) => text.length > 0 && text.length < full.length && full.startsWith(text)),
        `the answer grew on the page while it streamed (seen: ${JSON.stringify(seen)})`,
      );
      const tool = page.locator('[data-testid=tool-call]').last();
      t.match(await tool.locator('summary').textContent(), /output_list_channels/, 'the tool call is shown by name');
      await tool.locator('summary').click();
      t.match(await tool.locator('pre').last().textContent(), /webui/, 'its result lists the web page channel');
    });
    t.equal(home.llm.requests.length - before, 2, 'two LLM rounds: the tool call and the answer');
    const userMessage = home.llm.requests.at(-1)?.body.messages.find((m: { role: string }) => m.role === 'user');
    t.equal(userMessage?.content, ASKED, 'the typed text reached the model');
  });

  await t.test('the relay switched from the page, and from the API while the page looks', async (t) => {
    await step(t, page, 'relay', async () => {
      await page.getByRole('link', { name: 'Home' }).click();
      const row = page.locator(`li[data-entity="${RELAY_ENTITY}"]`);
      await row.and(page.locator('[data-state=off]')).waitFor();
      t.match(await page.locator('.area', { has: row }).locator('h2').textContent(), 'Hall', 'it is listed under its area');
      await row.getByRole('switch').click();
      await page.locator(`li[data-entity="${RELAY_ENTITY}"][data-state=on]`).waitFor();
      const { entity } = await home.api<{ entity: Entity }>('GET', `/entities/${RELAY_ENTITY}`);
      t.equal(entity.state, 'on', 'the API says on');
      t.equal(relayWire(home), '0', 'the active-low wire is low');

      await home.api('POST', `/entities/${RELAY_ENTITY}/services/turn_off`, { data: {} });
      await page.locator(`li[data-entity="${RELAY_ENTITY}"][data-state=off]`).waitFor();
      t.pass('the page follows a change made elsewhere (entity.state_changed on the event stream)');
    });
  });

  await t.test('the owner renames the relay, takes it out of its area and gives it an alias in its edit dialog', async (t) => {
    await step(t, page, 'entity-edit', async () => {
      const before = (await home.api<{ entity: Entity & { name: string; aliases: string[] } }>('GET', `/entities/${RELAY_ENTITY}`)).entity;
      await page
        .locator(`li[data-entity="${RELAY_ENTITY}"]`)
        .getByRole('button', { name: /^Edit / })
        .click();
      const dialog = page.getByRole('dialog');
      await dialog.locator('input[name=name]').fill('Porch relay');
      await dialog.locator('select[name=area]').selectOption({ label: 'No area' });
      await dialog.locator('textarea[name=aliases]').fill('门廊灯');
      await dialog.getByRole('button', { name: 'Save' }).click();
      await page.locator(`li[data-entity="${RELAY_ENTITY}"]`, { hasText: 'Porch relay' }).waitFor();
      const row = page.locator(`li[data-entity="${RELAY_ENTITY}"]`);
      t.match(await page.locator('.area', { has: row }).locator('h2').textContent(), 'Other', 'listed without an area now');
      const { entity } = await home.api<{ entity: Entity & { aliases: string[]; area: string | null } }>(
        'GET',
        `/entities/${RELAY_ENTITY}`,
      );
      t.match(entity, { name: 'Porch relay', area: null, aliases: ['门廊灯'] }, 'stored as the owner set it');
      // Back to what the driver registered, for the steps after this one.
      await home.api('PATCH', `/entities/${RELAY_ENTITY}`, { name: null, reset_area: true, aliases: before.aliases });
      // A rename made elsewhere shows after a refresh (the event stream carries states, not names).
      await page.getByRole('button', { name: 'Refresh' }).click();
      await page.locator(`li[data-entity="${RELAY_ENTITY}"]`, { hasText: before.name }).waitFor();
    });
  });

  await t.test('the knowledge tree scopes a search; the reset goes back to the whole library', async (t) => {
    await step(t, page, 'knowledge', async () => {
      await page.getByRole('link', { name: 'Knowledge' }).click();
      await page.locator('button[data-category="recipes"]').waitFor();
      t.equal(await page.locator('button[data-category="recipes/soup"]').count(), 0, 'categories start collapsed');
      await page.locator('button.caret[aria-label="recipes"]').click();
      await page.locator('button[data-category="recipes/soup"]').click();

      const label = page.locator('[data-testid=kb-scope-label]');
      t.equal(await label.textContent(), 'In: recipes/soup', 'the scope label names the category');
      const hits = page.locator('[data-testid=kb-hits] button[data-entry]');
      await page.locator('button[data-entry="recipes/soup/miso_soup"]').waitFor();
      t.same(
        (await hits.allTextContents()).sort(),
        ['recipes/soup/miso_soup', 'recipes/soup/tomato_soup'],
        'the category lists its entries',
      );

      await page.getByPlaceholder('Search the library').fill('salt');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.locator('[data-testid=kb-hits] button[data-entry="recipes/soup/tomato_soup"]').waitFor();
      await page.locator('button[data-entry="recipes/soup/miso_soup"]').waitFor({ state: 'detached' });
      t.same(await hits.allTextContents(), ['recipes/soup/tomato_soup'], 'the search stays inside recipes/soup (sourdough has salt too)');

      await page.locator('button[data-entry="recipes/soup/tomato_soup"]').click();
      const entry = page.locator('[data-testid=kb-entry] pre.content');
      await entry.waitFor();
      t.match(await entry.textContent(), /Simmer tomatoes/, 'a hit opens the entry');

      await page.locator('[data-testid=kb-scope-reset]').click();
      await label.waitFor({ state: 'detached' });
      await page.locator('[data-testid=kb-hits] button[data-entry="recipes/bread/sourdough"]').waitFor();
      t.same(
        (await hits.allTextContents()).sort(),
        ['recipes/bread/sourdough', 'recipes/soup/tomato_soup'],
        'the same search over the whole library finds both',
      );
    });
  });

  await t.test('a knowledge entry created from the page, then deleted', async (t) => {
    const name = 'recipes/soup/leek_soup';
    await step(t, page, 'knowledge-edit', async () => {
      await page.getByRole('link', { name: 'Knowledge' }).click();
      await page.locator('summary', { hasText: 'New entry' }).click();
      await page.getByLabel('Name (category/…/entry)').fill(name);
      await page.getByLabel('Content (markdown)').fill('# Leek soup\n\nSweat the leeks in butter, add potatoes and stock.');
      await page.getByRole('button', { name: 'Create' }).click();
      await page.getByText(`Created ${name}`).waitFor();
      await page.locator('button.caret[aria-label="recipes"]').waitFor();
      const soup = page.locator('.tree-row', { has: page.locator('button[data-category="recipes/soup"]') });
      if ((await soup.count()) === 0) await page.locator('button.caret[aria-label="recipes"]').click();
      await soup.locator('.count', { hasText: '3' }).waitFor();
      t.pass('the tree counts the new entry');

      await page.locator('button[data-category="recipes/soup"]').click();
      // An empty search lists the scoped category's entries.
      await page.getByPlaceholder('Search the library').fill('');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.locator(`button[data-entry="${name}"]`).click();
      page.once('dialog', (dialog) => void dialog.accept());
      await page.locator('[data-testid=kb-entry]').getByRole('button', { name: 'Delete' }).click();
      await page.locator('[data-testid=kb-entry]').waitFor({ state: 'detached' });
      await page.locator(`button[data-entry="${name}"]`).waitFor({ state: 'detached' });
      await soup.locator('.count', { hasText: '2' }).waitFor();
    });
    const tree = await home.api<{ total_count: number }>('GET', '/knowledge/tree?category=recipes/soup');
    t.equal(tree.total_count, 2, 'the API agrees: the entry is gone');
  });

  await t.test('the memory inspector: a fact, where it came from, corrected and deleted', async (t) => {
    const said = 'Alice lives in Paris since last spring.';
    home.llm.enqueue(
      toolCall('memory_commit', { triples: [{ subject: 'Alice', relation: 'lives_in', object: 'Paris' }], sentence_text: said }),
      streamedAnswer(['Noted.']),
    );
    await step(t, page, 'memory', async () => {
      await page.getByRole('link', { name: 'Chat' }).click();
      const answers = page.locator('[data-testid=chat-answer][data-status=done]');
      const before = await answers.count();
      await page.getByPlaceholder('Ask HomeAgent…').fill(said);
      await page.getByRole('button', { name: 'Send' }).click();
      await answers.nth(before).waitFor();

      await page.getByRole('link', { name: 'Memory' }).click();
      await page.locator('.entity-list').getByRole('button', { name: 'Alice', exact: true }).click();
      const fact = page.locator('.facts:not(.old) .fact').first();
      await fact.waitFor();
      t.match(await fact.locator('.fact-line').textContent(), /Alice\s*lives_in\s*Paris/, 'the fact is shown');
      await fact.locator('details.provenance summary').click();
      await fact.locator('.sources button').first().click();
      const original = fact.locator('[data-testid=memory-event]');
      await original.getByText(said).waitFor();
      t.pass('its source event shows the original input');

      await fact.getByRole('button', { name: 'Edit' }).click();
      await fact.getByLabel('Object').fill('Lyon');
      await fact.getByRole('button', { name: 'Save' }).click();
      await page.locator('.facts:not(.old) .fact-line', { hasText: 'Lyon' }).waitFor();
      const view = await home.api<{ current: Array<{ object: string }> }>('GET', '/memory/entities/Alice');
      t.same(
        view.current.map((r) => r.object),
        ['Lyon'],
        'the API has the corrected fact instead of the wrong one',
      );

      page.once('dialog', (dialog) => void dialog.accept());
      await page.locator('.facts:not(.old) .fact', { hasText: 'Lyon' }).getByRole('button', { name: 'Delete' }).click();
      await page.locator('.facts:not(.old) .fact-line', { hasText: 'Lyon' }).waitFor({ state: 'detached' });
      const after = await home.api<{ current: unknown[] }>('GET', '/memory/entities/Alice');
      t.same(after.current, [], 'the deleted fact is gone');
    });
  });

  await t.test('a setting edited: a refused value is shown at its field, a valid one is saved', async (t) => {
    const key = 'plugin.webui.chat_timeout_ms';
    await step(t, page, 'settings', async () => {
      await page.getByRole('link', { name: 'Settings' }).click();
      await page.getByPlaceholder('Filter settings').fill(key);
      const field = page.locator(`.field[data-key="${key}"]`);
      const input = field.locator('input');
      await input.waitFor();

      await input.fill('5');
      await field.getByRole('button', { name: 'Save' }).click();
      const error = field.locator('p.error');
      await error.waitFor();
      t.match(await error.textContent(), /HA_ERR_/, 'the server refusal is shown next to the field');
      t.equal((await home.api<Setting>('GET', `/settings/${key}`)).value, 300000, 'the refused value was not stored');

      await input.fill('120000');
      await field.getByRole('button', { name: 'Save' }).click();
      await field.locator('.ok', { hasText: 'Saved' }).waitFor();
      t.equal(await error.count(), 0, 'the error is gone');
    });
    const saved = await home.api<Setting>('GET', `/settings/${key}`);
    t.equal(saved.value, 120000, 'GET /api/v1/settings/:key has the new value');
    t.equal(saved.source, 'runtime', 'as a runtime change');
  });

  await t.test('a dangerous action waits on the page: who asked and what would run; Refuse drops it, Approve runs it', async (t) => {
    // Two different questions: the same text twice within core.agent.dedupe_window_ms is one input.
    const ask = async (text: string) => {
      home.llm.enqueue(toolCall('cmd_run', { argv: ['id'] }), streamedAnswer(['That needs your approval.']));
      return home.call<{ text?: string }>('agent.chat', { text });
    };
    await step(t, page, 'approvals', async () => {
      await page.getByRole('link', { name: 'Home' }).click();
      await ask('Which user do you run as?');
      const card = page.locator('[data-testid=approvals] article.approval');
      await card.waitFor();
      t.match(
        await card.textContent(),
        /cmd_run with.*"id".*Asked on cli by cli \(you: the CLI socket\)/s,
        'the exact call and its origin',
      );
      await card.getByTestId('deny').click();
      await card.waitFor({ state: 'detached' });
      t.same((await home.call<{ pending: unknown[] }>('confirm.list')).pending, [], 'refused: nothing waits');

      await ask('And now, which user are you?');
      await card.waitFor();
      await card.getByTestId('approve').click();
      const outcome = page.getByTestId('approval-outcome');
      await outcome.waitFor();
      t.match(await outcome.textContent(), /Ran: Confirmed: cmd_run ran/, 'the page shows what the approval ran');
      t.equal(await card.count(), 0, 'and the request is gone');
    });
  });

  await t.test('a Chinese browser gets the Chinese page', async (t) => {
    const zh = await browser.newContext({ viewport: PHONE, locale: 'zh-CN' });
    t.teardown(() => zh.close());
    const zhPage = await zh.newPage();
    await step(t, zhPage, 'chinese', async () => {
      await zhPage.goto(home.url);
      await zhPage.getByRole('button', { name: '登录' }).waitFor();
      t.equal(await zhPage.locator('html').getAttribute('lang'), 'zh-CN');
    });
  });

  t.same(pageErrors, [], 'no script error on the page');
});

/**
 * Records every text the streaming answer shows, as the browser renders it (browser code, kept as
 * text: this file is compiled without the DOM's types).
 */
const RECORD_LIVE_TEXT = `(() => {
  window.liveTexts = [];
  window.liveObserver?.disconnect();
  window.liveObserver = new MutationObserver(() => {
    for (const element of document.querySelectorAll('[data-testid=live-text]')) {
      const text = element.textContent ?? '';
      if (window.liveTexts.at(-1) !== text) window.liveTexts.push(text);
    }
  });
  window.liveObserver.observe(document.body, { subtree: true, childList: true, characterData: true });
})()`;

async function recordLiveText(page: Page): Promise<void> {
  await page.evaluate(RECORD_LIVE_TEXT);
}

async function liveTexts(page: Page): Promise<string[]> {
  return (await page.evaluate('window.liveTexts')) as string[];
}

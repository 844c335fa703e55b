/**
 * The web page's Changes and Health views in Debian's chromium on a 375 px phone, against the real
 * /api/v1 routes (the api harness) whose `changes.*` and `health` methods answer the contract's
 * shapes from memory (test/helpers/fake-change-tracker.ts): the trial banner, the list and its
 * status filter, a change opened with its files and diff, commit and rollback behind a
 * confirmation (a dismissed one sends nothing), the revert of a committed change, a tracker that is
 * off or missing, and the components with their status. The built page (npm run build) is served
 * through playwright's request routing, so no daemon and no port are needed.
 *
 * Time here is real (a browser): every wait is for a condition, with a deadline.
 */
import { existsSync, readFileSync } from 'node:fs';
import { extname, join, normalize } from 'node:path';
import type { Page, Route } from 'playwright-core';
import t from 'tap';
import { chromiumMissing, launchChromium, step } from '../helpers/browser.js';
import { REPO_ROOT } from '../helpers/daemon.js';
import { type FakeTracker, type FakeTrackerOptions, fakeChangeTracker, okComponent } from '../helpers/fake-change-tracker.js';
import { type ApiHarness, apiHarness, Type } from '../unit/plugins/webui/api-harness.js';

const WAIT_MS = 15_000;
const PAGE_DIR = join(REPO_ROOT, 'dist', 'plugins', 'webui', 'page');
const ORIGIN = 'http://homeagent.test';
const PHONE_375 = { width: 375, height: 812 };
const TYPES: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' };

const skip =
  chromiumMissing() ?? (existsSync(join(PAGE_DIR, 'index.html')) ? undefined : `${PAGE_DIR} is missing: run \`npm run build\` first`);

/** A harness with the fake tracker (or none) and the methods the Health view also loads. */
async function backend(t: Parameters<typeof apiHarness>[0], options: FakeTrackerOptions | 'none' = {}) {
  const h = await apiHarness(t);
  const tracker = options === 'none' ? undefined : fakeChangeTracker((name, params, handler) => h.method(name, params, handler), options);
  h.method('status', Type.Object({}), () => ({
    name: 'HomeAgent',
    version: '0.10.0',
    pid: 4242,
    state: 'running',
    status: 'Running',
    started_at: '2026-01-05T06:00:00.000Z',
    uptime_s: 3600,
    services: [],
    plugins: [],
    notices: [],
    restart_pending: [],
    memory: { rss_bytes: 80 << 20, heap_used_bytes: 30 << 20 },
  }));
  h.method('logs.recent', Type.Object({}, { additionalProperties: true }), () => ({ lines: [], dropped: 0 }));
  return { h, tracker };
}

/** Serves the built page and hands /api/v1 to the harness the test points `target.h` at. */
async function routeTo(page: Page, target: { h: ApiHarness }): Promise<void> {
  await page.route('**/*', async (route: Route) => {
    const request = route.request();
    const url = new URL(request.url());
    if (url.pathname === '/api/v1/auth/session')
      return route.fulfill({ json: { ok: true, result: { authenticated: true, method: 'session' } } });
    // No live events here: 204 tells EventSource not to reconnect.
    if (url.pathname === '/api/v1/events') return route.fulfill({ status: 204 });
    if (url.pathname.startsWith('/api/v1/')) {
      const body = request.postData();
      const reply = await target.h.app.inject({
        method: request.method() as 'GET',
        url: url.pathname + url.search,
        headers: { ...(body !== null && { 'content-type': request.headers()['content-type'] ?? 'application/json' }) },
        ...(body !== null && { payload: body }),
      });
      return route.fulfill({ status: reply.statusCode, contentType: 'application/json', body: reply.body });
    }
    const file = normalize(join(PAGE_DIR, url.pathname === '/' ? 'index.html' : url.pathname));
    if (!file.startsWith(PAGE_DIR) || !existsSync(file)) return route.fulfill({ status: 404, body: 'not found' });
    return route.fulfill({ status: 200, contentType: TYPES[extname(file)] ?? 'application/octet-stream', body: readFileSync(file) });
  });
}

/** True when nothing on the page is wider than the phone (no sideways scrolling). */
async function fitsWidth(page: Page): Promise<boolean> {
  // A string: the test is compiled without the DOM's types.
  return (await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')) as boolean;
}

const changeCalls = (h: ApiHarness) => h.calls.filter((c) => c.method === 'changes.rollback' || c.method === 'changes.commit');

t.test('the Changes and Health views in a browser', { skip: skip ?? false }, async (t) => {
  const main = await backend(t);
  const tracker = main.tracker as FakeTracker;
  const target = { h: main.h };
  const browser = await launchChromium(t);
  const context = await browser.newContext({ viewport: PHONE_375, locale: 'en-US', timezoneId: 'UTC' });
  const page = await context.newPage();
  page.setDefaultTimeout(WAIT_MS);
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  await routeTo(page, target);

  await t.test('the list: tracker line, trial banner, status badges, and the status filter', async (t) => {
    await step(t, page, 'changes-list', async () => {
      await page.goto(`${ORIGIN}/#/changes`);
      const banner = page.locator('[data-testid=trial-banner]');
      await banner.waitFor();
      t.match(await banner.textContent(), /Change 3 \(plugins: weather\) is on trial since .*If HomeAgent stays healthy it is committed/);
      t.match(
        await page.locator('[data-testid=tracker-status]').textContent(),
        /userspace tracker on \/var\/lib\/homeagent\/plugins: 3 files differ/,
      );
      await page.locator('li[data-change]').nth(2).waitFor();
      t.same(
        await page
          .locator('li[data-change]')
          .evaluateAll((items) => items.map((li) => [li.getAttribute('data-change'), li.querySelector('.badge')?.textContent])),
        [
          ['3', 'on trial'],
          ['2', 'rolled back'],
          ['1', 'committed'],
        ],
        'newest first, each with its status',
      );
      const trial = page.locator('li[data-change="3"]');
      t.match(await trial.textContent(), /by agent through cmd_run · from webui.*Plugins: weather.*3 files/);
      t.ok(await fitsWidth(page), 'the list fits 375 px');

      await page.locator('[data-testid=changes-filter]').selectOption('committed');
      await page.locator('li[data-change]').and(page.locator('[data-status=committed]')).waitFor();
      await page.waitForFunction("document.querySelectorAll('li[data-change]').length === 1");
      t.same(
        main.h.calls.filter((c) => c.method === 'changes.list').at(-1)?.params,
        { status: 'committed' },
        'the filter reaches changes.list',
      );
      await page.locator('[data-testid=changes-filter]').selectOption('');
      await page.waitForFunction("document.querySelectorAll('li[data-change]').length === 3");
    });
  });

  await t.test('a change opened: files, diff and notes; buttons by status', async (t) => {
    await step(t, page, 'change-detail', async () => {
      await page.locator('li[data-change="3"] h2 a').click();
      const detail = page.locator('[data-testid=change-detail][data-status=trial]');
      await detail.waitFor();
      t.equal(new URL(page.url()).hash, '#/changes/3', 'the change has its own address');
      t.same(await page.locator('[data-testid=change-files] li').evaluateAll((items) => items.map((li) => li.textContent)), [
        'added weather/extra.js',
        'changed weather/index.js',
        'deleted weather/radar.png · contents not kept',
      ]);
      const diff = page.locator('[data-testid=change-diff]');
      await diff.waitFor();
      t.match(await diff.textContent(), /\+\+\+ b\/weather\/extra\.js[\s\S]*\+export const version = 3;/);
      t.match(await page.getByText('contents not kept (binary').textContent(), /larger than max_kept_file_bytes/);
      t.ok(await detail.getByRole('button', { name: 'Roll back' }).isVisible());
      t.ok(await detail.getByRole('button', { name: 'Commit' }).isVisible());
      t.ok(await fitsWidth(page), 'the opened change fits 375 px');

      await page.goto(`${ORIGIN}/#/changes/1`);
      const committed = page.locator('[data-testid=change-detail][data-status=committed]');
      await committed.waitFor();
      t.match(await committed.textContent(), /Committed .* by supervisor/);
      t.equal(await committed.getByRole('button', { name: 'Commit' }).count(), 0, 'no commit for a committed change');
      t.equal(await committed.getByRole('button', { name: 'Roll back' }).count(), 1);
      await page.goto(`${ORIGIN}/#/changes/2`);
      const rolledBack = page.locator('[data-testid=change-detail][data-status=rolled_back]');
      await rolledBack.waitFor();
      t.match(await rolledBack.textContent(), /Why: plugin:clock failed its health ping 3 times in a row/);
      t.equal(await rolledBack.locator('button').count(), 0, 'a rolled back change has nothing left to do');

      await page.goto(`${ORIGIN}/#/changes/42`);
      const missing = page.locator('.error-box').first();
      await missing.waitFor();
      t.match(await missing.textContent(), /no change set 42.*\(HA_ERR_CHANGE_NOT_FOUND\)/, 'the server message and code are shown');
    });
  });

  await t.test('commit and rollback ask first; a dismissed question sends nothing', async (t) => {
    await step(t, page, 'commit-rollback', async () => {
      await page.goto(`${ORIGIN}/#/changes/3`);
      const detail = page.locator('[data-testid=change-detail][data-status=trial]');
      await detail.waitFor();
      const questions: string[] = [];
      page.once('dialog', (dialog) => {
        questions.push(dialog.message());
        void dialog.dismiss();
      });
      await detail.getByRole('button', { name: 'Roll back' }).click();
      t.same(changeCalls(main.h), [], 'dismissed: no rollback was sent');
      t.match(questions, [/^Roll back change 3\? Its files go back to the last good state/]);

      page.once('dialog', (dialog) => {
        questions.push(dialog.message());
        void dialog.accept();
      });
      await detail.getByRole('button', { name: 'Commit' }).click();
      const notice = page.locator('[data-testid=change-notice]');
      await notice.waitFor();
      t.equal(await notice.textContent(), 'Committed change 3.');
      await page.locator('[data-testid=change-detail][data-status=committed]').waitFor();
      t.match(questions.at(-1), /^Commit change 3\? It becomes part of the last good state/);
      t.same(changeCalls(main.h), [
        { method: 'changes.commit', params: { id: 3 }, caller: { actor: 'webui:api', owner: true, proof: 'the web API key' } },
      ]);
      await page.locator('[data-testid=trial-banner]').waitFor({ state: 'detached' });
      t.equal(tracker.sets[2]?.status, 'committed');

      await page.goto(`${ORIGIN}/#/changes/1`);
      const committed = page.locator('[data-testid=change-detail][data-status=committed]');
      await committed.waitFor();
      page.once('dialog', (dialog) => {
        questions.push(dialog.message());
        void dialog.accept();
      });
      await committed.getByRole('button', { name: 'Roll back' }).click();
      await page.locator('[data-testid=change-detail][data-status=trial]').waitFor();
      t.match(questions.at(-1), /^Change 1 is committed\. Make a new change that reverts it/);
      t.equal(new URL(page.url()).hash, '#/changes/4', 'the reverting change opens');
      t.equal(await page.locator('[data-testid=change-notice]').textContent(), 'Change 4 was made to revert change 1; it is on trial now.');
      t.match(await page.locator('[data-testid=trial-banner]').textContent(), /Change 4 \(plugins: weather\) is on trial/);
      t.match(await page.locator('[data-testid=change-detail]').textContent(), /Reverts change 1/);
    });
  });

  await t.test('Health: components worst first with colour, word and symbol; the trial; not healthy said', async (t) => {
    tracker.setComponents([
      okComponent('event_loop', 'longest stall 12 ms'),
      { ...okComponent('llm'), status: 'degraded', detail: 'qwen-local unreachable' },
      { ...okComponent('plugin:weather'), status: 'failed', detail: 'health ping timed out', failures: 2 },
    ]);
    await step(t, page, 'health', async () => {
      await page.goto(`${ORIGIN}/#/health`);
      const state = page.locator('[data-testid=health-state][data-status=failed]');
      await state.waitFor();
      t.equal(await state.textContent(), '✗ Something failed');
      t.ok(await state.evaluate((el) => el.classList.contains('error-text')), 'failed is red');
      t.same(
        await page
          .locator('[data-testid=health-components] li')
          .evaluateAll((items) => items.map((li) => li.getAttribute('data-component'))),
        ['plugin:weather', 'llm', 'event_loop'],
        'the worst first',
      );
      const weather = page.locator('li[data-component="plugin:weather"]');
      t.match(await weather.textContent(), /✗ Failed plugin:weather health ping timed out.*since .*2 failed checks in a row/);
      t.equal(await weather.locator('span').first().getAttribute('class'), 'error-text');
      t.equal(await page.locator('li[data-component=llm] span').first().getAttribute('class'), 'warn-text', 'degraded is amber');
      t.equal(await page.locator('li[data-component=event_loop] span').first().getAttribute('class'), 'ok');
      t.match(await page.locator('[data-testid=trial-banner]').textContent(), /Change 4/);
      t.equal(await page.getByText('A kernel component failed').count(), 0, 'a failed plugin leaves the kernel healthy');
      t.ok(await fitsWidth(page), 'the health view fits 375 px');

      tracker.setComponents([{ ...okComponent('state_db'), status: 'failed', detail: 'SQLITE_READONLY' }]);
      await page.getByRole('button', { name: 'Refresh' }).first().click();
      await page.getByText('A kernel component failed: the systemd watchdog is no longer fed').waitFor();
    });
  });

  await t.test('a tracker that is off, and a daemon without one, are notices with the reason', async (t) => {
    const off = await backend(t, { off: true });
    target.h = off.h;
    await step(t, page, 'tracker-off', async () => {
      await page.goto(`${ORIGIN}/#/changes`);
      await page.reload();
      const notice = page.locator('[data-testid=changes-unavailable]');
      await notice.waitFor();
      t.match(await notice.textContent(), /The change tracker is off \(core\.tracker\.backend: off\)/);
      t.equal(await page.locator('li[data-change]').count(), 0);
    });
    const none = await backend(t, 'none');
    target.h = none.h;
    await step(t, page, 'tracker-missing', async () => {
      await page.reload();
      const notice = page.locator('[data-testid=changes-unavailable]');
      await notice.waitFor();
      t.match(await notice.textContent(), /The change tracker is not available: .*changes\.status/);
    });
  });

  t.same(pageErrors, [], 'no script errors on the page');
});

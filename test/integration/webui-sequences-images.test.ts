/**
 * The web page's Sequences view and the pictures in its chat, in Debian's chromium against the
 * built daemon. The model (the scripted LLM server) creates two sequences with seq_create; the view
 * lists them with tier and steps, runs the one that acts with its declared argument and shows the
 * result, shows a dangerous one's steps for approval before anything runs (refused: nothing runs;
 * approved: it runs), and deletes only after the person says yes. A picture drawn by ai_image
 * against a scripted images server and sent with output_send__webui (type image, the media id)
 * renders as an <img> that loaded, no wider than the screen, and one missing from the store says
 * so; the media route refuses a request without the session or key, a non-digest id and an unknown
 * digest. At 375 px, in English and Chinese, neither view is wider than the screen.
 * A failed step keeps a screenshot under .tap/fixtures/ and names it in the failure.
 *
 * Time here is real (a daemon and a browser): every wait is for a condition, with a deadline.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import t from 'tap';
import {
  chromiumMissing,
  HOME_CONFIG,
  launchChromium,
  login,
  overflow,
  startWebuiHome,
  step,
  streamedAnswer,
  toolCall,
  type WebuiHome,
} from '../helpers/browser.js';
import { type HelperTest, REPO_ROOT } from '../helpers/daemon.js';

const WAIT_MS = 20_000;
const PAGE_INDEX = join(REPO_ROOT, 'dist', 'plugins', 'webui', 'page', 'index.html');
const PHONE_375 = { width: 375, height: 812 };

const skip = chromiumMissing() ?? (existsSync(PAGE_INDEX) ? undefined : `${PAGE_INDEX} is missing: run \`npm run build\` first`);

/** A solid PNG of `width` x `height` (wider than a phone: the page must scale it down). */
function png(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(width * 3, 0xc8)]);
  const pixels = Buffer.concat(Array.from({ length: height }, () => row));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(pixels)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

const PICTURE = png(1200, 300);
const DIGEST = createHash('sha256').update(PICTURE).digest('hex');

/** An OpenAI-compatible images API that draws PICTURE for every request. */
async function startImagesServer(t: HelperTest): Promise<{ url: string; requests: number }> {
  const state = { url: '', requests: 0 };
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      state.requests++;
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ created: 1, data: [{ b64_json: PICTURE.toString('base64') }] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return state;
}

const REMINDER = {
  name: 'door reminder',
  description: 'A timer to lock the door, then the timers',
  in: { minutes: { type: 'integer', default: 10 } },
  groups: [
    {
      name: 'remind',
      calls: [{ tool: 'timer_set', args: { duration: '$args.minutes minutes', message: 'lock the door', name: 'door' }, as: 'timer' }],
    },
    { name: 'show', calls: [{ tool: 'timer_list', as: 'timers' }] },
  ],
};
const DANGEROUS = {
  name: 'uptime check',
  description: 'Runs uptime',
  groups: [{ name: 'run', calls: [{ tool: 'cmd_run', args: { argv: ['uptime'] } }] }],
};

async function seedSequences(home: WebuiHome): Promise<void> {
  home.llm.enqueue(
    toolCall('seq_create', REMINDER, 'call_seq_1'),
    toolCall('seq_create', DANGEROUS, 'call_seq_2'),
    streamedAnswer(['Made both.']),
  );
  await home.call('agent.chat', { text: 'make a door reminder sequence and an uptime check' });
  const listed = await home.api<{ sequences: Array<{ name: string; tier: string }> }>('GET', '/sequences');
  const tiers = Object.fromEntries(listed.sequences.map((s) => [s.name, s.tier]));
  if (tiers['door reminder'] !== 'act' || tiers['uptime check'] !== 'dangerous')
    throw new Error(`the model's sequences were not both created: ${JSON.stringify(listed)}`);
}

async function noOverflow(t: { ok(value: unknown, message: string): unknown }, page: Page, what: string): Promise<void> {
  const o = await overflow(page);
  t.ok(o.scrollWidth <= PHONE_375.width, `${what}: ${o.scrollWidth} px wide on a ${PHONE_375.width} px screen ${o.wide.join(', ')}`);
}

t.test('the Sequences view and pictures in the chat', { skip: skip ?? false }, async (t) => {
  const images = await startImagesServer(t);
  const home = await startWebuiHome(t, {
    config: { ...HOME_CONFIG, plugin: { ...HOME_CONFIG.plugin, ai_image: { base_url: images.url } } },
  });
  await seedSequences(home);
  const browser = await launchChromium(t);

  await t.test('the media route: only for the owner, only digests, only stored pictures', async (t) => {
    const media = new URL(`api/v1/media/${DIGEST}`, home.url);
    const anonymous = await fetch(media);
    t.equal(anonymous.status, 401, 'no session and no key: refused');
    t.notMatch(anonymous.headers.get('content-type') ?? '', /^image\//, 'and no picture in the answer');
    const forged = await fetch(media, { headers: { cookie: 'homeagent_session=not-a-session' } });
    t.equal(forged.status, 401, 'a made-up session cookie: refused');
    const traversal = await fetch(new URL('api/v1/media/..%2F..%2Fconfig.yaml', home.url), { headers: { 'X-API-Key': home.apiKey } });
    t.equal(traversal.status, 400, 'an id that is not a digest is refused before any file is looked at');
    const unknown = await fetch(new URL(`api/v1/media/${'0'.repeat(64)}`, home.url), { headers: { 'X-API-Key': home.apiKey } });
    t.equal(unknown.status, 404, 'an unknown digest: not found');
  });

  const context = await browser.newContext({ viewport: PHONE_375, locale: 'en-GB' });
  t.teardown(() => context.close());
  const page = await context.newPage();
  page.setDefaultTimeout(WAIT_MS);
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  await login(page, home);

  await t.test('a generated picture sent to the page shows as a picture', async (t) => {
    await step(t, page, 'chat-picture', async () => {
      home.llm.enqueue(
        toolCall('image_generate', { prompt: 'a red kite over a green hill', size: '1024x1024' }, 'call_draw'),
        toolCall('output_send__webui', { type: 'image', payload: DIGEST, meta: { caption: 'A red kite over a green hill' } }, 'call_send'),
        streamedAnswer(['Here it is.']),
      );
      await page.goto(`${home.url}#/chat`);
      await page.locator('.composer textarea').fill('Can you draw me a picture of a kite flying over a hill?');
      await page.locator('.composer button[type=submit]').click();
      const image = page.locator('[data-testid=chat-output] img[data-testid=chat-image]');
      await image.waitFor();
      await page.locator('[data-testid=answer-text]', { hasText: 'Here it is.' }).waitFor();
      t.equal(images.requests, 1, 'the images API was asked once');
      t.equal(await image.getAttribute('alt'), 'A red kite over a green hill', 'the caption is its alt text');
      t.equal(await image.getAttribute('src'), `/api/v1/media/${DIGEST}`, 'fetched from the media route by its digest');
      const deadline = Date.now() + WAIT_MS;
      let loaded = { complete: false, naturalWidth: 0, width: 0 };
      while (Date.now() < deadline) {
        loaded = await image.evaluate((img: { complete: boolean; naturalWidth: number; getBoundingClientRect(): { width: number } }) => ({
          complete: img.complete,
          naturalWidth: img.naturalWidth,
          width: img.getBoundingClientRect().width,
        }));
        if (loaded.complete && loaded.naturalWidth > 0) break;
        await page.waitForTimeout(50);
      }
      t.equal(loaded.naturalWidth, 1200, 'the picture loaded with the session cookie (naturalWidth 1200)');
      t.ok(loaded.width > 0 && loaded.width < PHONE_375.width, `shown ${Math.round(loaded.width)} px wide, within the screen`);
      t.notMatch(await page.locator('[data-testid=chat-output]').textContent(), DIGEST, 'the media id is not written out as text');
      await noOverflow(t, page, 'the chat with the picture');
      const viaKey = await fetch(new URL(`api/v1/media/${DIGEST}`, home.url), { headers: { 'X-API-Key': home.apiKey } });
      t.equal(viaKey.status, 200);
      t.equal(viaKey.headers.get('content-type'), 'image/png', 'the type read from the bytes');
      t.equal(viaKey.headers.get('x-content-type-options'), 'nosniff');
      t.match(viaKey.headers.get('content-security-policy') ?? '', /sandbox/);
      t.same(Buffer.from(await viaKey.arrayBuffer()), PICTURE, 'the stored bytes');
    });
  });

  await t.test('a picture that is not in the media store says so instead of a broken image', async (t) => {
    await step(t, page, 'chat-picture-missing', async () => {
      home.llm.enqueue(
        toolCall('output_send__webui', { type: 'image', payload: 'f'.repeat(64) }, 'call_send_gone'),
        streamedAnswer(['Sent.']),
      );
      await page.locator('.composer textarea').fill('Can you send me the other picture as well?');
      await page.locator('.composer button[type=submit]').click();
      const gone = page.locator('[data-testid=chat-output] figure.picture p.error-text');
      await gone.waitFor();
      t.match(await gone.textContent(), /The picture could not be loaded/);
      t.equal(await page.locator('img[data-testid=chat-image]').count(), 1, 'only the stored picture is an image');
    });
  });

  await t.test('the Sequences view lists, runs, asks before a dangerous run, and deletes after asking', async (t) => {
    await step(t, page, 'sequences', async () => {
      await page.goto(`${home.url}#/sequences`);
      const reminder = page.locator('li.sequence[data-sequence="door reminder"]');
      const danger = page.locator('li.sequence[data-sequence="uptime check"]');
      await reminder.waitFor();
      t.match(await reminder.textContent(), /A timer to lock the door/, 'its description');
      t.equal(await reminder.locator('[data-testid=seq-tier]').textContent(), 'acts');
      t.match(await reminder.locator('[data-testid=seq-steps]').textContent(), /remind: timer_set.*show: timer_list/s, 'its steps');
      t.equal(await danger.locator('[data-testid=seq-tier]').textContent(), 'dangerous');
      await noOverflow(t, page, 'the Sequences view');

      // Run with the declared argument: a 25-minute timer.
      await reminder.locator('input[data-arg=minutes]').fill('25');
      await reminder.locator('[data-testid=seq-run]').click();
      const outcome = reminder.locator('[data-testid=seq-outcome]');
      await outcome.waitFor();
      t.match(await outcome.textContent(), /Done: door reminder \(2 steps\)/, 'the run is shown');
      t.match(await outcome.locator('pre').textContent(), /door/, 'with its results (the timer named door)');

      // A dangerous one: its steps for approval first; refused, nothing ran.
      await danger.locator('[data-testid=seq-run]').click();
      const approval = danger.locator('[data-testid=seq-approval]');
      await approval.waitFor();
      t.match(await approval.textContent(), /1\) run: cmd_run/, 'the steps it would run');
      t.match(await approval.textContent(), /dangerous steps/);
      await noOverflow(t, page, 'the approval of a dangerous sequence');
      await approval.locator('[data-testid=seq-refuse]').click();
      await approval.waitFor({ state: 'detached' });
      t.equal(await danger.locator('[data-testid=seq-outcome]').count(), 0, 'refused: it did not run');
      // Asked again and approved: it runs, as the owner, and says so.
      await danger.locator('[data-testid=seq-run]').click();
      await approval.locator('[data-testid=seq-approve]').click();
      await danger.locator('[data-testid=seq-outcome]').waitFor();
      t.match(await danger.locator('[data-testid=seq-outcome]').textContent(), /Done: uptime check \(1 step\)/, 'approved: it ran');
      t.equal(await approval.count(), 0, 'the approval card is gone');

      // Deleting asks first: "no" keeps it, "yes" removes it.
      page.once('dialog', (dialog) => {
        t.match(dialog.message(), /Delete the sequence door reminder\?/);
        void dialog.dismiss();
      });
      await reminder.locator('[data-testid=seq-delete]').click();
      await page.waitForTimeout(200);
      t.equal(await reminder.count(), 1, 'answered no: still there');
      page.once('dialog', (dialog) => void dialog.accept());
      await reminder.locator('[data-testid=seq-delete]').click();
      await reminder.waitFor({ state: 'detached' });
      const left = await home.api<{ sequences: Array<{ name: string }> }>('GET', '/sequences');
      t.same(
        left.sequences.map((s) => s.name),
        ['uptime check'],
        'deleted in the daemon too',
      );
    });
  });

  await t.test('in Chinese at 375 px: the views fit and speak Chinese', async (t) => {
    const zh = await browser.newContext({ viewport: PHONE_375, locale: 'zh-CN' });
    t.teardown(() => zh.close());
    const zhPage = await zh.newPage();
    zhPage.setDefaultTimeout(WAIT_MS);
    zhPage.on('pageerror', (error) => pageErrors.push(error.message));
    await login(zhPage, home);
    await step(t, zhPage, 'zh-sequences', async () => {
      await zhPage.goto(`${home.url}#/sequences`);
      const danger = zhPage.locator('li.sequence[data-sequence="uptime check"]');
      await danger.waitFor();
      t.equal(await zhPage.locator('nav.tabs a[href="#/sequences"]').textContent(), '序列');
      t.equal(await danger.locator('[data-testid=seq-tier]').textContent(), '危险');
      await danger.locator('[data-testid=seq-run]').click();
      await danger.locator('[data-testid=seq-approval]').waitFor();
      t.match(await danger.locator('[data-testid=seq-approval]').textContent(), /它包含危险步骤/);
      await noOverflow(t, zhPage, 'the Sequences view in Chinese');
    });
    await step(t, zhPage, 'zh-chat-picture', async () => {
      home.llm.enqueue(
        toolCall('output_send__webui', { type: 'image', payload: `sha256:${DIGEST}` }, 'call_send_zh'),
        streamedAnswer(['画好了。']),
      );
      await zhPage.goto(`${home.url}#/chat`);
      await zhPage.locator('.composer textarea').fill('再发一次那张图');
      await zhPage.locator('.composer button[type=submit]').click();
      const image = zhPage.locator('img[data-testid=chat-image]').last();
      await image.waitFor();
      t.equal(await image.getAttribute('alt'), 'HomeAgent 发来的图片', 'without a caption, the alt text in Chinese');
      await zhPage.locator('[data-testid=answer-text]', { hasText: '画好了。' }).waitFor();
      await noOverflow(t, zhPage, 'the chat with the picture in Chinese');
    });
  });

  t.same(pageErrors, [], 'no script errors on the page');
});

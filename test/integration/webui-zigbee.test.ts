/**
 * The Zigbee panel of the web page's Home view, in Debian's chromium against the daemon with the
 * mqtt plugin on a real mosquitto and a scripted Zigbee2MQTT bridge (test/helpers/
 * scripted-z2m-bridge.ts, Z2M's request/response topics and refusals). The panel lists the
 * bridge's devices with availability and link quality, opens joining for the chosen time and closes
 * it, renames a device, removes one only after the person says yes (a sleeping device's refusal is
 * shown and offers removal by force), and adds and deletes a group and its members; each reaches
 * the bridge as the request Z2M expects. A home without the Zigbee feature shows no panel. At
 * 375 px, in English and Chinese, the panel is no wider than the screen.
 *
 * Time here is real (a daemon, a broker and a browser): every wait is for a condition, with a deadline.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import t from 'tap';
import { chromiumMissing, HOME_CONFIG, launchChromium, login, overflow, startWebuiHome, step } from '../helpers/browser.js';
import { REPO_ROOT, tempDir } from '../helpers/daemon.js';
import { Mosquitto, mosquittoMissing } from '../helpers/mosquitto.js';
import { connectTestLink } from '../helpers/mqtt-test-broker.js';
import { ScriptedBridge } from '../helpers/scripted-z2m-bridge.js';

const WAIT_MS = 20_000;
const PAGE_INDEX = join(REPO_ROOT, 'dist', 'plugins', 'webui', 'page', 'index.html');
const PHONE_375 = { width: 375, height: 812 };

const skip =
  chromiumMissing() ?? mosquittoMissing() ?? (existsSync(PAGE_INDEX) ? undefined : `${PAGE_INDEX} is missing: run \`npm run build\` first`);

async function until(check: () => boolean, what: string): Promise<void> {
  const end = Date.now() + WAIT_MS;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const device = (page: Page, name: string) => page.locator(`li.zigbee-device[data-device="${name}"]`);

t.test('the Zigbee panel of the Home view', { skip: skip ?? false }, async (t) => {
  const dir = tempDir(t, 'ha-webui-zigbee-');
  mkdirSync(join(dir, 'broker'));
  const broker = await Mosquitto.start({ dir: join(dir, 'broker') });
  t.teardown(() => broker.stop());
  const link = await connectTestLink(broker.url, 'scripted-z2m');
  t.teardown(() => link.end());
  const bridge = new ScriptedBridge(link);
  // The bridge's subscription is in place before anyone asks it anything.
  await link.client.subscribeAsync('test/sync', { qos: 1 });
  await bridge.publishAll();

  const home = await startWebuiHome(t, {
    config: {
      ...HOME_CONFIG,
      plugin: { ...HOME_CONFIG.plugin, mqtt: { url: broker.url, zigbee2mqtt: true, zigbee2mqtt_confirm_ms: 500 } },
    },
  });
  const listed = async () => (await home.api<{ devices: Array<{ friendly_name: string }> }>('GET', '/zigbee')).devices.length;
  const end = Date.now() + WAIT_MS;
  while ((await listed()) === 0 && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 50));
  const status = await home.api<{ bridge: string; devices: Array<{ friendly_name: string; availability: string }> }>('GET', '/zigbee');
  t.ok(status.devices.length > 3, `the daemon heard the bridge's device list (${status.devices.length} devices)`);

  const browser = await launchChromium(t);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-GB' });
  t.teardown(() => context.close());
  const page = await context.newPage();
  page.setDefaultTimeout(WAIT_MS);
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  const dialogs: string[] = [];
  let answer = true;
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void (answer ? dialog.accept() : dialog.dismiss());
  });
  await login(page, home);
  await page.goto(`${home.url}#/home`);
  const panel = page.getByTestId('zigbee');

  await step(t, page, 'devices listed with their diagnostics', async () => {
    await panel.locator('li.zigbee-device').first().waitFor();
    t.equal(await panel.locator('li.zigbee-device').count(), status.devices.length, 'one row per device of the bridge');
    t.equal(await panel.getByTestId('zb-bridge').textContent(), 'online', 'the bridge is online');
    const offline = status.devices.find((d) => d.availability === 'offline');
    t.ok(offline, 'the bridge reports a device offline');
    if (offline) t.match(await device(page, offline.friendly_name).textContent(), /offline/, `${offline.friendly_name} shows offline`);
  });

  await step(t, page, 'joining opens for the chosen time and closes', async () => {
    await panel.getByLabel('How long new devices may join').selectOption('120');
    await panel.getByTestId('zb-join').click();
    await panel.getByTestId('zb-join-open').waitFor();
    t.match(await panel.getByTestId('zb-join-open').textContent(), /New devices can join/, 'the panel says joining is open');
    const opened = bridge.requests.find((r) => r.path === 'permit_join');
    t.equal(opened?.payload.time, 120, 'Z2M was asked to open joining for 120 s');
    await panel.getByTestId('zb-join-close').click();
    await panel.getByTestId('zb-join').waitFor();
    t.equal(bridge.requests.filter((r) => r.path === 'permit_join').at(-1)?.payload.time, 0, 'and to close it');
  });

  await step(t, page, 'a device is renamed', async () => {
    const row = device(page, 'Hall switch');
    await row.getByTestId('zb-rename').click();
    await row.getByLabel('New name').fill('Hall wall switch');
    await row.getByTestId('zb-rename-save').click();
    await device(page, 'Hall wall switch').waitFor();
    const renamed = bridge.requests.find((r) => r.path === 'device/rename')?.payload;
    t.same([renamed?.from, renamed?.to], ['Hall switch', 'Hall wall switch'], 'Z2M was asked to rename it');
  });

  await step(t, page, 'removal is asked first; a sleeping device is removed by force only when asked again', async () => {
    answer = false;
    const row = device(page, 'bathroom/climate');
    await row.getByTestId('zb-remove').click();
    await until(() => dialogs.length === 1, 'the confirmation');
    t.match(dialogs[0], /Remove bathroom\/climate from the Zigbee network\?/, 'the person is asked');
    t.notOk(
      bridge.requests.some((r) => r.path === 'device/remove'),
      'said no: nothing was sent',
    );
    answer = true;
    await row.getByTestId('zb-remove').click();
    await row.getByTestId('zb-remove-force').waitFor();
    t.match(await row.textContent(), /mgmtLeaveRsp|HA_ERR_ZIGBEE_REQUEST/, "Z2M's refusal is shown");
    t.equal(bridge.requests.filter((r) => r.path === 'device/remove').at(-1)?.payload.force, false, 'the first removal was not forced');
    await row.getByTestId('zb-remove-force').click();
    await row.waitFor({ state: 'detached' });
    t.equal(bridge.requests.filter((r) => r.path === 'device/remove').at(-1)?.payload.force, true, 'the second was, after a second yes');
    t.match(dialogs.at(-1), /did not answer/, 'the second question says why force is needed');
  });

  await step(t, page, 'a group is added, gets a member, loses it and is deleted', async () => {
    await panel.getByLabel('New group name').fill('kitchen_lights');
    await panel.getByTestId('zb-group-add').click();
    const group = panel.locator('li.zigbee-group[data-group="kitchen_lights"]');
    await group.waitFor();
    await group.getByLabel('Device to add').selectOption('living_room/ceiling');
    await group.getByTestId('zb-member-add').click();
    await group.locator('[data-member="living_room/ceiling"]').waitFor();
    t.same(
      bridge.requests.filter((r) => r.path === 'group/members/add').map((r) => [r.payload.group, r.payload.device]),
      [['kitchen_lights', 'living_room/ceiling']],
      'Z2M was asked to add the member',
    );
    await group.getByLabel('Take living_room/ceiling out of the group').click();
    await group.locator('[data-member]').waitFor({ state: 'detached' });
    await group.getByTestId('zb-group-remove').click();
    await group.waitFor({ state: 'detached' });
    t.ok(
      bridge.requests.some((r) => r.path === 'group/remove' && r.payload.id === 'kitchen_lights'),
      'and to delete the group after the yes',
    );
  });

  for (const locale of ['en-GB', 'zh-CN']) {
    await step(t, page, `the panel fits a 375 px phone (${locale})`, async () => {
      const phone = await browser.newContext({ viewport: PHONE_375, locale });
      t.teardown(() => phone.close());
      const small = await phone.newPage();
      small.setDefaultTimeout(WAIT_MS);
      await login(small, home);
      await small.goto(`${home.url}#/home`);
      await small.getByTestId('zigbee').locator('li.zigbee-device').first().waitFor();
      if (locale === 'zh-CN')
        t.match(await small.getByTestId('zigbee').locator('h2').textContent(), /Zigbee 网络/, 'the panel speaks Chinese');
      const o = await overflow(small);
      t.ok(o.scrollWidth <= PHONE_375.width, `${locale}: ${o.scrollWidth} px wide on a ${PHONE_375.width} px screen ${o.wide.join(', ')}`);
    });
  }
  t.same(pageErrors, [], 'no script errors on the page');
});

t.test('a home without Zigbee2MQTT shows no Zigbee panel', { skip: skip ?? false }, async (t) => {
  const home = await startWebuiHome(t);
  const browser = await launchChromium(t);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-GB' });
  t.teardown(() => context.close());
  const page = await context.newPage();
  page.setDefaultTimeout(WAIT_MS);
  await login(page, home);
  await page.goto(`${home.url}#/home`);
  await page.locator('section.home .area').first().waitFor();
  await page.waitForLoadState('networkidle');
  t.equal(await page.getByTestId('zigbee').count(), 0, 'no panel, and no error in its place');
  t.equal(await page.locator('section.home .error-box').count(), 0, 'no error box either');
});

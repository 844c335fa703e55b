/**
 * The owner's name, area and aliases of an entity on the built daemon (issue 29, point 3): set with
 * `homeagentctl entities rename|area|alias` (the real binary on the daemon's socket), kept over a
 * restart of the daemon while the GPIO driver registers the pin again under its configured name,
 * and refused on the web API without an owner session (the session-authenticated page may change
 * it). A door contact reads "open" in the CLI's list, not "on".
 */

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { tempDir } from '../helpers/daemon.js';
import { startDaemon } from '../helpers/in-process-daemon.js';
import { RpcConnection } from '../helpers/rpc.js';
import { type Reply, type RequestOptions, send as sendRequest } from '../unit/plugins/webui/webui-setup.js';

const LIGHT = { id: 'hall_light', name: 'Hall light', area: 'hall', bcm: 17, direction: 'out', domain: 'light' };
const DOOR = { id: 'back_door', name: 'Back door', bcm: 5, direction: 'in', domain: 'binary_sensor', device_class: 'door' };

function writeConfig(t: Test): { config: string; dataDir: string } {
  const dir = tempDir(t, 'ha-overrides-');
  const file = join(dir, 'config.yaml');
  const config = {
    core: { home: { areas: [{ id: 'kitchen', name: 'Kitchen', aliases: ['厨房'] }] } },
    plugin: { gpio: { backend: 'simulated', pins: [LIGHT, DOOR] } },
  };
  writeFileSync(file, JSON.stringify(config, null, 2));
  return { config: file, dataDir: join(dir, 'data') };
}

/** A same-origin request from the page (the web plugin's guard refuses cross-site changes). */
function send(port: number, path: string, options: RequestOptions = {}): Promise<Reply> {
  return sendRequest(port, path, { ...options, headers: { 'sec-fetch-site': 'same-origin', ...options.headers } });
}

t.test('overrides from the CLI survive a daemon restart; the web API refuses them without an owner session', async (t) => {
  const { config, dataDir } = writeConfig(t);
  const env = { HOMEAGENT_CONFIG: config };
  const first = await startDaemon(t, { dataDir, env });
  await first.waitForReady(30_000);

  const list = await first.ctl(['entities', 'list'], { env: { LANG: 'C' } });
  t.equal(list.code, 0, list.stderr);
  t.match(list.stdout, /binary_sensor\.back_door +Back door +- +(closed|open) /, 'a door contact reads closed or open, not off or on');

  const renamed = await first.ctl(['entities', 'rename', 'light.hall_light', 'Ceiling light'], { env: { LANG: 'C' } });
  t.equal(renamed.code, 0, renamed.stderr);
  t.match(renamed.stdout, /name +Ceiling light \(yours\)/);
  t.equal((await first.ctl(['entities', 'area', 'Ceiling', 'light', '厨房'])).code, 0);
  t.equal((await first.ctl(['entities', 'alias', 'light.hall_light', 'add', '吊灯'])).code, 0);
  const refused = await first.ctl(['entities', 'rename', 'light.hall_light']);
  t.not(refused.code, 0, 'a rename without a name is a usage error');
  await first.dispose();

  const second = await startDaemon(t, { dataDir, env });
  await second.waitForReady(30_000);
  const got = await second.ctl(['--json', 'entities', 'get', '厨房吊灯']);
  t.equal(got.code, 0, got.stderr);
  t.match(
    (got.json() as { entity: unknown }).entity,
    {
      entity_id: 'light.hall_light',
      name: 'Ceiling light',
      area: 'kitchen',
      aliases: ['吊灯'],
      overrides: { name: 'Ceiling light', area: 'kitchen', aliases_added: ['吊灯'] },
    },
    'the driver registered "Hall light" in the hall again; the owner’s values win',
  );

  const rpc = await RpcConnection.connect(second.socketPath);
  t.teardown(() => rpc.close());
  const credentials = await rpc.request('webui.credentials', {});
  t.ok(credentials.ok);
  const { url, password } = credentials.result as { url: string; password: string };
  const port = Number(new URL(url).port);
  const patch = (headers: Record<string, string>) =>
    send(port, '/api/v1/entities/light.hall_light', { method: 'PATCH', headers, body: JSON.stringify({ name: 'Hacked' }) });

  const anonymous = await patch({});
  t.equal(anonymous.status, 401, 'no session, no key: refused');
  t.equal((await patch({ cookie: 'ha_session=not-a-session' })).status, 401, 'a made-up session: refused');
  const login = await send(port, '/api/v1/auth/login', { method: 'POST', body: JSON.stringify({ password }) });
  t.equal(login.status, 200);
  const cookie = String([login.headers['set-cookie'] ?? []].flat()[0]).split(';')[0] ?? '';
  const owner = await patch({ cookie });
  t.equal(owner.status, 200, JSON.stringify(owner.body));
  t.match(owner.body, { ok: true, result: { name: 'Hacked' } }, 'the owner’s session may');
  const back = await send(port, '/api/v1/entities/light.hall_light', {
    method: 'PATCH',
    headers: { cookie },
    body: JSON.stringify({ name: null, reset_area: true, aliases: [] }),
  });
  t.match(back.body, { ok: true, result: { name: 'Hall light', area: 'hall', aliases: [] } }, "cleared: the driver's values again");
  t.notOk('overrides' in ((back.body.result as object | undefined) ?? {}));
});

// The embedded broker's generated logins on a real file system: made once (mode 0600, never
// readable by others, not even while being written), read back unchanged, a reset that keeps the
// old password when storing fails, and a damaged file left untouched with an error naming it.
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { BROKER_CREDENTIALS_FILE, BrokerCredentialStore } from '../../../../plugins/mqtt/broker-credentials.js';
import { isHomeAgentError } from '../../../../src/shared/errors.js';

const mode = (file: string) => statSync(file).mode & 0o777;

t.test('made at the first start, private, and the same at the next', async (t) => {
  const dir = join(t.testdir(), 'plugin-data', 'mqtt');
  let now = Date.parse('2025-01-02T03:04:05Z');
  const store = new BrokerCredentialStore({ dir, now: () => now });
  const first = await store.load();
  t.equal(first.created, true);
  t.equal(store.file, join(dir, BROKER_CREDENTIALS_FILE));
  t.equal(mode(store.file), 0o600, 'mode 0600');
  t.match(first.credentials, {
    homeagent: { username: 'homeagent', password: /^[A-Za-z0-9_-]{32}$/ },
    devices: { username: 'devices', password: /^[A-Za-z0-9_-]{32}$/ },
    created_at: '2025-01-02T03:04:05.000Z',
  });
  t.not(first.credentials.homeagent.password, first.credentials.devices.password, 'two different passwords');
  t.same(readdirSync(dir), [BROKER_CREDENTIALS_FILE], 'no temporary file left');

  now += 1000;
  const again = await new BrokerCredentialStore({ dir, now: () => now }).load();
  t.equal(again.created, false);
  t.same(again.credentials, first.credentials, 'read back unchanged');
});

t.test('a reset replaces the devices password only, stored before it is answered', async (t) => {
  const dir = t.testdir();
  const store = new BrokerCredentialStore({ dir });
  const { credentials: before } = await store.load();
  const after = await store.resetDevices();
  t.equal(after.homeagent.password, before.homeagent.password, "HomeAgent's own login is kept");
  t.not(after.devices.password, before.devices.password, 'a new devices password');
  t.same((await new BrokerCredentialStore({ dir }).load()).credentials, after, 'and it is what the file holds');
  t.equal(mode(store.file), 0o600);

  // Storing fails (a folder stands where the file belongs, which even root cannot rename over):
  // the login in use stays the old one and no copy of the passwords is left behind.
  rmSync(store.file);
  mkdirSync(join(store.file, 'in-the-way'), { recursive: true });
  await t.rejects(store.resetDevices(), { code: 'HA_ERR_MQTT_BROKER', message: /could not be written/ });
  t.same(store.current(), after, 'the login in use is unchanged');
  t.same(readdirSync(dir), [BROKER_CREDENTIALS_FILE], 'no temporary file left');
});

t.test('a copy that came back readable by others is made private again', async (t) => {
  const dir = t.testdir();
  const store = new BrokerCredentialStore({ dir });
  await store.load();
  chmodSync(store.file, 0o644);
  await new BrokerCredentialStore({ dir }).load();
  t.equal(mode(store.file), 0o600);
});

t.test('a damaged file is an error naming it and is left as it is', async (t) => {
  const cases: Array<[string, RegExp]> = [
    ['{"format": "homeagent-mqtt-broker-cred', /is not valid JSON/],
    ['{"password": "x"}', /is not a HomeAgent MQTT broker credentials file/],
    [
      JSON.stringify({ format: 'homeagent-mqtt-broker-credentials', homeagent: { username: 'homeagent', password: 'short' } }),
      /no usable password for the homeagent login/,
    ],
    [
      JSON.stringify({
        format: 'homeagent-mqtt-broker-credentials',
        homeagent: { username: 'same', password: 'a'.repeat(32) },
        devices: { username: 'same', password: 'b'.repeat(32) },
      }),
      /the same user name/,
    ],
  ];
  for (const [text, message] of cases) {
    const dir = t.testdir();
    const file = join(dir, BROKER_CREDENTIALS_FILE);
    writeFileSync(file, text, { mode: 0o600 });
    const error = await new BrokerCredentialStore({ dir }).load().catch((e: unknown) => e);
    t.ok(isHomeAgentError(error, 'HA_ERR_MQTT_BROKER'), String(message));
    t.match((error as Error).message, message);
    t.match((error as Error).message, new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}.*delete it to make new broker logins`));
    t.equal(readFileSync(file, 'utf8'), text, 'untouched');
  }
});

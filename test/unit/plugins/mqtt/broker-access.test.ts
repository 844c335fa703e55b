// The embedded broker's rules without sockets: which CONNECT proves which login, the client id and
// will bound to HomeAgent's login, and which topics are HomeAgent's. (embedded-broker.test.ts
// checks the same rules through real clients.)
import t from 'tap';
import { BrokerAccess, type BrokerIdentity, CONNACK, type ConnectOffer, ownTopics } from '../../../../plugins/mqtt/broker-access.js';

const OWN = 'homeagent-hall';
const rules = (allowAnonymous = false) =>
  new BrokerAccess({
    logins: [
      { username: 'homeagent', password: 'p-own', role: 'homeagent' },
      { username: 'devices', password: 'p-dev', role: 'device' },
      { username: 'z2m', password: 'p-z2m', role: 'device' },
    ],
    allowAnonymous,
    ownClientId: OWN,
    ...ownTopics('homeagent/hall/', 'homeassistant/', 'hall'),
  });

const offer = (o: Partial<ConnectOffer> & { pass?: string }): ConnectOffer => ({
  clientId: o.clientId ?? 'lamp',
  username: o.username,
  password: o.pass === undefined ? undefined : Buffer.from(o.pass),
  willTopic: o.willTopic,
});

const DEVICE: BrokerIdentity = { role: 'device', username: 'devices', anonymous: false };
const HOMEAGENT: BrokerIdentity = { role: 'homeagent', username: 'homeagent', anonymous: false };

t.test('logins', async (t) => {
  const access = rules();
  t.match(access.login(offer({ username: 'devices', pass: 'p-dev' })), { ok: true, identity: DEVICE });
  t.match(access.login(offer({ username: 'z2m', pass: 'p-z2m' })), { ok: true, identity: { role: 'device', username: 'z2m' } });
  t.match(access.login(offer({ username: 'homeagent', pass: 'p-own', clientId: OWN })), { ok: true, identity: HOMEAGENT });
  t.match(access.login(offer({ username: 'devices', pass: 'p-z2m' })), { ok: false, returnCode: CONNACK.BAD_USERNAME_OR_PASSWORD });
  t.match(access.login(offer({ username: 'devices' })), { ok: false, returnCode: CONNACK.BAD_USERNAME_OR_PASSWORD });
  t.match(access.login(offer({})), { ok: false, returnCode: CONNACK.NOT_AUTHORIZED, reason: /no login/ });
  t.match(access.login(offer({ username: '', pass: 'p-dev' })), { ok: false, returnCode: CONNACK.BAD_USERNAME_OR_PASSWORD });

  const open = rules(true);
  t.match(open.login(offer({})), { ok: true, identity: { role: 'device', username: '', anonymous: true } });
  t.match(open.login(offer({ username: 'devices', pass: 'nope' })), { ok: false }, 'a wrong login is not let in as anonymous');
});

t.test("HomeAgent's login, client id and will go together", async (t) => {
  const access = rules(true);
  t.match(access.login(offer({ username: 'homeagent', pass: 'p-own', clientId: 'other' })), {
    ok: false,
    returnCode: CONNACK.NOT_AUTHORIZED,
    reason: /only for its own client id homeagent-hall/,
  });
  t.match(access.login(offer({ username: 'devices', pass: 'p-dev', clientId: OWN })), { ok: false, reason: /is HomeAgent's own/ });
  t.match(access.login(offer({ clientId: OWN })), { ok: false }, 'nor anonymously');
  t.match(access.login(offer({ username: 'devices', pass: 'p-dev', willTopic: 'homeagent/hall/status' })), {
    ok: false,
    returnCode: CONNACK.NOT_AUTHORIZED,
    reason: /last will is on homeagent\/hall\/status/,
  });
  t.match(access.login(offer({ username: 'devices', pass: 'p-dev', willTopic: 'lamps/lamp/status' })), { ok: true });
  t.match(access.login(offer({ username: 'homeagent', pass: 'p-own', clientId: OWN, willTopic: 'homeagent/hall/status' })), { ok: true });
});

t.test("HomeAgent's topics", async (t) => {
  const access = rules();
  const reserved = [
    'homeagent/hall',
    'homeagent/hall/status',
    'homeagent/hall/switch.a/state',
    'homeagent/hall/switch.a/attributes',
    'homeagent/hall/switch.a/availability',
    'homeagent/hall/agent/last_reply',
    'homeagent/hall/agent/some_future_topic',
    'homeagent/hall/switch.a/set/deeper',
    'homeassistant/switch/hall/switch_a/config',
    'homeassistant/notify/hall/agent/config',
  ];
  const open = [
    'homeagent/hall/switch.a/set',
    'homeagent/hall/agent/notify',
    'homeagent/hallway/status',
    'homeagent/kitchen/status',
    'homeassistant/status',
    'homeassistant/sensor/0x00158d/temperature/config',
    'homeassistant/switch/hall_lamp/config',
    'zigbee2mqtt/lamp/set',
    'homeagent/hall_extra',
  ];
  for (const topic of reserved) {
    t.ok(access.isReserved(topic), `${topic}: HomeAgent's`);
    t.notOk(access.mayPublish(DEVICE, 'lamp', topic), `${topic}: not for a device`);
    t.ok(access.mayPublish(HOMEAGENT, OWN, topic), `${topic}: HomeAgent may`);
  }
  for (const topic of open) t.ok(access.mayPublish(DEVICE, 'lamp', topic), `${topic}: open to devices`);
  // A will aedes publishes after a restart, without its client: the client id decides.
  t.ok(access.mayPublish(undefined, OWN, 'homeagent/hall/status'));
  t.notOk(access.mayPublish(undefined, 'lamp', 'homeagent/hall/status'));
  t.ok(access.mayPublish(undefined, 'lamp', 'lamps/lamp/status'));

  t.notOk(access.maySubscribe(DEVICE, '$SYS/#'));
  t.ok(access.maySubscribe(DEVICE, '#'));
  t.ok(access.maySubscribe(HOMEAGENT, '$SYS/#'));
});

t.test('a new password replaces the old one at once', async (t) => {
  const access = rules();
  t.equal(access.setPassword('devices', 'p-new'), true);
  t.match(access.login(offer({ username: 'devices', pass: 'p-dev' })), { ok: false });
  t.match(access.login(offer({ username: 'devices', pass: 'p-new' })), { ok: true, identity: DEVICE });
  t.match(access.login(offer({ username: 'z2m', pass: 'p-z2m' })), { ok: true }, 'other logins are kept');
  t.equal(access.setPassword('nobody', 'x'), false);
});

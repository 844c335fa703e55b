// MqttConnection over TLS against mosquitto with certificates made by openssl at test time: a
// trusted CA connects, a wrong CA fails with a status that says what to fix, a listener that
// requires a client certificate accepts ours and refuses a client without one; unreadable TLS
// files fail the start naming the setting.
import { join } from 'node:path';
import t from 'tap';
import { MqttConnection } from '../../../../plugins/mqtt/mqtt-connection.js';
import { emptyCounters } from '../../../../plugins/mqtt/types.js';
import { Mosquitto, mosquittoMissing, opensslMissing } from '../../../helpers/mosquitto.js';
import { expectErrorAsync, silentLogs } from '../../fixtures/support.js';
import { cleanups, eventually, Inbox, startConnection, testSettings } from './mqtt-test-kit.js';

const skip = mosquittoMissing() ?? opensslMissing() ?? false;

t.test('TLS with mosquitto', { skip }, async (t) => {
  const atEnd = cleanups(t);
  const broker = await Mosquitto.start({ dir: join(t.testdir(), 'broker'), tls: true });
  atEnd(() => broker.stop());
  const tls = broker.tls;
  const tlsUrl = broker.tlsUrl;
  const mtlsUrl = broker.mtlsUrl;
  if (tls === undefined || tlsUrl === undefined || mtlsUrl === undefined) throw new Error('no TLS listeners');

  t.test('connects with the CA in ca_file and carries messages', async (t) => {
    const at = cleanups(t);
    const link = await startConnection(at, testSettings(tlsUrl, { ca_file: tls.ca }), { outboxDir: t.testdir() });
    const inbox = new Inbox();
    link.connection.subscribe('secure/#', 1, inbox.handler);
    await link.nextConnect();
    await link.connection.publish('secure/a', 'over tls', { qos: 1 });
    await inbox.count(1);
    t.same(inbox.texts(), ['over tls']);
    t.match(link.connection.status().url, /^mqtts:\/\/127\.0\.0\.1:/);
  });

  t.test('a CA that did not sign the broker certificate fails with a clear status', async (t) => {
    const at = cleanups(t);
    const link = await startConnection(at, testSettings(tlsUrl, { ca_file: tls.otherCa }), { outboxDir: t.testdir() });
    await eventually(() => link.connection.status().failed_attempts >= 2, 'two failed attempts');
    const status = link.connection.status();
    t.equal(status.connected, false);
    t.match(status.last_error, /TLS: the broker's certificate is not trusted .*plugin\.mqtt\.ca_file/);
  });

  t.test('no CA at all: the system trust store does not know the test CA either', async (t) => {
    const at = cleanups(t);
    const link = await startConnection(at, testSettings(tlsUrl), { outboxDir: t.testdir() });
    await eventually(() => link.connection.status().last_error !== null, 'a failed attempt');
    t.match(link.connection.status().last_error, /TLS:/);
  });

  t.test('reject_unauthorized false connects to a broker whose certificate does not verify', async (t) => {
    const at = cleanups(t);
    const link = await startConnection(at, testSettings(tlsUrl, { ca_file: tls.otherCa, reject_unauthorized: false }), {
      outboxDir: t.testdir(),
    });
    await link.nextConnect();
    t.ok(link.connection.connected);
  });

  t.test('a listener requiring a client certificate accepts ours and refuses a client without one', async (t) => {
    const at = cleanups(t);
    const withCert = await startConnection(
      at,
      testSettings(mtlsUrl, { ca_file: tls.ca, cert_file: tls.clientCert, key_file: tls.clientKey }),
      { outboxDir: t.testdir() },
    );
    await withCert.nextConnect();
    t.ok(withCert.connection.connected, 'client certificate accepted');
    await eventually(() => /homeagent-client/.test(broker.log()), 'the broker logged the certificate identity');

    const without = await startConnection(at, testSettings(mtlsUrl, { ca_file: tls.ca }), { outboxDir: t.testdir() });
    await eventually(() => without.connection.status().failed_attempts >= 2, 'two refused attempts');
    t.equal(without.connection.connected, false);
    t.match(without.connection.status().last_error, /client certificate|plugin\.mqtt\.cert_file/);
  });
});

t.test('unreadable or incomplete TLS settings fail the start naming the setting', async (t) => {
  const dir = t.testdir();
  const attempt = (overrides: Parameters<typeof testSettings>[1]) => {
    const connection = new MqttConnection({
      settings: () => testSettings('mqtts://127.0.0.1:8883', overrides),
      outboxDir: join(dir, 'outbox'),
      log: silentLogs().child('mqtt'),
      counters: emptyCounters(),
    });
    return expectErrorAsync(t, () => connection.start(), 'HA_ERR_MQTT_UNAVAILABLE');
  };
  t.match((await attempt({ ca_file: join(dir, 'missing.crt') })).message, /plugin\.mqtt\.ca_file .*missing\.crt cannot be read/);
  t.match((await attempt({ cert_file: join(dir, 'client.crt') })).message, /cert_file and plugin\.mqtt\.key_file go together/);
  t.match((await attempt({ url: 'http://broker:1883' })).message, /must start with mqtt:\/\/, mqtts:\/\/, ws:\/\/ or wss:\/\//);
  t.match((await attempt({ url: 'not a url' })).message, /is not a URL/);
});

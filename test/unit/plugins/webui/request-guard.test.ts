/**
 * The Host allow-list (DNS rebinding) and the cross-site check, as functions: the names of this
 * machine from injected host name and interfaces, Host header parsing, a bounded refresh, and the
 * Sec-Fetch-Site / Origin rules.
 */
import type { NetworkInterfaceInfo } from 'node:os';
import t from 'tap';
import { checkSameOrigin, HostAllowList, hostName } from '../../../../plugins/webui/request-guard.js';
import { expectError } from '../../fixtures/support.js';

function iface(address: string, family: 'IPv4' | 'IPv6'): NetworkInterfaceInfo {
  const base = { address, netmask: '', mac: '00:00:00:00:00:00', internal: false, cidr: null };
  return family === 'IPv4' ? { ...base, family } : { ...base, family, scopeid: 0 };
}

function allowList(options: { listenHost?: string; allowed?: string[]; clock?: { now: number }; addresses?: string[][] } = {}) {
  const clock = options.clock ?? { now: 0 };
  const addresses = options.addresses ?? [['192.168.1.20', 'fe80::1%eth0']];
  let reads = 0;
  const list = new HostAllowList({
    listenHost: options.listenHost ?? '0.0.0.0',
    allowedHosts: () => options.allowed ?? [],
    now: () => clock.now,
    hostname: () => 'RaspberryPi',
    networkInterfaces: () => {
      const current = addresses[Math.min(reads, addresses.length - 1)] ?? [];
      reads++;
      return { eth0: current.map((a) => iface(a, a.includes(':') ? 'IPv6' : 'IPv4')) };
    },
  });
  return { list, reads: () => reads, clock };
}

t.test('hostName: lower case, no port, IPv6 without brackets; junk is no name', (t) => {
  t.equal(hostName('Example.COM:8080'), 'example.com');
  t.equal(hostName('localhost.'), 'localhost');
  t.equal(hostName('[::1]:8080'), '::1');
  t.equal(hostName('[::1]'), '::1');
  t.equal(hostName('127.0.0.1'), '127.0.0.1');
  for (const junk of ['', ':80', '[::1', '[::1]x', 'a:b', 'a:80:90', '[::1]:http'])
    t.equal(hostName(junk), undefined, JSON.stringify(junk));
  t.end();
});

t.test("the machine's names and addresses, localhost, the listen address and allowed names pass", (t) => {
  const { list } = allowList({ listenHost: '10.0.0.5', allowed: ['Home.Example'] });
  for (const host of [
    'localhost',
    'a.b.localhost:1',
    '127.0.0.1',
    '[::1]:80',
    'raspberrypi',
    'raspberrypi.local:8080',
    '192.168.1.20',
    '[fe80::1%25eth0]:8080',
    '10.0.0.5',
    'home.example',
  ]) {
    t.doesNotThrow(() => list.check(host), host);
  }
  for (const host of ['evil.example', 'raspberrypi.evil', '192.168.1.21', '127.0.0.2', 'localhost.evil', '0.0.0.0', '[::]']) {
    const error = expectError(t, () => list.check(host), 'HA_ERR_HTTP_HOST');
    t.match(error.message, /allowed_hosts/, host);
  }
  expectError(t, () => list.check(undefined), 'HA_ERR_HTTP_HOST');
  expectError(t, () => list.check('  '), 'HA_ERR_HTTP_HOST');
  t.end();
});

t.test('a wildcard listen address is not a name', (t) => {
  const { list } = allowList({ listenHost: '::' });
  expectError(t, () => list.check('[::]'), 'HA_ERR_HTTP_HOST');
  t.end();
});

t.test('a new address is found, but a flood of bad Hosts reads the interfaces at most every 5 s', (t) => {
  const clock = { now: 0 };
  const { list, reads } = allowList({ clock, addresses: [['192.168.1.20'], ['192.168.1.30']] });
  t.doesNotThrow(() => list.check('192.168.1.20'));
  t.equal(reads(), 1);
  for (let i = 0; i < 100; i++) t.throws(() => list.check(`evil${i}.example`));
  t.equal(reads(), 1, 'no re-read within 5 s');
  clock.now = 5000;
  t.doesNotThrow(() => list.check('192.168.1.30'), 'the new DHCP address, after 5 s');
  t.equal(reads(), 2);
  t.end();
});

t.test('cross-site: Sec-Fetch-Site decides when present, else Origin, else only cookie requests are refused', (t) => {
  const host = '192.168.1.20:8080';
  for (const site of ['same-origin', 'none']) t.doesNotThrow(() => checkSameOrigin({ host, 'sec-fetch-site': site }, true), site);
  for (const site of ['same-site', 'cross-site', 'junk']) {
    expectError(t, () => checkSameOrigin({ host, 'sec-fetch-site': site, origin: `http://${host}` }, true), 'HA_ERR_HTTP_CROSS_SITE');
  }
  t.doesNotThrow(() => checkSameOrigin({ host, origin: `http://${host}` }, true));
  t.doesNotThrow(() => checkSameOrigin({ host, origin: `https://${host}` }, true));
  t.doesNotThrow(() => checkSameOrigin({ host: 'LOCALHOST:8080', origin: 'http://localhost:8080' }, true), 'case does not matter');
  for (const origin of [
    'http://192.168.1.20',
    'http://192.168.1.20:8081',
    'null',
    'http://evil.example',
    `ftp://${host}`,
    `http://${host}/`,
  ]) {
    expectError(t, () => checkSameOrigin({ host, origin }, false), 'HA_ERR_HTTP_CROSS_SITE');
  }
  expectError(t, () => checkSameOrigin({ host }, true), 'HA_ERR_HTTP_CROSS_SITE');
  t.doesNotThrow(() => checkSameOrigin({ host }, false), 'a program logging in without browser headers');
  t.end();
});

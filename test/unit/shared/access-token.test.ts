import t from 'tap';
import { offeredTokens, randomToken, TokenCheck } from '../../../src/shared/access-token.js';
import { addressScope, checkListenHost, urlHost } from '../../../src/shared/listen-address.js';
import { expectError } from '../fixtures/support.js';

t.test('random tokens: 32 base64url characters, different each time', async (t) => {
  const tokens = new Set(Array.from({ length: 100 }, () => randomToken()));
  t.equal(tokens.size, 100);
  for (const token of tokens) t.match(token, /^[A-Za-z0-9_-]{32}$/);
});

t.test('a random token never starts with a dash (a command line would read it as an option)', async (t) => {
  // One base64url character in 64 is '-': 3,000 tokens without the rule hold about 47 such starts.
  const dashed = Array.from({ length: 3000 }, () => randomToken()).filter((token) => token.startsWith('-'));
  t.same(dashed, []);
});

t.test('offered tokens come from X-API-Key, Authorization: Bearer and ?token=', async (t) => {
  const none = new URLSearchParams();
  t.same(offeredTokens({}, none), []);
  t.same(offeredTokens({ 'x-api-key': ' abc ' }, none), ['abc']);
  t.same(offeredTokens({ authorization: 'Bearer abc' }, none), ['abc']);
  t.same(offeredTokens({ authorization: 'BEARER\tabc ' }, none), ['abc']);
  t.same(offeredTokens({ authorization: 'Basic abc' }, none), [], 'other schemes are not tokens');
  t.same(offeredTokens({ authorization: 'Bearer a b' }, none), [], 'a bearer value is one word');
  t.same(offeredTokens({}, new URLSearchParams('token=abc&token=def')), ['abc', 'def']);
  t.same(offeredTokens({ 'x-api-key': '' }, new URLSearchParams('token=')), [], 'empty values offer nothing');
  t.same(offeredTokens({ 'x-api-key': 'a', authorization: 'Bearer b' }, new URLSearchParams('token=c')), ['a', 'b', 'c']);
});

t.test('the check accepts exactly the token, whatever the length of what is offered', async (t) => {
  const check = new TokenCheck('s3cret-token');
  t.ok(check.matches('s3cret-token'));
  for (const wrong of ['', 's3cret-toke', 's3cret-token ', 'S3cret-token', 's3cret-token-longer', 'x'.repeat(10_000)]) {
    t.notOk(check.matches(wrong), JSON.stringify(wrong.slice(0, 20)));
  }
  t.ok(check.anyMatches(['wrong', 's3cret-token']));
  t.notOk(check.anyMatches([]));
  t.notOk(check.anyMatches(['wrong', 'also wrong']));
});

t.test('listen addresses: loopback or network; an empty host is refused', async (t) => {
  for (const host of [
    '127.0.0.1',
    '127.1.2.3',
    'localhost',
    'LOCALHOST',
    'kb.localhost',
    '::1',
    '[::1]',
    '0:0:0:0:0:0:0:1',
    '::ffff:127.0.0.1',
  ]) {
    t.equal(addressScope(host), 'loopback', host);
  }
  for (const host of ['0.0.0.0', '::', '192.168.1.20', '10.0.0.1', 'fe80::1', '::ffff:192.168.1.2', 'homeagent.local', '128.0.0.1']) {
    t.equal(addressScope(host), 'network', host);
  }
  t.same(checkListenHost(' 127.0.0.1 ', 'plugin.kbtree.host'), { host: '127.0.0.1', scope: 'loopback' });
  t.same(checkListenHost('[::1]', 'plugin.kbtree.host'), { host: '::1', scope: 'loopback' });
  t.same(checkListenHost('0.0.0.0', 'plugin.kbtree.host'), { host: '0.0.0.0', scope: 'network' });
  expectError(t, () => checkListenHost('', 'plugin.kbtree.host'), 'HA_ERR_PLUGIN_START');
  expectError(t, () => checkListenHost('  ', 'plugin.kbtree.host'), 'HA_ERR_PLUGIN_START');
  t.equal(urlHost('127.0.0.1', 9892), '127.0.0.1:9892');
  t.equal(urlHost('::1', 9892), '[::1]:9892');
});

import t from 'tap';
import { containsSymbol, extractSymbols } from '../../../src/memory/symbols.js';

t.test('extractSymbols finds numbers, versions and identifiers, once each, in order', async (t) => {
  t.same(extractSymbols('端口 13010/13011 而非 12011'), ['13010', '13011', '12011']);
  t.same(extractSymbols('upgrade zigbee2mqtt to v1.35.2 on node_red and HomeAssistant'), [
    'zigbee2mqtt',
    'v1.35.2',
    'node_red',
    'HomeAssistant',
  ]);
  t.same(extractSymbols('IP 192.168.1.10, again 192.168.1.10, MQTTBroker'), ['192.168.1.10', 'MQTTBroker']);
  t.same(extractSymbols('我今年42岁'), ['42']);
  t.same(extractSymbols('what is the public address'), [], 'plain words are not symbols');
});

t.test('containsSymbol matches whole symbols only', async (t) => {
  t.ok(containsSymbol('端口 13010/13011', '13010'));
  t.notOk(containsSymbol('order 130105', '13010'));
  t.notOk(containsSymbol('release 1.2.3', '1.2'));
  t.notOk(containsSymbol('release 1.2.3', '2.3'));
  t.ok(containsSymbol('release 1.2.3.', '1.2.3'), 'a full stop after a version ends it');
  t.notOk(containsSymbol('redisson client', 'redis'));
  t.ok(containsSymbol('Uses REDIS.', 'redis'), 'case-insensitive');
  t.ok(containsSymbol('我今年42岁', '42'));
  t.ok(containsSymbol('a (b+c)*2 formula', '(b+c)*2'), 'regex characters are literal');
});

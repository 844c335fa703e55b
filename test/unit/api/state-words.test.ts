/**
 * Entity states in words (src/api/state-words.ts): by domain and device class in English and
 * Chinese, as the CLI's tables, the page's cards and the local intents' replies say them (a door
 * contact's `on` is Open / 开着, not On). The replies through the intent stage on real parts.
 */
import t from 'tap';
import { showStateIn, stateLabel, stateMatches, statePhrase } from '../../../src/api/state-words.js';
import { intentRig } from '../intent/intent-rig.js';

t.test('labels and phrases per domain and device class, both languages', async (t) => {
  const cases: Array<[string, string | null, string | null, string, string, string?]> = [
    // domain, device_class, state, English label, Chinese label, Chinese phrase when it differs
    ['binary_sensor', 'door', 'on', 'Open', '开着'],
    ['binary_sensor', 'window', 'off', 'Closed', '关着'],
    ['binary_sensor', 'garage_door', 'on', 'Open', '开着'],
    ['binary_sensor', 'opening', 'off', 'Closed', '关着'],
    ['binary_sensor', 'motion', 'on', 'Detected', '检测到移动'],
    ['binary_sensor', 'occupancy', 'off', 'Clear', '无人'],
    ['binary_sensor', 'presence', 'on', 'Detected', '有人'],
    ['binary_sensor', 'moisture', 'on', 'Wet', '潮湿'],
    ['binary_sensor', 'smoke', 'off', 'Clear', '无烟雾'],
    ['binary_sensor', 'gas', 'on', 'Detected', '检测到燃气'],
    ['binary_sensor', 'carbon_monoxide', 'off', 'Clear', '无一氧化碳'],
    ['binary_sensor', 'battery', 'on', 'Low', '电量低'],
    ['binary_sensor', 'connectivity', 'off', 'Disconnected', '已断开'],
    ['binary_sensor', 'lock', 'on', 'Unlocked', '未锁', '没锁'],
    ['binary_sensor', null, 'on', 'On', '开', '开着'],
    ['lock', null, 'locked', 'Locked', '已锁', '锁着'],
    ['lock', null, 'jammed', 'Jammed', '卡住了'],
    ['lock', null, 'unlocking', 'Unlocking', '正在解锁'],
    ['cover', 'garage', 'closing', 'Closing', '正在关闭'],
    ['cover', null, 'open', 'Open', '开着'],
    ['switch', 'outlet', 'off', 'Off', '关', '关着'],
    ['light', null, 'on', 'On', '开', '开着'],
    ['fan', null, 'off', 'Off', '关', '关着'],
    ['vacuum', null, 'docked', 'Docked', '已回座', '在充电座上'],
    ['media_player', null, 'playing', 'Playing', '播放中', '在播放'],
    ['climate', null, 'heat_cool', 'Heat/Cool', '制热/制冷'],
    ['person', null, 'not_home', 'Away', '不在家'],
    ['sensor', 'temperature', 'unavailable', 'Unavailable', '不可用', '连不上'],
    ['light', null, null, 'Unknown', '未知', '状态未知'],
  ];
  for (const [domain, device_class, state, en, zh, zhPhrase] of cases) {
    const kind = { domain, device_class };
    const what = `${domain}/${device_class ?? '-'} ${state}`;
    t.equal(stateLabel('en', kind, state), en, `${what} en`);
    t.equal(stateLabel('zh', kind, state), zh, `${what} zh`);
    t.equal(statePhrase('en', kind, state), en.toLowerCase(), `${what} en phrase`);
    t.equal(statePhrase('zh', kind, state), zhPhrase ?? zh, `${what} zh phrase`);
  }
  t.equal(stateLabel('en', { domain: 'sensor' }, 'single'), undefined, "a sensor's own text has no words");
  t.equal(stateLabel('en', { domain: 'climate' }, 'eco'), undefined, 'a state the domain does not know is shown as it is');
  t.equal(stateLabel('zh', { domain: 'sensor' }, 21.5), undefined, 'numbers are not words');
  t.equal(statePhrase('zh', {}, 'open'), '开着', 'without a kind: the plain meaning');
  t.equal(showStateIn('en', { domain: 'sensor' }, 21.5, '°C'), '21.5 °C');
  t.equal(showStateIn('zh', { domain: 'sensor' }, 'single', null), 'single');
  t.equal(showStateIn('zh', { domain: 'binary_sensor', device_class: 'door' }, 'on'), '开着');
  t.ok(stateMatches({ domain: 'binary_sensor', device_class: 'door' }, 'on', 'open'), 'a door contact on is open');
  t.notOk(stateMatches({ domain: 'binary_sensor', device_class: 'door' }, 'off', 'open'));
  t.ok(stateMatches({ domain: 'binary_sensor', device_class: 'lock' }, 'off', 'locked'));
  t.notOk(stateMatches({ domain: 'switch' }, 'on', 'open'), 'only binary sensors read through their class');
});

t.test('replies say a door contact is open or closed, and answer the question about it right', async (t) => {
  const rig = await intentRig(t);
  const door = rig.device({
    domain: 'binary_sensor',
    object_id: 'back_door',
    name: 'Back door',
    aliases: ['后门'],
    device_class: 'door',
    initial_state: 'on',
  });
  t.match((await rig.say('is the back door open')).response, /^Yes.*Back door is open\.$/);
  t.match((await rig.say('后门开着吗')).response, /后门开着/);
  door.handle.update('off');
  const closed = (await rig.say('is the back door open')).response;
  t.match(closed, /^No.*closed/, 'not "No, Back door is off"');
  t.notMatch(closed, /\boff\b/);
});

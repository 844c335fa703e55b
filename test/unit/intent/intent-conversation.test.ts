/**
 * Issue 26 through the on_input stage on real parts: a compound command switches each device in
 * order; a follow-up ("turn it off", "把它关掉") acts on the conversation's last device and not
 * after the quiet time; an ambiguous request asks and switches nothing; a brightness for a plain
 * relay is refused with what the light can do, in both languages; statements do nothing.
 */
import t from 'tap';
import { intentRig } from './intent-rig.js';

async function home(t: Parameters<typeof intentRig>[0], settings = {}) {
  const rig = await intentRig(t, settings);
  const relay = rig.device({
    domain: 'light',
    object_id: 'kitchen_light',
    name: 'Kitchen Light',
    aliases: ['厨房灯'],
    area: 'Kitchen',
    initial_state: 'on',
    attributes: { supported_color_modes: ['onoff'] },
  });
  const lamp = rig.device({
    domain: 'light',
    object_id: 'desk_lamp',
    name: 'Desk Lamp',
    aliases: ['台灯'],
    area: 'Living Room',
    initial_state: 'off',
    attributes: { supported_color_modes: ['brightness'] },
  });
  const fan = rig.device({
    domain: 'fan',
    object_id: 'ceiling_fan',
    name: 'Ceiling Fan',
    aliases: ['吊扇'],
    area: 'Living Room',
    initial_state: 'on',
  });
  return { rig, relay, lamp, fan };
}

t.test('a compound command carries out every part in order', async (t) => {
  const { rig, relay, fan } = await home(t);
  const en = await rig.say('turn off the kitchen light and the ceiling fan');
  t.same(relay.calls, [{ service: 'turn_off', data: {} }]);
  t.same(fan.calls, [{ service: 'turn_off', data: {} }]);
  t.match(en.response, /Turned off Kitchen Light\. Turned off Ceiling Fan\./);
  const zh = await rig.say('打开厨房灯然后打开吊扇');
  t.equal(relay.calls.at(-1)?.service, 'turn_on');
  t.equal(fan.calls.at(-1)?.service, 'turn_on');
  t.equal(zh.response, '已打开厨房灯。已打开吊扇。', 'the devices are named as the person said them');
});

t.test('a follow-up acts on the conversation’s last device, until the quiet time', async (t) => {
  const { rig, lamp } = await home(t, { followup_quiet_s: 60 });
  await rig.say('turn on the desk lamp');
  t.equal(lamp.calls.at(-1)?.service, 'turn_on');
  const it = await rig.say('turn it off');
  t.equal(lamp.calls.at(-1)?.service, 'turn_off', '"it" is the desk lamp');
  t.equal(it.response, 'Turned off Desk Lamp.');
  await rig.say('把台灯打开');
  await rig.say('把它关掉');
  t.equal(lamp.calls.length, 4);
  t.equal(lamp.calls.at(-1)?.service, 'turn_off');
  // Another conversation (another channel) has no last device.
  const other = await rig.say('turn it on', {}, 'telegram');
  t.equal(lamp.calls.length, 4, 'nothing switched from another conversation');
  t.match(other.response, /didn't understand/);
  await rig.clock.advance(61_000);
  await rig.say('turn it on');
  t.equal(lamp.calls.length, 4, 'forgotten after the quiet time');
});

t.test('an ambiguous light is asked about, a relay is not dimmed, statements do nothing', async (t) => {
  const { rig, relay, lamp } = await home(t);
  const ask = await rig.say('turn on the light');
  t.match(ask.response, /^Which one do you mean: (Kitchen Light and Desk Lamp|Desk Lamp and Kitchen Light)\?$/);
  const askZh = await rig.say('开灯');
  t.match(askZh.response, /^你说的是哪一个：(厨房灯和台灯|台灯和厨房灯)？$/, 'the question back names the lights in Chinese');
  const dim = await rig.say('set the kitchen light to 50%');
  t.equal(dim.response, 'Kitchen Light can only be switched on and off, not dimmed.');
  const dimZh = await rig.say('把厨房的灯调到50%');
  t.equal(dimZh.response, '厨房灯只能开关，不能调亮度。', 'a Chinese reply names the device by its Chinese alias');
  const talk = await rig.say('I turned off the kitchen light yesterday');
  t.match(talk.response, /didn't understand/, 'offline: no action, the not-understood answer');
  await rig.say('我昨天把厨房的灯关了');
  t.same(relay.calls, [], 'the relay was never called');
  t.same(lamp.calls, [], 'nor the lamp');
  const set = await rig.say('set the desk lamp to 40%');
  t.same(lamp.calls, [{ service: 'turn_on', data: { brightness: 102 } }], 'a dimmable lamp is dimmed (40% of 255)');
  t.match(set.response, /40%/);
});

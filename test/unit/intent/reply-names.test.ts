/**
 * Replies use the names the person uses (issue 29): a Chinese reply names a device by its Chinese
 * alias (not "已打开ceiling和Kitchen light。"), an English reply by its English name or alias, and
 * a device or place the person named is called what they called it. Through the on_input stage on
 * real parts (intent-rig.ts), plus the naming rule on its own.
 */
import t from 'tap';
import { heard, sayName } from '../../../src/intent/entity-names.js';
import { intentRig } from './intent-rig.js';

async function home(t: Parameters<typeof intentRig>[0]) {
  const rig = await intentRig(t);
  // Mixed-language names: what the household had when the reply mixed languages.
  const ceiling = rig.device({
    domain: 'light',
    object_id: 'ceiling',
    name: 'ceiling',
    aliases: ['吸顶灯', 'main light'],
    area: 'Living Room',
    initial_state: 'off',
  });
  const kitchen = rig.device({
    domain: 'light',
    object_id: 'kitchen_light',
    name: 'Kitchen light',
    aliases: ['厨房灯'],
    area: 'Living Room',
    initial_state: 'off',
  });
  const desk = rig.device({
    domain: 'light',
    object_id: 'desk',
    name: '台灯',
    aliases: ['desk lamp'],
    area: 'Attic',
    initial_state: 'off',
  });
  return { rig, ceiling, kitchen, desk };
}

t.test('a Chinese reply names devices by their Chinese aliases', async (t) => {
  const { rig, ceiling, kitchen } = await home(t);
  const both = await rig.say('打开客厅的灯');
  t.same([ceiling.calls.length, kitchen.calls.length], [1, 1], 'both lights of the living room were switched');
  t.equal(both.response, '已打开吸顶灯和厨房灯。');
  t.equal((await rig.say('关掉客厅的灯')).response, '已关闭吸顶灯和厨房灯。');
  t.equal((await rig.say('吸顶灯开着吗')).response, '没有，吸顶灯关着。', 'a question about it too');
});

t.test('the words the person used are echoed, in either language', async (t) => {
  const { rig } = await home(t);
  t.equal((await rig.say('打开ceiling')).response, '已打开ceiling。', 'an English name said in a Chinese sentence stays as said');
  t.equal((await rig.say('turn on the main light')).response, 'Turned on main light.', 'the alias said, not the name');
  t.equal((await rig.say('turn off the ceiling')).response, 'Turned off ceiling.');
  t.equal((await rig.say('turn on the Kitchen Light')).response, 'Turned on Kitchen light.', 'as registered, so its capitals stay');
});

t.test('an English reply prefers an English name or alias over a Chinese one', async (t) => {
  const { rig, desk } = await home(t);
  t.equal((await rig.say('turn on the lights in the living room')).response, 'Turned on ceiling and Kitchen light.');
  const en = await rig.say('turn on the lights in the attic');
  t.equal(desk.calls.length, 1);
  t.equal(en.response, 'Turned on desk lamp.');
  t.equal((await rig.say('打开台灯')).response, '已打开台灯。', 'and a Chinese one its Chinese name');
});

t.test('sayName: the longest phrase said, whole words in English, else the name in the language', async (t) => {
  const light = { name: 'Ceiling Light', aliases: ['light', '吸顶灯'] };
  t.equal(sayName(light, 'en', heard('turn on the ceiling light')), 'Ceiling Light', 'the longer phrase wins');
  t.equal(sayName(light, 'en', heard('turn on the light please')), 'light');
  t.equal(sayName(light, 'en', heard('turn on the lights')), 'Ceiling Light', '"lights" is not the word "light"');
  t.equal(sayName(light, 'zh', heard('把灯打开')), '吸顶灯', 'nothing said of it: its Chinese alias');
  t.equal(sayName(light, 'zh', heard('打开light')), 'light', 'Latin next to Chinese is a whole word');
  t.equal(sayName({ name: 'Fan', aliases: [] }, 'zh'), 'Fan', 'no Chinese name: the name');
  t.equal(sayName({ name: '风扇', aliases: ['fan'] }, 'en'), 'fan');
  t.equal(heard('  !? '), undefined, 'words of nothing hear nothing');
});

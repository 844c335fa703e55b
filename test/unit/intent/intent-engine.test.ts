/**
 * The local intent engine end to end in the on_input stage: a sentence in, the device called
 * through the real tools, the answer in the sentence's language; unsure and unknown sentences go
 * to the model (with the guess attached) or, without one, get the engine's own answer.
 */
import t from 'tap';
import { INTENT_EXTRA, inputLanguage } from '../../../src/intent/intent-stage.js';
import { intentRig, NOW } from './intent-rig.js';

async function home(t: Parameters<typeof intentRig>[0]) {
  const rig = await intentRig(t);
  const kitchen = rig.device({
    domain: 'light',
    object_id: 'kitchen_light',
    name: 'Kitchen Light',
    aliases: ['厨房灯'],
    area: 'Kitchen',
    initial_state: 'off',
  });
  const ceiling = rig.device({
    domain: 'light',
    object_id: 'living_ceiling',
    name: 'Ceiling Light',
    area: 'Living Room',
    initial_state: 'on',
  });
  const lamp = rig.device({ domain: 'light', object_id: 'living_lamp', name: 'Reading Lamp', area: 'Living Room', initial_state: 'on' });
  const bedroom = rig.device({ domain: 'light', object_id: 'bedroom_light', name: '卧室灯', area: '卧室', initial_state: 'off' });
  const door = rig.device({
    domain: 'lock',
    object_id: 'front_door',
    name: 'Front Door',
    aliases: ['前门锁'],
    area: 'Hall',
    initial_state: 'locked',
  });
  const heater = rig.device(
    {
      domain: 'climate',
      object_id: 'living_thermostat',
      name: 'Thermostat',
      area: 'Living Room',
      initial_state: 'heat',
      attributes: { current_temperature: 19.5, temperature: 20 },
    },
    () => 'heat',
  );
  return { rig, kitchen, ceiling, lamp, bedroom, door, heater };
}

t.test('a device command is carried out without the model and answered in its language', async (t) => {
  const { rig, kitchen, bedroom, ceiling, lamp } = await home(t);

  const zh = await rig.say('打开厨房的灯');
  t.same(kitchen.calls, [{ service: 'turn_on', data: {} }], 'the kitchen light was switched through entity_call');
  t.equal(rig.entity('light.kitchen_light').state, 'on');
  t.equal(zh.response, '已打开厨房灯。', 'a Chinese reply names the light by its Chinese alias');
  t.equal(zh.tool_results[0]?.call.name, 'entity_call', 'the call is one of the turn’s tool results (memory sees it)');
  t.match(zh.extra[INTENT_EXTRA], { name: 'HassTurnOn', confidence: 1, handled: true });

  const dim = await rig.say('把卧室灯调到50%');
  t.same(bedroom.calls, [{ service: 'turn_on', data: { brightness: 128 } }], '50 % is brightness 128 of 255');
  t.match(dim.response, /卧室灯.*50%/);

  const en = await rig.say('turn off all the lights in the living room');
  t.same([ceiling.calls, lamp.calls], [[{ service: 'turn_off', data: {} }], [{ service: 'turn_off', data: {} }]]);
  t.equal(en.response, 'Turned off Ceiling Light and Reading Lamp.');
  t.equal(kitchen.calls.length, 1, 'the kitchen was not touched');
});

t.test('the area of the device that heard the request is the default place', async (t) => {
  const { rig, kitchen, ceiling } = await home(t);
  const ctx = await rig.say('turn on the lights', { area: 'Kitchen' });
  t.equal(kitchen.calls.length, 1);
  t.equal(ceiling.calls.length, 0, 'only the satellite’s room');
  t.equal(ctx.response, 'Turned on Kitchen Light.');
  // A wall panel configured in core.intent.source_areas (by area id).
  const panel = await rig.say('turn off the lights', {}, 'living_room_panel');
  t.equal(panel.response, 'Turned off Ceiling Light and Reading Lamp.');
  t.equal(kitchen.calls.length, 1, 'the kitchen light stayed on');
});

t.test('a critical device is held for the owner’s confirmation, never switched silently', async (t) => {
  const { rig, door } = await home(t);
  const ctx = await rig.say('unlock the front door');
  t.same(door.calls, [], 'the lock was not called');
  t.equal(rig.entity('lock.front_door').state, 'locked');
  t.equal(ctx.tool_results[0]?.call.name, 'entity_call_critical');
  t.equal(ctx.tool_results[0]?.error?.reason, 'confirmation_required');
  t.match(ctx.response, /Front Door is a critical device/);
  t.equal(rig.gate.requestedBy(ctx.task_id).length, 1, 'the request awaits /confirm');
});

t.test('questions are answered from the registry', async (t) => {
  const { rig } = await home(t);
  t.equal((await rig.say('is any light on in the living room')).response, 'Yes, 2 are on: Ceiling Light and Reading Lamp.');
  t.equal((await rig.say('is the front door locked')).response, 'Yes, Front Door is locked.');
  t.match((await rig.say('what is the temperature in the living room')).response, /Thermostat: 19\.5/);
  t.equal(
    (await rig.say('现在几点')).response,
    `现在是${new Intl.DateTimeFormat('zh-CN', { hour: '2-digit', minute: '2-digit' }).format(new Date(NOW))}。`,
  );
  t.match((await rig.say('what is the date today')).response, /^Today is .*2026\.$/);
});

t.test('set the temperature through the thermostat', async (t) => {
  const { rig, heater } = await home(t);
  const ctx = await rig.say('set the temperature in the living room to 22 degrees');
  t.same(heater.calls, [{ service: 'set_temperature', data: { temperature: 22 } }]);
  t.equal(ctx.response, 'Set Thermostat to 22°.');
});

t.test('timers go through the timer plugin', async (t) => {
  const { rig } = await home(t);
  t.equal((await rig.say('set a timer for 10 minutes')).response, 'Timer set for 10 minutes.');
  t.equal((await rig.say('设一个五分钟的计时器')).response, '已设好5分钟的计时器。');
  await rig.clock.advance(60_000);
  t.equal((await rig.say('how much time is left on my 10 minute timer')).response, 'The 10 minute timer: 9 minutes left');
  t.equal((await rig.say('pause the 10 minute timer')).response, 'Paused the 10 minute timer.');
  t.equal((await rig.say('add 5 minutes to my 10 minute timer')).response, 'The 10 minute timer now has 14 minutes left.');
  t.match((await rig.say('cancel my timer')).response, /Which timer do you mean\?/, 'two timers: it asks which');
  t.equal((await rig.say('cancel all timers')).response, 'Cancelled all 2 timers.');
  t.equal((await rig.say('how much time is left on my timer')).response, 'There are no timers running.');
});

t.test('shopping and to-do lists live in the list store', async (t) => {
  const { rig } = await home(t);
  t.equal((await rig.say('add milk to my shopping list')).response, 'Added milk to the shopping list.');
  t.equal((await rig.say('add milk to my shopping list')).response, 'milk is already on the shopping list.');
  t.same(
    rig.lists.items('shopping list').map((i) => i.text),
    ['milk'],
  );
  await rig.say('add eggs to my shopping list');
  t.equal((await rig.say("what's on my shopping list")).response, 'On the shopping list: milk and eggs.');
  t.equal((await rig.say('check off milk from my shopping list')).response, 'Checked off milk on the shopping list.');
  t.equal((await rig.say('check off eggs from my shopping list')).response, 'Checked off eggs on the shopping list.');
  t.equal((await rig.say('what is on the shopping list')).response, 'The shopping list is empty.');
  t.same(rig.lists.items('shopping list'), [], 'nothing open is left');
});

t.test('announcements go to the speakers; media without a player gets a clear answer', async (t) => {
  const { rig } = await home(t);
  t.equal((await rig.say('broadcast dinner is ready')).response, 'Announced on kitchen_speaker.');
  t.same(rig.announced, [{ channel: 'kitchen_speaker', payload: 'dinner is ready' }], 'only the channel that plays audio');
  t.match((await rig.say('pause the music')).response, /There is no media player/);
  t.match((await rig.say('what is the weather like')).response, /No weather source is set up/);
});

t.test('media players and vacuums are called with their own services', async (t) => {
  const { rig } = await home(t);
  const tv = rig.device({ domain: 'media_player', object_id: 'living_tv', name: 'TV', area: 'Living Room', initial_state: 'playing' });
  const robot = rig.device({ domain: 'vacuum', object_id: 'robot', name: 'Robot', initial_state: 'docked' });
  rig.device({
    domain: 'weather',
    object_id: 'home',
    name: 'Home Weather',
    initial_state: 'rainy',
    attributes: { temperature: 12, temperature_unit: '°C' },
  });
  t.equal((await rig.say('pause the TV')).response, 'Paused TV.');
  t.equal((await rig.say('set the TV volume to 30%')).response, 'Set the volume of TV to 30%.');
  t.same(tv.calls, [
    { service: 'media_pause', data: {} },
    { service: 'volume_set', data: { volume_level: 0.3 } },
  ]);
  t.equal((await rig.say('start the Robot')).response, 'Started Robot.');
  t.same(robot.calls, [{ service: 'start', data: {} }]);
  t.equal((await rig.say('what is the weather like')).response, 'The weather: rainy, 12°C.');
});

t.test('an unknown sentence goes to the model; without one the engine says what it can do', async (t) => {
  const { rig } = await home(t);
  rig.setOnline(true);
  const online = await rig.say('write me a poem about spring');
  t.equal(online.response, undefined, 'left to the model');
  rig.setOnline(false);
  t.match((await rig.say('write me a poem about spring')).response, /didn't understand/);
  t.match((await rig.say('给我写首诗')).response, /没听懂/);
});

t.test('a near name is not acted on: the model gets the guess, or the person a question', async (t) => {
  const { rig, kitchen } = await home(t);
  rig.setOnline(true);
  const ctx = await rig.say('turn on the kichen lite');
  t.equal(ctx.response, undefined);
  t.equal(kitchen.calls.length, 0, 'nothing was switched on a guess');
  const note = ctx.messages.find((m) => m.role === 'system' && String(m.content).includes('intent engine'));
  t.match(note?.content, /Kitchen Light/, 'the guess rides along to the model');
  t.equal(ctx.messages.at(-1)?.role, 'user', 'before the person’s words');
  t.match(ctx.fallback, /Did you mean “Kitchen Light”/, 'and answers if the model cannot be reached');
  rig.setOnline(false);
  t.match((await rig.say('turn on the kichen lite')).response, /Did you mean “Kitchen Light”/);
  t.equal(kitchen.calls.length, 0);
});

t.test('machine inputs, slash commands and a disabled engine are left alone', async (t) => {
  const { rig, kitchen } = await home(t);
  t.equal((await rig.say('turn on the kitchen light', {}, 'automation')).response, undefined);
  t.equal((await rig.say('/confirm 123456')).response, undefined);
  rig.config.enabled = false;
  t.equal((await rig.say('turn on the kitchen light')).response, undefined);
  t.equal(kitchen.calls.length, 0);
});

t.test('a device registered after start is understood at once', async (t) => {
  const { rig } = await home(t);
  await rig.say('turn on the kitchen light');
  const fan = rig.device({ domain: 'fan', object_id: 'attic_fan', name: 'Attic Fan', initial_state: 'off' });
  t.equal((await rig.say('turn on the attic fan')).response, 'Turned on Attic Fan.');
  t.equal(fan.calls.length, 1);
});

t.test('the language comes from the voice pipeline when it says one, else from the script', async (t) => {
  t.equal(inputLanguage('turn on the light', {}), 'en');
  t.equal(inputLanguage('打开灯', {}), 'zh');
  t.equal(inputLanguage('ok', { language: 'zh-CN' }), 'zh');
  t.equal(inputLanguage('打开灯', { language: 'fr' }), 'zh', 'a language we do not speak falls back to the script');
});

t.test('scenes, colours, positions, people and sensors', async (t) => {
  const { rig, kitchen } = await home(t);
  const scene = rig.device({ domain: 'scene', object_id: 'movie', name: 'Movie Time', initial_state: null }, () => null);
  // A blind motor that only runs fully up or down, which its owner did not mark critical.
  const blind = rig.device(
    {
      domain: 'cover',
      object_id: 'study_blind',
      name: 'Study Blind',
      area: 'Study',
      initial_state: 'closed',
      services: ['open', 'close'],
      critical: false,
    },
    () => 'open',
  );
  const valve = rig.device({ domain: 'valve', object_id: 'garden_valve', name: 'Garden Valve', area: 'Garden', initial_state: 'closed' });
  rig.device({ domain: 'person', object_id: 'anna', name: 'Anna', initial_state: 'not_home' });
  rig.device({
    domain: 'sensor',
    object_id: 'study_temp',
    name: 'Study Temperature',
    area: 'Study',
    device_class: 'temperature',
    unit: '°C',
    initial_state: 21.5,
  });

  t.equal((await rig.say('activate Movie Time')).response, 'Started Movie Time.');
  t.same(scene.calls, [{ service: 'turn_on', data: {} }]);
  t.equal((await rig.say('make the kitchen light red')).response, 'Set Kitchen Light to red.');
  t.same(kitchen.calls.at(-1), { service: 'turn_on', data: { color_name: 'red' } });
  const half = await rig.say('set the study blind to 50%');
  t.same(blind.calls, [], 'a cover without set_position is not moved to a guess');
  t.match(half.response, /Study Blind can't do that: it only opens or closes fully/);
  t.equal((await rig.say('set the study blind to 100%')).response, 'Set Study Blind to 100%.');
  t.same(blind.calls, [{ service: 'open', data: {} }], 'fully open is open');
  t.match((await rig.say('open the garden valve')).response, /Garden Valve is a critical device/);
  t.equal((await rig.say('where is Anna')).response, 'Anna is away.');
  t.equal(
    (await rig.say('what is the temperature in the study')).response,
    'Study Temperature: 21.5°C.',
    'a sensor answers where no thermostat is',
  );
  t.equal(valve.calls.length, 0);
});

t.test('a floor means the lights of its rooms', async (t) => {
  const { rig, kitchen, ceiling, lamp, bedroom } = await home(t);
  t.equal((await rig.say('turn on the lights on the ground floor')).response, 'Turned on Kitchen Light, Ceiling Light and Reading Lamp.');
  t.same([kitchen.calls.length, ceiling.calls.length, lamp.calls.length, bedroom.calls.length], [1, 1, 1, 0]);
  t.equal(
    (await rig.say('turn off the lights on the top floor')).response,
    "I couldn't find lights on the Top Floor.",
    'the attic has none',
  );
});

t.test('a ringing timer says its reminder offline, and runs the command it was set for', async (t) => {
  const { rig, kitchen } = await home(t);
  const ring = (message: string, name?: string) =>
    rig.say(`timer: ${message}`, { timer_id: 't1', timer_message: message, ...(name !== undefined && { timer_name: name }) }, 'timer');

  t.equal((await ring('take the pizza out', 'pizza')).response, "Time's up (pizza): take the pizza out.");
  t.equal((await ring('the 10 minute timer')).response, "Time's up: the 10 minute timer.");
  t.equal((await ring('十分钟的计时器')).response, '时间到了：十分钟的计时器。');
  t.equal(
    (await ring('turn on the kitchen light')).response,
    "Time's up: turn on the kitchen light. Turned on Kitchen Light.",
    'a delayed command is carried out',
  );
  t.equal(kitchen.calls.length, 1);
  t.equal((await ring('turn on the kichen lite')).response, "Time's up: turn on the kichen lite.", 'never on a guess');
  t.equal(kitchen.calls.length, 1);
  rig.setOnline(true);
  t.equal((await ring('take the pizza out')).response, undefined, 'with a model, the model says it');

  // The message an intent-set timer rings with: its length, or the delayed command.
  await rig.say('set a timer for 10 minutes');
  await rig.say('in 5 minutes turn off the kitchen light');
  const timers = (await rig.tools.get('timer_list')?.execute({}, {} as never)) as { timers: Array<{ message: string }> };
  t.same(
    timers.timers.map((timer) => timer.message),
    ['turn off the kitchen light', 'the 10 minute timer'],
  );
});

t.test('free text keeps its capitals: list items and search queries as the person wrote them', async (t) => {
  const { rig } = await home(t);
  t.equal((await rig.say('Add Oat Milk to my shopping list!')).response, 'Added Oat Milk to the shopping list.');
  t.same(
    rig.lists.items('shopping list').map((i) => i.text),
    ['Oat Milk'],
  );
  const tv = rig.device({ domain: 'media_player', object_id: 'tv', name: 'TV', area: 'Living Room', initial_state: 'idle' });
  t.equal((await rig.say('play The Office on the TV')).response, 'Playing The Office on TV.');
  t.same(tv.calls, [{ service: 'play_media', data: { media_content_id: 'The Office', media_content_type: 'music' } }]);
});

t.test('a timer set for a command says the command back', async (t) => {
  const { rig } = await home(t);
  t.equal((await rig.say('in 5 minutes turn off the kitchen light')).response, 'Timer set for 5 minutes (turn off the kitchen light).');
});

t.test('a question about several devices lists each one’s state', async (t) => {
  const { rig } = await home(t);
  // Two devices with one name, in two rooms, and nobody said which.
  rig.device({ domain: 'light', object_id: 'hall_lamp', name: 'Lamp', area: 'Hall', initial_state: 'on' });
  rig.device({ domain: 'light', object_id: 'study_lamp', name: 'Lamp', area: 'Study', initial_state: 'off' });
  t.equal((await rig.say('what is the state of the Lamp')).response, 'Lamp (Hall) on and Lamp (Study) off.');
  t.equal((await rig.say('厨房有灯开着吗')).response, '没有，厨房的灯没有开着的。', 'and the area by its Chinese alias');
});

import t from 'tap';
import {
  type CompiledTemplate,
  compileTemplate,
  matchNormalised,
  matchTemplate,
  mayMatch,
  type OpenLists,
  type SlotList,
  TemplateSet,
  templateEdges,
} from '../../../src/intent/template-grammar.js';
import { normalizeText } from '../../../src/intent/text-normalize.js';
import { isHomeAgentError } from '../../../src/shared/errors.js';

const lists: Record<string, SlotList> = {
  area: {
    type: 'values',
    values: [
      { value: 'kitchen', phrases: ['厨房', 'kitchen'] },
      { value: 'bedroom', phrases: ['卧室', 'bedroom'] },
      { value: 'living_room', phrases: ['客厅', 'living room'] },
    ],
  },
  name: {
    type: 'values',
    values: [
      { value: 'light.bedroom', phrases: ['卧室灯', '卧室的灯', 'bedroom light'] },
      { value: 'light.bedroom_lamp', phrases: ['卧室'] },
      { value: 'light.kitchen', phrases: ['Kitchen Light', 'kitchen lamp'] },
    ],
  },
  brightness: { type: 'range', from: 0, to: 100, percent: true },
  temperature: { type: 'range', from: 5, to: 35, step: 0.5, units: ['度', 'degrees'] },
  duration: { type: 'duration' },
  anything: { type: 'wildcard' },
};

const slotValues = (template: string, text: string): Array<Record<string, string | number>> =>
  matchTemplate(compileTemplate(template, lists), text).map((m) =>
    Object.fromEntries(Object.entries(m.slots).map(([k, v]) => [k, v.value])),
  );
const best = (template: string, text: string): Record<string, string | number> | undefined => slotValues(template, text)[0];

t.test('normalisation: case, full-width, punctuation, spaces next to CJK', async (t) => {
  t.equal(normalizeText('  Turn ON,  the   Kitchen-Light! '), 'turn on the kitchen light');
  t.equal(normalizeText('打开 厨房 的灯。'), '打开厨房的灯');
  t.equal(normalizeText('ＡＢＣ　１２３％'), 'abc 123%');
  t.equal(normalizeText('调到 2.5 度'), '调到2.5度');
  t.equal(normalizeText("What's on?"), 'whats on');
});

t.test('Chinese: a slot inside literal text, no word splitting needed', async (t) => {
  t.same(slotValues('打开{area}的灯', '打开厨房的灯'), [{ area: 'kitchen' }]);
  t.same(slotValues('打开{area}的灯', '打开 厨房 的灯。'), [{ area: 'kitchen' }], 'spaces between CJK are optional');
  t.same(slotValues('打开{area}的灯', '打开车库的灯'), [], 'an area not in the list does not match');
  t.same(slotValues('打开{area}的灯', '打开厨房的灯吧'), [], 'only whole-sentence matches count');
});

t.test('a percent range slot: 百分之五十, 50%, half', async (t) => {
  t.same(best('把{name}调到{brightness}', '把卧室灯调到百分之五十'), { name: 'light.bedroom', brightness: 50 });
  t.same(best('把{name}调到{brightness}', '把卧室灯调到50%'), { name: 'light.bedroom', brightness: 50 });
  t.same(best('把{name}调到{brightness}', '把卧室灯调到一半'), { name: 'light.bedroom', brightness: 50 });
  t.same(best('set [the] {name} to {brightness}', 'Set the kitchen light to 75 percent'), {
    name: 'light.kitchen',
    brightness: 75,
  });
  t.same(slotValues('把{name}调到{brightness}', '把卧室灯调到一百五十'), [], 'out of range');
});

t.test('a range with step and unit words', async (t) => {
  t.same(best('(设置|调到)[温度][为]{temperature}', '调到二十二点五度'), { temperature: 22.5 });
  t.same(best('set [the] temperature to {temperature}', 'set the temperature to 21 degrees'), { temperature: 21 });
  t.same(slotValues('调到{temperature}', '调到22.3度'), [], 'not on a 0.5 step');
  t.same(slotValues('调到{temperature}', '调到百分之五十'), [], 'percent words only where the list allows them');
});

t.test('English: alternatives, optional words, spaces', async (t) => {
  const template = '(turn|switch) on [the] {name}';
  t.same(slotValues(template, 'turn on the kitchen light'), [{ name: 'light.kitchen' }]);
  t.same(slotValues(template, 'Switch on kitchen lamp'), [{ name: 'light.kitchen' }]);
  t.same(slotValues(template, 'switch   on   the   Kitchen Light.'), [{ name: 'light.kitchen' }]);
  t.same(slotValues(template, 'turnon the kitchen light'), [], 'a template space needs a space between English words');
  t.same(slotValues(template, 'turn off the kitchen light'), []);
});

t.test('durations: English and Chinese', async (t) => {
  t.same(best('set a timer for {duration}', 'set a timer for an hour and a half'), { duration: 5400 });
  t.same(best('set a timer for {duration}', 'Set a timer for 10 minutes'), { duration: 600 });
  t.same(best('[请]设置{duration}的计时器', '设置十分钟的计时器'), { duration: 600 });
  t.same(best('[请]设置{duration}的计时器', '请设置一个半小时的计时器'), { duration: 5400 });
  t.same(slotValues('[请]设置{duration}的计时器', '设置很久的计时器'), []);
});

t.test('nesting: optional groups with alternatives inside alternatives', async (t) => {
  const template = '[请][帮我](打开|开[一下|启]){area}[的][(灯|灯光)]';
  for (const text of ['打开厨房', '请帮我开一下客厅的灯光', '开启卧室灯', '帮我打开厨房的灯']) t.ok(best(template, text), text);
  t.same(best(template, '开一下客厅的灯光'), { area: 'living_room' });
  t.same(slotValues(template, '关闭厨房的灯'), []);
});

t.test('the longer list match wins; every reading is returned', async (t) => {
  const matches = slotValues('打开{name}[的灯]', '打开卧室的灯');
  t.same(matches[0], { name: 'light.bedroom' }, '"卧室的灯" is one name and beats "卧室" + literal');
  t.same(matches, [{ name: 'light.bedroom' }, { name: 'light.bedroom_lamp' }]);
});

t.test('wildcard: any text, shortest reading first', async (t) => {
  t.same(best('add {anything} to [my] shopping list', 'add oat milk to my shopping list'), { anything: 'oat milk' });
  t.same(best('play {anything} [please]', 'play jazz please'), { anything: 'jazz' });
  t.same(best('把{anything}加到购物清单', '把牛奶和鸡蛋加到购物清单'), { anything: '牛奶和鸡蛋' });
  t.same(slotValues('play {anything}', 'play'), [], 'a wildcard takes at least one character');
});

t.test('a slot renamed with {list:slot}; top-level alternatives', async (t) => {
  t.same(best('from {area:from} to {area:to}', 'from kitchen to bedroom'), { from: 'kitchen', to: 'bedroom' });
  t.same(best('打开{area}|turn on {area}', 'turn on living room'), { area: 'living_room' });
});

t.test('bad templates: a coded error naming the position', async (t) => {
  const cases: Array<[string, RegExp]> = [
    ['打开(厨房|客厅', /"\(" is never closed at position 2/],
    ['turn on [the {name}', /"\[" is never closed at position 8/],
    ['打开(厨房]', /"\]" does not close "\(" opened at position 2 at position 5/],
    ['turn on the)', /"\)" without a matching opening bracket at position 11/],
    ['打开{room}的灯', /unknown list "room" at position 2/],
    ['打开{area的灯', /"\{" is never closed at position 2/],
    ['打开}', /"\}" without a matching "\{" at position 2/],
    ['打开{}', /"\{\}" is not a list name at position 2/],
  ];
  for (const [source, message] of cases) {
    t.throws(() => compileTemplate(source, lists), message, source);
    try {
      compileTemplate(source, lists);
    } catch (error) {
      t.ok(isHomeAgentError(error, 'HA_ERR_INTENT_TEMPLATE'), `${source}: coded error`);
    }
  }
  t.throws(() => compileTemplate('{bad}', { bad: { type: 'range', from: 10, to: 1 } }), /list "bad" has a range whose from is not <= to/);
  t.throws(
    () => compileTemplate('{bad}', { bad: { type: 'values', values: [{ value: 'x', phrases: ['!!'] }] } }),
    /list "bad" has an empty phrase/,
  );
});

t.test('open lists: a name slot takes the spans of whole words `accepts` lets through, other slots stay exact', async (t) => {
  const template = compileTemplate('(turn|switch) on [the] {name} [to {brightness}]', lists);
  t.same(template.slotLists, { name: 'name', brightness: 'brightness' });
  const asked: string[] = [];
  const open: OpenLists = {
    lists: new Set(['name']),
    accepts: (list, text) => {
      asked.push(`${list}:${text}`);
      return text === 'kitchen lihgt';
    },
  };
  const matches = matchNormalised(template, normalizeText('turn on the kitchen lihgt to 50%'), open);
  t.same(
    matches.map((m) => [m.slots.name?.text, m.slots.brightness?.value]),
    [['kitchen lihgt', 50]],
  );
  t.ok(asked.includes('name:the kitchen lihgt'), 'spans with the optional word were offered too');
  t.notOk(
    asked.some((a) => !a.startsWith('name:')),
    'only the open list is asked',
  );
  t.ok(asked.includes('name:kitchen'), 'a shorter span of whole words was offered');
  t.notOk(
    asked.some((a) => a === 'name:kitchen l' || a === 'name:the k'),
    'no span ends inside a word',
  );
  t.same(matchNormalised(template, normalizeText('turn on the kitchen lihgt to 50%')), [], 'closed: no match');
  t.same(
    matchNormalised(template, normalizeText('turn on the kitchen lihgt to 50%'), { lists: new Set(['name']), accepts: () => false }),
    [],
    'nothing accepted, nothing matched',
  );
});

t.test('open lists in Chinese: any span of characters is offered', async (t) => {
  const template = compileTemplate('打开{name}', lists);
  const asked: string[] = [];
  const open: OpenLists = {
    lists: new Set(['name']),
    accepts: (_list, text) => {
      asked.push(text);
      return text === '厨房等';
    },
  };
  t.same(
    matchNormalised(template, normalizeText('打开厨房等'), open).map((m) => m.slots.name?.value),
    ['厨房等'],
  );
  t.same(asked.sort(), ['厨', '厨房', '厨房等'].sort(), 'every span from the slot start');
});

t.test('edges: a sentence that cannot start or end like the template is ruled out before matching', async (t) => {
  const template = compileTemplate('[please] turn on {name}', lists);
  t.ok(mayMatch(template.edges, 'turn on kitchen light'));
  t.ok(mayMatch(template.edges, 'please turn on kitchen light'));
  t.notOk(mayMatch(template.edges, 'switch on kitchen light'), 'no template start fits');
  t.notOk(mayMatch(template.edges, 'turn on kitchen lights'), 'no name ends in s');
  t.ok(mayMatch(template.edges, 'turn on kitchen lamp'));
  t.notOk(mayMatch(template.edges, ''), 'the template cannot match nothing');
  const open = templateEdges(template, new Set(['name']));
  t.ok(mayMatch(open, 'turn on kitchen lights'), 'with the name open, any end');
  t.notOk(mayMatch(open, 'switch on kitchen lights'), 'the start is still literal');
  t.equal(templateEdges(template), template.edges);
  const anyStart = compileTemplate('{anything} please', lists);
  t.ok(mayMatch(anyStart.edges, 'whatever please'));
  t.notOk(mayMatch(anyStart.edges, 'whatever'));
  // For every sentence tried here, a template the edges rule out has no match either.
  for (const text of ['switch on kitchen light', 'turn on kitchen lights', 'turn on']) {
    if (!mayMatch(template.edges, normalizeText(text))) t.same(matchTemplate(template, text), [], text);
  }
});

t.test('the shared memo: matching many templates in turn gives what each gives alone', async (t) => {
  const sources = ['打开{area}的灯', '(turn|switch) on [the] {name}', 'set a timer for {duration}', '把{name}调到{brightness}'];
  const sentences = ['打开厨房的灯', 'turn on the kitchen light', 'set a timer for 10 minutes', '把卧室灯调到50%'];
  const alone = sources.map((source, i) => matchTemplate(compileTemplate(source, lists), sentences[i] as string));
  const compiled = sources.map((source) => compileTemplate(source, lists));
  for (let round = 0; round < 3; round++) {
    compiled.forEach((template, i) => {
      for (const other of sentences) matchTemplate(template, other);
      t.same(matchTemplate(template, sentences[i] as string), alone[i], `${sources[i]} round ${round}`);
    });
  }
  t.ok(
    alone.every((m) => m.length > 0),
    'each sentence matches its template',
  );
});

t.test('a TemplateSet shares identical subtrees between templates and matches as separate compiles do', async (t) => {
  const sources = [
    '[please] (turn|switch) on [the] {name} [in [the] {area}]',
    '[please] (turn|switch) off [the] {name} [in [the] {area}]',
    '[please] (turn|switch) on [the] {area} lights',
    '打开{area}的灯',
  ];
  const sentences = [
    'please switch on the kitchen light',
    'turn off kitchen light in the kitchen',
    'turn on the kitchen lights',
    '打开厨房的灯',
  ];
  const set = new TemplateSet(lists);
  const shared = sources.map((source) => set.compile(source));
  const apart = sources.map((source) => compileTemplate(source, lists));
  t.ok(
    set.nodeCount < apart.reduce((n, template) => n + template.nodeCount, 0) / 2,
    `shared nodes: ${set.nodeCount}, apart: ${apart.map((a) => a.nodeCount).join(' + ')}`,
  );
  const please = (template: CompiledTemplate) => (template.root as unknown as { items: unknown[] }).items[0];
  t.equal(please(shared[0] as CompiledTemplate), please(shared[1] as CompiledTemplate), 'the same [please] node in both templates');
  for (const [i, template] of shared.entries()) {
    for (const sentence of sentences) {
      t.same(matchTemplate(template, sentence), matchTemplate(apart[i] as CompiledTemplate, sentence), `${sources[i]} on "${sentence}"`);
    }
    t.ok(matchTemplate(template, sentences[i] as string).length > 0, `${sources[i]} matches its sentence`);
  }
});

t.test('a group met again in a TemplateSet is reused with its slots, and a bad template is still found', async (t) => {
  // The second and third templates reuse the first one's groups, slots inside them included: what
  // each binds, its node count and its matches must be those of compiling it alone.
  const sources = [
    '(turn|switch) on [the] {name} [in [the] {area:room}]',
    '(turn|switch) off [the] {name} [in [the] {area:room}]',
    'is [the] {name} [in [the] {area:room}] on',
  ];
  const set = new TemplateSet(lists);
  const shared = sources.map((source) => set.compile(source));
  for (const [i, source] of sources.entries()) {
    const alone = compileTemplate(source, lists);
    const template = shared[i] as CompiledTemplate;
    t.same(template.slotLists, alone.slotLists, `${source}: slots ${JSON.stringify(alone.slotLists)}`);
    t.ok(template.nodeCount <= set.nodeCount, `${source}: node count within the set`);
    for (const sentence of [
      'turn on the kitchen light in the kitchen',
      'switch off kitchen light',
      'is the kitchen light in the bedroom on',
    ]) {
      t.same(matchTemplate(template, sentence), matchTemplate(alone, sentence), `${source} on "${sentence}"`);
    }
  }
  t.same(shared[2]?.slotLists, { name: 'name', room: 'area' }, 'the reused optional group still binds room from area');
  // A group that closes with the wrong bracket never parsed cleanly, so it is not remembered: the
  // second template with it fails like the first, with its own position.
  for (const source of ['turn on (the] {name}', 'please turn on (the] {name}']) {
    t.throws(() => set.compile(source), { code: 'HA_ERR_INTENT_TEMPLATE' }, `${source} is refused`);
  }
});

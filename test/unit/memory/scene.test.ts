import { join } from 'node:path';
import t from 'tap';
import { defaultConfig } from '../../../src/config/loader.js';
import type { TimerScheduler } from '../../../src/memory/maintenance.js';
import { MEMORY_COMPONENT, MEMORY_MIGRATIONS } from '../../../src/memory/memory-schema.js';
import { MemoryService, type MemorySettings, type RememberedTurn } from '../../../src/memory/memory-service.js';
import { partOfDay, SCENE_WEIGHTS, sceneFingerprint, sceneSimilarity, underScene } from '../../../src/memory/scene-fingerprint.js';
import { rankByScene } from '../../../src/memory/scene-recall.js';
import type { ToolContext } from '../../../src/shared/tool.js';
import { ManagedDatabase } from '../../../src/store/database.js';
import { Store } from '../../../src/store/store.js';
import { silentLogs, type Teardown, tempDir } from '../fixtures/support.js';
import { ManualClock, openTestMemoryDb } from './fixtures/memory-fixture.js';

const noTimers: TimerScheduler = { set: () => undefined, clear: () => {} };
/** An evening (local time), so every turn of a test has the same part of the day. */
const EVENING = new Date(2026, 10, 2, 19, 0, 0).getTime();
const words = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

async function rig(t: Teardown, settings: Partial<MemorySettings> = {}) {
  const dir = tempDir(t);
  const clock = new ManualClock(EVENING);
  const store = new Store({
    databases: [{ name: 'memory', file: join(dir, 'memory.db'), synchronous: 'FULL' }],
    busyTimeoutMs: 2000,
    startupCheck: 'off',
    log: silentLogs().child('store'),
    clock,
  });
  await store.start();
  const current: MemorySettings = { ...defaultConfig().core.memory, ...settings };
  const memory = new MemoryService({
    database: () => store.database('memory'),
    limits: () => ({ max_context_size: 30, prompt_documents: 3 }),
    memory: () => current,
    clock,
    log: silentLogs().child('memory'),
    timers: noTimers,
  });
  await memory.start();
  t.teardown(async () => {
    await memory.stop();
    await store.stop();
  });
  const db = store.database('memory').db;
  let n = 0;
  const say = async (channel: string, peer: string, input: string, extra: Partial<RememberedTurn> = {}) => {
    n++;
    const turn = { id: `${channel}-${n}`, timestamp: EVENING + n * 60_000, source: channel, channel, peer, input, ...extra };
    await memory.recordInput(turn);
    await memory.remember({ response: '', tools: [], ...turn });
    return turn.id;
  };
  return { memory, store, db, settings: current, say };
}

t.test('a fingerprint holds channel, peer, tools, topic words and the part of the day, with the original weights', async (t) => {
  const fp = sceneFingerprint(
    {
      channel: 'qq',
      peer: 'group_1027',
      input: 'What shall we cook for dinner, 2 people?',
      timestamp: EVENING,
      tools: ['recipe_search', 'recipe_search'],
    },
    words,
  );
  t.same(
    fp.filter((f) => f.kind !== 'topic'),
    [
      { kind: 'chan', value: 'qq' },
      { kind: 'peer', value: 'group_1027' },
      { kind: 'tool', value: 'recipe_search' },
      { kind: 'part', value: 'evening' },
    ],
    'one tool feature per tool, however often it ran',
  );
  const topics = fp.filter((f) => f.kind === 'topic').map((f) => f.value);
  t.ok(topics.includes('dinner') && topics.includes('people'));
  t.notOk(topics.includes('2'), 'bare numbers are no topic');
  t.ok(topics.length <= 6);
  t.same(SCENE_WEIGHTS, { chan: 1, peer: 1, tool: 0.8, topic: 0.4, part: 0.2 });
  t.equal(partOfDay(new Date(2026, 0, 1, 7).getTime()), 'morning');
  t.equal(partOfDay(new Date(2026, 0, 1, 2).getTime()), 'night');
  t.notOk(
    sceneFingerprint({ channel: 'cli', peer: '', input: '', timestamp: EVENING }, words).some((f) => f.kind === 'peer'),
    'no peer feature without a peer',
  );
});

t.test('similarity is weighted Jaccard', async (t) => {
  const a = [
    { kind: 'chan', value: 'qq' },
    { kind: 'peer', value: 'p' },
    { kind: 'part', value: 'evening' },
  ] as const;
  const b = [
    { kind: 'chan', value: 'qq' },
    { kind: 'peer', value: 'q' },
    { kind: 'part', value: 'evening' },
  ] as const;
  t.equal(sceneSimilarity(a, a), 1);
  t.equal(sceneSimilarity(a, []), 0);
  t.equal(sceneSimilarity(a, b), (1 + 0.2) / (1 + 1 + 1 + 0.2), 'shared weight over the weight of the union');
  t.equal(sceneSimilarity(a, b), sceneSimilarity(b, a), 'symmetric');
  const withTopic = [...a, { kind: 'topic', value: 'dinner' } as const];
  t.equal(sceneSimilarity(a, withTopic), 2.2 / 2.6);
});

t.test('a scene is created on its second occurrence, with both turns attached', async (t) => {
  const { memory, say } = await rig(t);
  const scenes = memory.parts().scenes;
  const first = await say('qq', 'group_1027', 'What shall we cook for dinner tonight?');
  t.same(scenes.list(), [], 'one turn makes no scene');
  t.same(scenes.scenesOfEvent(first), []);
  await say('qq', 'group_2048', 'Dinner tonight is noodles, who is coming?');
  t.same(scenes.list(), [], 'another group is another situation');
  const second = await say('qq', 'group_1027', 'Dinner idea for tonight: noodles?');
  const [scene] = scenes.list();
  t.ok(scene, 'the second occurrence makes the scene');
  t.match(scene?.key, /^chan:qq\/peer:group_1027\/topic:(dinner|tonight)$/);
  t.equal(scene?.occurrences, 2);
  t.same(scenes.scenesOfEvent(first), [scene?.key]);
  t.same(scenes.scenesOfEvent(second), [scene?.key]);
  const third = await say('qq', 'group_1027', 'Dinner tonight: noodles again, or rice?');
  t.same(scenes.scenesOfEvent(third), [scene?.key], 'a third like them joins it');
  t.equal(scenes.list()[0]?.occurrences, 3);
  t.equal(scenes.list().length, 1);
});

t.test('recall by key prefix, bounded by /; boost reorders and narrow filters, within the current scene', async (t) => {
  t.ok(underScene('chan:qq/peer:g1/topic:dinner', 'chan:qq'));
  t.ok(underScene('chan:qq/peer:g1', 'chan:qq/peer:g1'));
  t.ok(underScene('chan:qq/peer:g1', 'chan:qq/'));
  t.notOk(underScene('chan:qqmail/peer:g1', 'chan:qq'), 'a prefix ends at a /');
  t.notOk(underScene('chan:qq', 'chan:qq/peer:g1'));

  const { memory, say } = await rig(t);
  const scenes = memory.parts().scenes;
  const a = await say('qq', 'group_1027', 'The dinner tonight is at the garden table.');
  const b = await say('qq', 'group_1027', 'Dinner tonight: bring the garden lamp.');
  const c = await say('cli', 'anna', 'The dinner plates are in the garden shed.');
  const key = scenes.scenesOfEvent(a)[0] ?? '';
  t.ok(key.startsWith('chan:qq/peer:group_1027'));
  t.same([...scenes.eventsUnder('chan:qq', [a, b, c])].sort(), [a, b].sort(), 'prefix chan:qq covers the scene under it');
  t.same([...scenes.eventsUnder('chan:cli', [a, b, c])], [], 'a turn seen once is in no scene');

  const recall = memory.parts().recall;
  const plain = await recall.recall('where is the dinner in the garden', 3);
  const narrowed = await recall.recall('where is the dinner in the garden', 3, {
    scene: { mode: 'narrow', boost: 0, inScene: (ids) => scenes.eventsUnder('chan:qq', ids) },
  });
  t.ok(
    plain.items.some((i) => i.sources.includes(c)),
    'without a scene the cli turn is recalled',
  );
  t.ok(narrowed.items.length > 0);
  t.notOk(
    narrowed.items.some((i) => i.sources.includes(c) && !i.sources.includes(a) && !i.sources.includes(b)),
    'narrowed: only the scene',
  );

  // Boost: a memory of the scene moves ahead of an equally scored one outside it.
  const fused: Array<[string, number]> = [
    ['x', 1],
    ['y', 0.9],
  ];
  const sources = (k: string) => (k === 'x' ? ['out'] : ['in']);
  const inScene = (ids: readonly string[]) => new Set(ids.filter((id) => id === 'in'));
  t.same(
    rankByScene(fused, sources, { mode: 'boost', boost: 0.3, inScene }).map(([k]) => k),
    ['y', 'x'],
  );
  t.same(rankByScene(fused, sources, { mode: 'boost', boost: 0, inScene }), fused, 'boost 0 changes nothing');
  t.same(rankByScene(fused, sources, { mode: 'narrow', boost: 0, inScene }), [['y', 0.9]]);
  t.same(
    rankByScene(fused, () => ['out'], { mode: 'narrow', boost: 0, inScene }),
    fused,
    'narrowed with nothing of the scene, all stays (no false "no record")',
  );
});

t.test("the prompt's recall follows core.memory.scene_recall for the turn's scene", async (t) => {
  const r = await rig(t);
  const { memory, say, settings } = r;
  await say('qq', 'group_1027', 'Dinner tonight is at the garden table.');
  await say('qq', 'group_1027', 'Dinner tonight: the garden lamp is on.');
  await say('cli', 'anna', 'The garden table for dinner is broken.');
  const ask = {
    id: 'ask-1',
    timestamp: EVENING + 3_600_000,
    source: 'qq',
    channel: 'qq',
    peer: 'group_1027',
    input: 'dinner tonight in the garden?',
  };
  t.ok(memory.turnScene(ask), 'the question matches the scene as it arrives');
  await memory.recordInput(ask);
  settings.scene_recall = 'narrow';
  const narrowed = await memory.recallBlock(ask.input, { inputId: ask.id });
  t.notMatch(narrowed?.text ?? '', /broken/, 'narrowed to the scene');
  settings.scene_recall = 'off';
  const off = await memory.recallBlock(ask.input, { inputId: ask.id });
  t.match(off?.text ?? '', /broken/, 'off: every memory');
  t.equal(memory.sceneRanking('chan:qq'), undefined);
  settings.scene_recall = 'boost';
  t.match(memory.sceneRanking('chan:qq'), { mode: 'boost', boost: 0.3 }, 'boost by default');
});

t.test('scene policy none: system, timer and internal channels make no scenes and get none', async (t) => {
  t.same(defaultConfig().core.memory.scene_none_channels, ['self', 'system', 'timer', 'internal', 'automation']);
  const { memory, say, db } = await rig(t);
  for (const channel of ['timer', 'system', 'internal']) {
    await say(channel, 'kernel', 'Timer done: laundry finished.');
    await say(channel, 'kernel', 'Timer done: laundry finished.');
    t.equal(memory.turnScene({ channel, peer: 'kernel', input: 'Timer done: laundry finished.', timestamp: EVENING }), undefined, channel);
  }
  t.same(memory.parts().scenes.list(), []);
  t.equal((db.prepare('SELECT count(*) AS n FROM scene_sightings').get() as { n: number }).n, 0, 'not even a sighting');
  await say('qq', 'kernel', 'Timer done: laundry finished.');
  await say('qq', 'kernel', 'Timer done: laundry finished.');
  t.equal(memory.parts().scenes.list().length, 1, 'the same turns on an auto channel do make one');
});

t.test("memory_commit with an empty scene attaches to the turn's scene; a named scene is used as given", async (t) => {
  const { memory, say } = await rig(t);
  const scenes = memory.parts().scenes;
  await say('qq', 'group_1027', 'Dinner tonight is at the garden table.');
  await say('qq', 'group_1027', 'Dinner tonight: the garden lamp is on.');
  const key = scenes.list()[0]?.key ?? '';
  t.not(key, '');
  const input = {
    id: 'commit-1',
    timestamp: EVENING + 600_000,
    source: 'qq',
    channel: 'qq',
    peer: 'group_1027',
    input: 'dinner tonight in the garden, remember Ben brings wine',
  };
  await memory.recordInput(input);
  const commit = memory.tools().find((tool) => tool.name === 'memory_commit');
  if (!commit) throw new Error('memory_commit is missing');
  t.ok((commit.parameters as { properties: Record<string, unknown> }).properties.scene, 'the scene parameter is declared');
  const context = (input_id: string, channel = 'qq') =>
    ({
      signal: new AbortController().signal,
      task_id: input_id,
      call_id: 'c1',
      input_id,
      source: channel,
      channel,
      trust: 'owner',
    }) as ToolContext;
  const result = (await commit.execute(
    { triples: [{ subject: 'Ben', relation: 'brings', object: 'wine' }], scene: '' },
    context(input.id),
  )) as Record<string, unknown>;
  t.equal(result.scene, key, 'the result names the scene');
  t.same(scenes.scenesOfEvent(input.id), [key]);

  await say('cli', 'anna', 'the garage door code is 4711');
  await say('cli', 'anna', 'the garage door code is 4711, again');
  const other = scenes.list().find((s) => s.key.startsWith('chan:cli'))?.key ?? '';
  t.not(other, '');
  const named = (await commit.execute(
    { triples: [{ subject: 'Ben', relation: 'likes', object: 'wine' }], scene: other },
    context(input.id),
  )) as Record<string, unknown>;
  t.equal(named.scene, other);
  t.same(scenes.scenesOfEvent(input.id).sort(), [key, other].sort());
  const unknown = (await commit.execute(
    { triples: [{ subject: 'Ben', relation: 'drives', object: 'car' }], scene: 'chan:nowhere' },
    context(input.id),
  )) as Record<string, unknown>;
  t.equal(unknown.scene, undefined, 'a scene that does not exist attaches nothing');
  const timer = (await commit.execute(
    { triples: [{ subject: 'Ben', relation: 'owns', object: 'bike' }] },
    context('timer-1', 'timer'),
  )) as Record<string, unknown>;
  t.equal(timer.scene, undefined, 'policy none: no scene');
});

t.test('scenes never change memory content: the same turns store the same rows with scenes on and off', async (t) => {
  const dump = async (sceneChannels: string[]) => {
    const { db, say, memory } = await rig(t, { scene_none_channels: sceneChannels });
    for (let i = 0; i < 3; i++) {
      await say('qq', 'group_1027', `Dinner tonight at ${i + 6} pm, Anna brings the salad.`);
      await say('cli', 'anna', `I moved the ladder to the garage on day ${i}.`);
    }
    const rows = (sql: string) => JSON.stringify(db.prepare(sql).all());
    const recalled = await memory.recallBlock('where is the ladder?');
    return {
      scenes: memory.parts().scenes.list().length,
      content: [
        rows('SELECT id, timestamp, channel, peer, input, response, tools_used FROM context_events ORDER BY seq'),
        rows('SELECT id, content, source_event_ids FROM documents ORDER BY id'),
        rows('SELECT id, text, source_event_id, speaker FROM graph_sentences ORDER BY id'),
        rows('SELECT source_id, target_id, type, confidence FROM graph_relations ORDER BY id'),
        rows('SELECT name, type, mention_count FROM graph_entities ORDER BY id'),
      ],
      recalled: recalled?.text,
    };
  };
  const on = await dump([]);
  const off = await dump(['qq', 'cli']);
  t.ok(on.scenes > 0, 'scenes were made with scenes on');
  t.equal(off.scenes, 0);
  t.same(on.content, off.content, 'events, documents, sentences, relations and entities are the same');
  t.equal(on.recalled, off.recalled, 'the same prompt block (no scene for a question outside a turn)');
});

t.test('the scenes migration applies to an existing memory.db file and keeps what it held', async (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock(EVENING);
  const log = silentLogs().child('memory');
  const old = ManagedDatabase.open(
    { name: 'memory', file: join(dir, 'memory.db'), synchronous: 'FULL' },
    { busyTimeoutMs: 2000, startupCheck: 'quick', log, clock },
  );
  old.migrate(MEMORY_COMPONENT, MEMORY_MIGRATIONS.slice(0, 5));
  old.db
    .prepare(
      "INSERT INTO context_events (id, timestamp, source, channel, peer, branch, input, response, tools_used, tool_results, media_refs) VALUES ('e1', 1, 'cli', 'cli', 'Anna', 'main', 'the key is under the pot', '', '[]', '[]', '[]')",
    )
    .run();
  t.equal(old.schemaVersion(MEMORY_COMPONENT), 5);
  old.close();

  const { managed, db } = openTestMemoryDb(t, dir, clock);
  t.equal(managed.schemaVersion(MEMORY_COMPONENT), 6);
  t.equal((db.prepare("SELECT input FROM context_events WHERE id = 'e1'").get() as { input: string }).input, 'the key is under the pot');
  for (const table of ['scenes', 'scene_sightings', 'scene_refs']) {
    t.ok(db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table), table);
  }
});

// The kb.* control methods (src/knowledge/knowledge-methods.ts) on a real ControlRegistry and a real
// KnowledgeService; audit records captured from a real LogManager.
import { mkdirSync, realpathSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { type KbGetResult, type KbMediaResult, registerKnowledgeMethods } from '../../../src/knowledge/knowledge-methods.js';
import { ControlRegistry } from '../../../src/plugin/control-registry.js';
import { MediaStore } from '../../../src/store/media-store.js';
import { captureLogs, expectErrorAsync, tempDir } from '../fixtures/support.js';
import { type KnowledgeSetup, openKnowledge } from './fixtures/knowledge-fixture.js';
import { SAMPLES } from './fixtures/media-samples.js';

interface Setup extends KnowledgeSetup {
  control: ControlRegistry;
  call(method: string, params?: unknown, actor?: string): Promise<unknown>;
  audits(): Array<Record<string, unknown>>;
}

async function setup(t: Test, settings: Partial<KnowledgeSetup['settings']> = {}): Promise<Setup> {
  const k = await openKnowledge(t, { settings });
  const captured = captureLogs();
  const control = new ControlRegistry();
  let ms = 1000;
  registerKnowledgeMethods(control, k.kb, {
    logs: captured.logs,
    now: () => (ms += 250),
    media: new MediaStore({ dir: join(k.dataDir, 'media'), maxBytes: () => 1 << 20 }),
  });
  return {
    ...k,
    control,
    call: (method, params = {}, actor = 'tester') => control.call(method, params, { actor }),
    audits: () =>
      captured
        .records()
        .filter((r) => r.audit === true)
        .map(({ actor, action, ...rest }) => ({
          actor,
          action,
          ...Object.fromEntries(
            Object.entries(rest).filter(([k]) => !['level', 'time', 'pid', 'hostname', 'msg', 'audit', 'subsystem'].includes(k)),
          ),
        })),
  };
}

t.test('the methods are registered with descriptions', async (t) => {
  const s = await setup(t);
  t.same(
    s.control.methods().map((m) => m.name),
    ['kb.add', 'kb.get', 'kb.import', 'kb.media', 'kb.reindex', 'kb.rm', 'kb.search', 'kb.stats', 'kb.tree'],
  );
  t.ok(s.control.methods().every((m) => m.description.length > 20));
});

t.test('kb.add writes, refuses to replace without overwrite, replaces with it; each change audited', async (t) => {
  const s = await setup(t);
  t.same(await s.call('kb.add', { name: 'Recipes/Soup/Tomato Soup', content: '# Tomato soup\nSimmer for twenty minutes.\n' }, 'cli'), {
    name: 'recipes/soup/tomato_soup',
    category: 'recipes/soup',
    replaced: false,
    bytes: 41,
    media: 0,
  });
  t.equal(s.kb.get('recipes/soup/tomato_soup')?.content, '# Tomato soup\nSimmer for twenty minutes.\n', 'stored as sent');
  await expectErrorAsync(t, () => s.call('kb.add', { name: 'recipes/soup/tomato_soup', content: 'other' }), 'HA_ERR_KNOWLEDGE_EXISTS');
  t.match(await s.call('kb.add', { name: 'recipes/soup/tomato_soup', content: 'Simmer for half an hour.', overwrite: true }, 'cli'), {
    replaced: true,
    bytes: 24,
  });
  t.equal(s.kb.get('recipes/soup/tomato_soup')?.content, 'Simmer for half an hour.');

  await expectErrorAsync(t, () => s.call('kb.add', { name: '../escape', content: 'x' }), 'HA_ERR_KNOWLEDGE_NAME');
  await expectErrorAsync(t, () => s.call('kb.add', { name: 'notes/blank', content: '  \n' }), 'HA_ERR_RPC_INVALID_PARAMS');
  await expectErrorAsync(t, () => s.call('kb.add', { name: 'notes/x' }), 'HA_ERR_RPC_INVALID_PARAMS');
  t.same(s.audits(), [
    { actor: 'cli', action: 'kb.add', name: 'recipes/soup/tomato_soup', replaced: false, bytes: 41 },
    { actor: 'cli', action: 'kb.add', name: 'recipes/soup/tomato_soup', replaced: true, bytes: 24 },
  ]);
});

t.test('kb.add applies core.knowledge.max_entry_kb', async (t) => {
  const s = await setup(t, { max_entry_kb: 1 });
  await expectErrorAsync(t, () => s.call('kb.add', { name: 'notes/big', content: 'x'.repeat(1025) }), 'HA_ERR_KNOWLEDGE_TOO_LARGE');
  t.same(s.audits(), []);
});

t.test('kb.search: hits with scores and snippets, category, limit bounds', async (t) => {
  const s = await setup(t);
  for (let i = 0; i < 12; i++) await s.kb.create(`garden/plant_${i}`, `Water plant ${i} twice a week in summer.`);
  await s.kb.create('recipes/bread', 'Bread: flour, water, salt and yeast. Knead ten minutes.');
  await s.kb.create('菜谱/番茄汤', '番茄汤：番茄切块，加水煮二十分钟。');

  const bread = (await s.call('kb.search', { q: ' knead bread yeast ' })) as {
    query: string;
    category: null;
    hits: Array<Record<string, unknown>>;
  };
  t.equal(bread.query, 'knead bread yeast');
  t.equal(bread.category, null);
  t.match(bread.hits[0], { name: 'recipes/bread', category: 'recipes', snippet: /[Kk]nead/ });
  t.type(bread.hits[0]?.score, 'number');
  const water = (await s.call('kb.search', { q: 'water plant summer' })) as { hits: unknown[] };
  t.equal(water.hits.length, 10, 'default limit 10');
  const zh = (await s.call('kb.search', { q: '番茄汤', limit: 1 })) as { hits: Array<{ name: string }> };
  t.same(
    zh.hits.map((h) => h.name),
    ['菜谱/番茄汤'],
  );
  const garden = (await s.call('kb.search', { q: 'bread water', category: 'garden', limit: 100 })) as {
    category: string;
    hits: Array<{ category: string }>;
  };
  t.equal(garden.category, 'garden');
  t.equal(garden.hits.length, 12);
  t.ok(garden.hits.every((h) => h.category === 'garden'));

  for (const limit of [0, 101, 2.5]) await expectErrorAsync(t, () => s.call('kb.search', { q: 'x', limit }), 'HA_ERR_RPC_INVALID_PARAMS');
  await expectErrorAsync(t, () => s.call('kb.search', { q: '  ' }), 'HA_ERR_RPC_INVALID_PARAMS');
  const unknown = await expectErrorAsync(t, () => s.call('kb.search', { q: 'x', category: 'cars' }), 'HA_ERR_KNOWLEDGE_NOT_FOUND');
  t.match(unknown.message, /garden, recipes, 菜谱/);
});

t.test('kb.tree: depth, items and preview reach the tree', async (t) => {
  const s = await setup(t);
  await s.kb.create('tech/go/generics', 'Go generics use type parameters in square brackets.');
  await s.kb.create('tech/go/channels', 'Channels connect goroutines.');
  await s.kb.create('tech/rust', 'Rust has ownership.');
  const full = (await s.call('kb.tree')) as {
    total_count: number;
    children: Array<{ path: string; children: unknown[] }>;
    items?: unknown;
  };
  t.equal(full.total_count, 3);
  t.equal(full.items, undefined);
  t.equal(full.children[0]?.children.length, 1, 'unlimited depth by default');
  const shallow = (await s.call('kb.tree', { depth: 1 })) as { children: Array<{ children: unknown[]; total_count: number }> };
  t.same(shallow.children[0]?.children, []);
  t.equal(shallow.children[0]?.total_count, 3);
  const go = await s.call('kb.tree', { category: 'tech/go', items: true, preview: 5 });
  t.match(go, {
    name: 'go',
    path: 'tech/go',
    item_count: 2,
    items: [
      { name: 'channels', path: 'tech/go/channels', preview: /^Chan/ },
      { name: 'generics', path: 'tech/go/generics', preview: /^Go g/ },
    ],
  });
  await expectErrorAsync(t, () => s.call('kb.tree', { category: 'cars' }), 'HA_ERR_KNOWLEDGE_NOT_FOUND');
  await expectErrorAsync(t, () => s.call('kb.tree', { depth: -1 }), 'HA_ERR_RPC_INVALID_PARAMS');
});

t.test('kb.rm deletes an entry, audited; an unknown name is an error', async (t) => {
  const s = await setup(t);
  await s.kb.create('garden/roses', 'Prune in March.');
  t.same(await s.call('kb.rm', { name: 'Garden/Roses' }, 'cli'), { name: 'garden/roses', removed: true, media: 0 });
  t.equal(s.kb.get('garden/roses'), undefined);
  await expectErrorAsync(t, () => s.call('kb.rm', { name: 'garden/roses' }), 'HA_ERR_KNOWLEDGE_NOT_FOUND');
  await expectErrorAsync(t, () => s.call('kb.rm', { name: '../x' }), 'HA_ERR_KNOWLEDGE_NAME');
  t.same(s.audits(), [{ actor: 'cli', action: 'kb.rm', name: 'garden/roses', bytes: 15 }]);
});

t.test('kb.import reads an absolute folder, reports skips, and audits the real folder read', async (t) => {
  const s = await setup(t);
  const source = tempDir(t);
  mkdirSync(join(source, 'kitchen'));
  writeFileSync(join(source, 'dryer.txt'), 'Clean the lint filter.');
  writeFileSync(join(source, 'kitchen', 'oven.md'), 'Pyrolytic cleaning takes two hours.');
  writeFileSync(join(source, 'photo.jpg'), 'not text');
  const link = join(tempDir(t), 'via-link');
  symlinkSync(source, link);

  const result = (await s.call('kb.import', { dir: link, category: 'manuals' }, 'cli')) as Record<string, unknown>;
  t.match(result, {
    dir: source,
    category: 'manuals',
    imported: ['manuals/dryer', 'manuals/kitchen/oven'],
    skipped: [{ file: 'photo.jpg', reason: /not a markdown or text file/ }],
    ms: 250,
  });
  t.equal(s.kb.get('manuals/kitchen/oven')?.content, 'Pyrolytic cleaning takes two hours.');
  t.same(s.audits(), [{ actor: 'cli', action: 'kb.import', dir: source, category: 'manuals', imported: 2, skipped: 1 }]);

  await expectErrorAsync(t, () => s.call('kb.import', { dir: 'relative/dir' }), 'HA_ERR_RPC_INVALID_PARAMS');
  await expectErrorAsync(t, () => s.call('kb.import', { dir: join(source, 'missing') }), 'HA_ERR_RPC_INVALID_PARAMS');
  await expectErrorAsync(t, () => s.call('kb.import', { dir: '/tmp/a\u0000b' }), 'HA_ERR_RPC_INVALID_PARAMS');
  await expectErrorAsync(t, () => s.call('kb.import', { dir: join(source, 'dryer.txt') }), 'HA_ERR_KNOWLEDGE_NOT_FOUND');
  const itself = await expectErrorAsync(t, () => s.call('kb.import', { dir: s.dataDir }), 'HA_ERR_KNOWLEDGE_NAME');
  t.match(itself.message, /overlaps the knowledge directory/);
  t.match(
    s.audits().slice(1),
    [
      { actor: 'tester', action: 'kb.import', dir: join(source, 'dryer.txt'), error: /not a readable directory/ },
      { actor: 'tester', action: 'kb.import', error: /overlaps the knowledge directory/ },
    ],
    'what the service refused after looking is audited with the error; malformed requests are not',
  );
  t.equal(s.audits().length, 3);
});

t.test('kb.reindex picks up edits on disk; kb.stats counts', async (t) => {
  const s = await setup(t);
  await s.kb.create('house/wifi', 'SSID home');
  mkdirSync(join(s.root, 'house', 'alarm'));
  writeFileSync(join(s.root, 'house', 'alarm', 'content.md'), 'Alarm code is on the fridge.');
  writeFileSync(join(s.root, 'house', 'wifi', 'content.md'), 'SSID garden');
  const summary = await s.call('kb.reindex', {}, 'cli');
  t.match(summary, { indexed: 2, removed: 0 });
  t.equal(((await s.call('kb.search', { q: 'alarm code fridge' })) as { hits: Array<{ name: string }> }).hits[0]?.name, 'house/alarm');
  t.match(s.audits(), [{ actor: 'cli', action: 'kb.reindex', indexed: 2, removed: 0 }]);
  t.match(await s.call('kb.stats'), {
    entries: 2,
    categories: 1,
    media: { files: 0, bytes: 0 },
    index: { state: 'ready', indexed: 2 },
    dense: { enabled: true, ready: true, total: 2 },
  });
});

t.test('a stopped knowledge base answers HA_ERR_KNOWLEDGE_UNAVAILABLE', async (t) => {
  const s = await setup(t);
  await s.kb.stop();
  for (const [method, params] of [
    ['kb.stats', {}],
    ['kb.tree', {}],
    ['kb.search', { q: 'x' }],
    ['kb.add', { name: 'a/b', content: 'c' }],
    ['kb.get', { name: 'a/b' }],
  ] as const) {
    await expectErrorAsync(t, () => s.call(method, params), 'HA_ERR_KNOWLEDGE_UNAVAILABLE');
  }
});

t.test('kb.get answers the entry with its attachments named as kb.media takes them', async (t) => {
  const s = await setup(t);
  await s.kb.create('Pets/Cat', '# Mimi\nA grey cat.', {
    media: [
      { file_name: 'mimi.png', data: SAMPLES.png },
      { file_name: 'purr.mp3', data: SAMPLES.mp3id3 },
    ],
  });
  const entry = (await s.call('kb.get', { name: 'pets/cat' })) as KbGetResult;
  const png = s.kb.get('pets/cat')?.media[0];
  t.match(entry, { name: 'pets/cat', category: 'pets', content: '# Mimi\nA grey cat.', updated_at: /^\d{4}-\d\d-\d\dT/ });
  t.same(entry.media, [
    { file: `${png?.digest}.png`, name: 'mimi.png', type: 'image/png', bytes: SAMPLES.png.byteLength },
    { file: `${s.kb.get('pets/cat')?.media[1]?.digest}.mp3`, name: 'purr.mp3', type: 'audio/mpeg', bytes: SAMPLES.mp3id3.byteLength },
  ]);
  t.match(await s.call('kb.get', { name: 'PETS/cat' }), { name: 'pets/cat' }, 'names are sanitised as everywhere');

  const missing = await expectErrorAsync(t, () => s.call('kb.get', { name: 'pets/dog' }), 'HA_ERR_KNOWLEDGE_NOT_FOUND');
  t.match(missing.message, /"pets\/dog"/);
  await expectErrorAsync(t, () => s.call('kb.get', { name: '../etc/passwd' }), 'HA_ERR_KNOWLEDGE_NAME');
  await expectErrorAsync(t, () => s.call('kb.get', {}), 'HA_ERR_RPC_INVALID_PARAMS');
  t.same(s.audits(), [], 'reading is not audited');
});

t.test('kb.media locates a file inside the media store; paths and links out are refused', async (t) => {
  const s = await setup(t);
  await s.kb.create('pets/cat', 'A grey cat.', { media: [{ file_name: 'mimi.webp', data: SAMPLES.webp }] });
  const [ref] = ((await s.call('kb.get', { name: 'pets/cat' })) as KbGetResult).media;
  const file = ref?.file as string;
  const digest = file.slice(0, 64);
  const located = (await s.call('kb.media', { file })) as KbMediaResult;
  const store = realpathSync(join(s.dataDir, 'media'));
  t.same(located, { path: join(store, 'sha256', digest.slice(0, 2), digest), type: 'image/webp', bytes: SAMPLES.webp.byteLength });
  t.same(await s.call('kb.media', { file: digest }), located, 'the bare digest works too');

  for (const bad of [
    '../knowledge.db',
    `${digest}/../../knowledge.db`,
    `sha256/${digest.slice(0, 2)}/${digest}`,
    '/etc/passwd',
    digest.toUpperCase(),
    `${digest}.png\u0000`,
  ]) {
    const error = await expectErrorAsync(t, () => s.call('kb.media', { file: bad }), 'HA_ERR_RPC_INVALID_PARAMS');
    t.match(error.message, /never a path/, `${JSON.stringify(bad).slice(0, 30)} refused`);
  }
  const other = 'a'.repeat(64);
  const absent = await expectErrorAsync(t, () => s.call('kb.media', { file: `${other}.png` }), 'HA_ERR_KNOWLEDGE_NOT_FOUND');
  t.match(absent.message, other);

  // A link planted in the store that leads out of it is never answered.
  const outside = join(tempDir(t), 'secret.png');
  writeFileSync(outside, SAMPLES.png);
  mkdirSync(join(s.dataDir, 'media', 'sha256', 'aa'), { recursive: true });
  symlinkSync(outside, join(s.dataDir, 'media', 'sha256', 'aa', other));
  const escaped = await expectErrorAsync(t, () => s.call('kb.media', { file: `${other}.png` }), 'HA_ERR_FILES_DENIED');
  t.match(escaped.message, /outside the media store/);
  unlinkSync(join(s.dataDir, 'media', 'sha256', 'aa', other));
  mkdirSync(join(s.dataDir, 'media', 'sha256', 'aa', other));
  await expectErrorAsync(t, () => s.call('kb.media', { file: other }), 'HA_ERR_KNOWLEDGE_NOT_FOUND');
  rmSync(join(s.dataDir, 'media', 'sha256', 'aa'), { recursive: true });

  // Bytes of no known type (damaged, or written by hand) are named so the server offers a download.
  writeFileSync(located.path, 'not an image any more');
  t.match(await s.call('kb.media', { file }), { type: 'application/octet-stream', bytes: 21 });
});

t.test('kb.media without a media store is unavailable', async (t) => {
  const k = await openKnowledge(t);
  const control = new ControlRegistry();
  registerKnowledgeMethods(control, k.kb, { logs: captureLogs().logs });
  await expectErrorAsync(t, () => control.call('kb.media', { file: 'a'.repeat(64) }, { actor: 'tester' }), 'HA_ERR_UNAVAILABLE');
});

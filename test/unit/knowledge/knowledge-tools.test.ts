// The knowledge tools (src/knowledge/knowledge-tools.ts) on a real KnowledgeService: real files,
// knowledge.db, jieba analyzer and hash embedder; attach and import read real files from a real
// hand-over folder, with symlinks and paths leading out of it.
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { ToolRegistry } from '../../../src/agent/tool-registry.js';
import {
  IMPORT_LISTED,
  knowledgeTools,
  LIST_ENTRIES,
  READ_PAGE_CHARS,
  REPLACEABLE_CHARS,
  TOP_HIT_CHARS,
} from '../../../src/knowledge/knowledge-tools.js';
import { type ToolContext, type ToolDefinition, ToolError, type ToolErrorReason } from '../../../src/shared/tool.js';
import { silentLogs, tempDir } from '../fixtures/support.js';
import { type KnowledgeSetup, openKnowledge } from './fixtures/knowledge-fixture.js';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 1, 2, 3, 4]);

interface Setup extends KnowledgeSetup {
  inbox: string;
  tools: Map<string, ToolDefinition>;
  call(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>>;
}

async function setup(t: Test, options: { inbox?: boolean; settings?: Partial<KnowledgeSetup['settings']> } = {}): Promise<Setup> {
  const k = await openKnowledge(t, options.settings === undefined ? {} : { settings: options.settings });
  const inbox = join(k.dataDir, 'inbox');
  if (options.inbox !== false) mkdirSync(inbox);
  const list = knowledgeTools(k.kb, { settings: () => k.settings, sourceRoots: () => [inbox] });
  const tools = new Map(list.map((d) => [d.name, d]));
  return {
    ...k,
    inbox,
    tools,
    async call(name, args) {
      const tool = tools.get(name);
      if (!tool) throw new Error(`no tool ${name}`);
      const context: ToolContext = {
        signal: new AbortController().signal,
        task_id: 't1',
        call_id: 'c1',
        source: 'chat',
        channel: 'family',
        trust: 'owner',
      };
      return (await tool.execute(args, context)) as Record<string, unknown>;
    },
  };
}

/** The call fails with a ToolError of this reason (and field, when given), carrying a hint. */
async function fails(t: Test, run: Promise<unknown>, reason: ToolErrorReason, field?: string): Promise<ToolError | undefined> {
  try {
    await run;
    t.fail(`expected ${reason}${field ? ` on ${field}` : ''}`);
    return undefined;
  } catch (error) {
    if (!(error instanceof ToolError)) {
      t.fail(`a ToolError, got ${String(error)}`);
      return undefined;
    }
    t.same({ reason: error.info.reason, field: error.info.field }, { reason, field }, `${reason}${field ? ` on ${field}` : ''}`);
    t.ok((error.info.hint ?? '').length > 0, 'with a hint');
    return error;
  }
}

t.test('every definition passes a real ToolRegistry; tiers as designed', async (t) => {
  const s = await setup(t);
  const registry = new ToolRegistry({ log: silentLogs().child('agent') });
  for (const definition of s.tools.values()) registry.register(definition);
  t.same(
    [...s.tools.values()].map((d) => [d.name, d.tier, d.owner]),
    [
      ['knowledge_search', 'read', 'knowledge'],
      ['knowledge_list', 'read', 'knowledge'],
      ['knowledge_read', 'read', 'knowledge'],
      ['knowledge_create', 'act', 'knowledge'],
      ['knowledge_attach', 'act', 'knowledge'],
      ['knowledge_delete', 'dangerous', 'knowledge'],
      ['knowledge_import_dir', 'act', 'knowledge'],
    ],
  );
  t.same(
    [...s.tools.values()].filter((d) => d.no_memory).map((d) => d.name),
    ['knowledge_search', 'knowledge_list', 'knowledge_read'],
    'what the library already holds stays out of memory',
  );
  const search = s.tools.get('knowledge_search') as ToolDefinition;
  t.equal(registry.validate(search, JSON.stringify({ query: 'x', top_k: 21 })).ok, false, 'the schema bounds top_k');
  const del = s.tools.get('knowledge_delete') as ToolDefinition;
  t.equal(registry.validate(del, JSON.stringify({ name: 'a', extra: 1 })).ok, false, 'no unknown arguments');
  t.equal(registry.validate(del, JSON.stringify({ name: 'a/b' })).ok, true);
});

t.test('knowledge_create then knowledge_search: hits with snippets, the best one with its text', async (t) => {
  const s = await setup(t);
  const created = await s.call('knowledge_create', {
    name: 'Appliances/Kitchen/Coffee Machine',
    content: '# Coffee machine\n\nDescale every two months with citric acid: fill the tank, run two cups, rinse.',
  });
  t.same(created, { name: 'appliances/kitchen/coffee_machine', category: 'appliances/kitchen', created: true });
  await s.call('knowledge_create', { name: '菜谱/番茄汤', content: '番茄汤：番茄切块，加水煮二十分钟，放盐。' });
  await s.call('knowledge_create', { name: 'garden/roses', content: 'Water the roses in the morning and prune them in March.' });

  const found = await s.call('knowledge_search', { query: 'descale coffee machine citric acid' });
  const hits = found.hits as Array<Record<string, unknown>>;
  t.equal(hits[0]?.name, 'appliances/kitchen/coffee_machine');
  t.match(hits[0], { category: 'appliances/kitchen', snippet: /[Dd]escale/, content: /citric acid: fill the tank/ });
  t.type(hits[0]?.score, 'number');
  t.ok(
    hits.slice(1).every((h) => h.content === undefined),
    'only the best hit carries its text',
  );

  const zh = (await s.call('knowledge_search', { query: '番茄汤怎么做', top_k: 1 })).hits as Array<Record<string, unknown>>;
  t.equal(zh.length, 1, 'top_k is applied');
  t.equal(zh[0]?.name, '菜谱/番茄汤');

  const inGarden = (await s.call('knowledge_search', { query: 'coffee roses', category: 'garden' })).hits as Array<{ name: string }>;
  t.same(
    inGarden.map((h) => h.name),
    ['garden/roses'],
    'the category limits the hits',
  );

  const unknown = await fails(t, s.call('knowledge_search', { query: 'x', category: 'cars' }), 'not_found', 'category');
  t.match(unknown?.info.detail, /HA_ERR_KNOWLEDGE_NOT_FOUND.*appliances, garden/);
  await fails(t, s.call('knowledge_search', { query: '   ' }), 'required', 'query');
  await fails(t, s.call('knowledge_search', { query: 'x', top_k: 0 }), 'range', 'top_k');

  s.settings.top_k = 1;
  t.equal(
    ((await s.call('knowledge_search', { query: 'roses coffee tomato' })).hits as unknown[]).length,
    1,
    'the default follows core.knowledge.top_k',
  );
});

t.test('an empty library answers no_record', async (t) => {
  const s = await setup(t);
  t.same(await s.call('knowledge_search', { query: 'saxophone' }), {
    hits: [],
    no_record: true,
    hint: 'nothing in the knowledge base matches; try other words, or knowledge_list to browse the categories',
  });
});

t.test('a long best hit is cut and says how long it is', async (t) => {
  const s = await setup(t);
  const long = `Boiler manual. ${'Bleed the radiators before the heating season. '.repeat(100)}`;
  await s.call('knowledge_create', { name: 'house/boiler', content: long });
  const [hit] = (await s.call('knowledge_search', { query: 'bleed radiators boiler' })).hits as Array<{
    content: string;
    total_chars: number;
  }>;
  t.equal(hit?.content.length, TOP_HIT_CHARS);
  t.equal(hit?.total_chars, long.length);
});

t.test('knowledge_create refuses to replace silently, replaces with overwrite and gives the old text back', async (t) => {
  const s = await setup(t);
  await s.call('knowledge_create', { name: 'house/wifi', content: 'SSID home, password apple-tree' });
  const refused = await fails(t, s.call('knowledge_create', { name: 'House/WiFi', content: 'new' }), 'rejected', 'name');
  t.match(refused?.info.hint, /overwrite: true/);
  t.equal(s.kb.get('house/wifi')?.content, 'SSID home, password apple-tree', 'untouched');

  const create = s.tools.get('knowledge_create') as ToolDefinition;
  const replaced = await s.call('knowledge_create', { name: 'house/wifi', content: 'SSID home, password pear-tree', overwrite: true });
  t.same(replaced, { name: 'house/wifi', category: 'house', replaced: true, previous_content: 'SSID home, password apple-tree' });
  t.equal(s.kb.get('house/wifi')?.content, 'SSID home, password pear-tree');
  const searched = (await s.call('knowledge_search', { query: 'apple-tree' })).hits as Array<{ name: string }>;
  t.notOk(
    searched.some((h) => h.name === 'house/wifi' && (h as { snippet?: string }).snippet?.includes('apple')),
    'the old words are out of the index',
  );
  t.same(
    JSON.parse(create.cleaner?.(JSON.stringify(replaced)) ?? '{}'),
    { name: 'house/wifi', category: 'house', replaced: true },
    'memory does not keep the replaced text',
  );
  t.equal(create.cleaner?.('not json'), 'not json');

  const manual = 'x'.repeat(REPLACEABLE_CHARS + 1);
  await s.kb.create('appliances/oven', manual);
  const big = await fails(
    t,
    s.call('knowledge_create', { name: 'appliances/oven', content: 'short', overwrite: true }),
    'rejected',
    'overwrite',
  );
  t.match(big?.info.hint, /homeagentctl kb add appliances\/oven --overwrite/);
  t.equal(s.kb.get('appliances/oven')?.content, manual, 'a long entry is not replaced by the model');
});

t.test('knowledge_create: bad names and oversized content are refused with the field named', async (t) => {
  const s = await setup(t, { settings: { max_entry_kb: 1 } });
  for (const name of ['../etc/passwd', 'a/../b', '/abs/path', 'bad\u0000name', 'a//b']) {
    const error = await fails(t, s.call('knowledge_create', { name, content: 'x' }), 'format', 'name');
    t.match(error?.info.detail, /HA_ERR_KNOWLEDGE_NAME/, name);
  }
  await fails(t, s.call('knowledge_create', { name: 'notes/big', content: 'é'.repeat(600) }), 'range', 'content');
  await fails(t, s.call('knowledge_create', { name: 'notes/empty', content: ' \n ' }), 'required', 'content');
  t.same(s.kb.list(), [], 'nothing was written');
});

t.test('knowledge_list: categories with counts below a category, entries in it with previews, capped', async (t) => {
  const s = await setup(t);
  for (let i = 0; i < LIST_ENTRIES + 5; i++) await s.kb.create(`recipes/r${String(i).padStart(3, '0')}`, `Recipe number ${i}.`);
  await s.kb.create('recipes/soup/tomato', 'Tomato soup with basil.');
  await s.kb.create('recipes/soup/thai/tom_yum', 'Tom yum with lemongrass.');
  await s.kb.create('tech/go', 'Go notes.');
  await s.kb.create('readme', 'What this library is for.');

  const top = await s.call('knowledge_list', {});
  t.match(top, {
    category: '',
    total_entries: LIST_ENTRIES + 9,
    categories: [
      { path: 'recipes', entries: LIST_ENTRIES + 7 },
      { path: 'recipes/soup', entries: 2 },
      { path: 'tech', entries: 1 },
    ],
    entries: [{ name: 'readme', preview: 'What this library is for.' }],
  });
  t.notOk(
    (top.categories as Array<{ path: string }>).some((c) => c.path === 'recipes/soup/thai'),
    'depth 2 by default',
  );
  const deep = await s.call('knowledge_list', { depth: 3 });
  t.ok((deep.categories as Array<{ path: string }>).some((c) => c.path === 'recipes/soup/thai'));

  const recipes = await s.call('knowledge_list', { category: 'recipes' });
  t.equal((recipes.entries as unknown[]).length, LIST_ENTRIES);
  t.equal(recipes.more_entries, 5);
  t.match(recipes.hint, /knowledge_search/);
  t.match((recipes.entries as Array<{ name: string }>)[0], { name: 'recipes/r000', preview: 'Recipe number 0.' });

  await fails(t, s.call('knowledge_list', { category: 'cars' }), 'not_found', 'category');
});

t.test('knowledge_read pages through a long entry and lists attachments', async (t) => {
  const s = await setup(t);
  const text = Array.from({ length: 1500 }, (_, i) => `line ${i}`).join('\n');
  await s.kb.create('house/manual', text);
  await s.kb.attach('house/manual', { file_name: 'panel.png', data: PNG });
  const first = await s.call('knowledge_read', { name: 'House/Manual' });
  t.match(first, { name: 'house/manual', category: 'house', total_chars: text.length, next_offset: READ_PAGE_CHARS });
  t.same(first.media, [{ file_name: 'panel.png', kind: 'image', mime: 'image/png', bytes: PNG.length }]);
  let read = first.content as string;
  let offset = first.next_offset as number | undefined;
  while (offset !== undefined) {
    const page = await s.call('knowledge_read', { name: 'house/manual', offset });
    read += page.content as string;
    offset = page.next_offset as number | undefined;
  }
  t.equal(read, text, 'the pages put together are the whole entry');
  await fails(t, s.call('knowledge_read', { name: 'house/nothing' }), 'not_found', 'name');
});

t.test('knowledge_attach reads only files inside the hand-over folder', async (t) => {
  const s = await setup(t, { settings: { max_media_mb: 1 } });
  await s.kb.create('house/fuse_box', 'The fuse box is behind the coat rack.');
  writeFileSync(join(s.inbox, 'fuses.png'), PNG);
  mkdirSync(join(s.inbox, 'photos'));
  writeFileSync(join(s.inbox, 'photos', 'again.png'), PNG);

  const attached = await s.call('knowledge_attach', { name: 'house/fuse_box', path: 'fuses.png' });
  t.match(attached, {
    attached: true,
    name: 'house/fuse_box',
    media: { file_name: 'fuses.png', kind: 'image', mime: 'image/png', bytes: PNG.length },
  });
  t.match((attached.media as { digest: string }).digest, /^[0-9a-f]{64}$/);
  await s.call('knowledge_attach', { name: 'house/fuse_box', path: join(s.inbox, 'photos', 'again.png') });
  t.equal(s.kb.get('house/fuse_box')?.media.length, 1, 'the same bytes are attached once');

  const outside = tempDir(t);
  writeFileSync(join(outside, 'secret.png'), PNG);
  symlinkSync(join(outside, 'secret.png'), join(s.inbox, 'link.png'));
  symlinkSync(outside, join(s.inbox, 'linkdir'));
  const cases: Array<[string, ToolErrorReason, RegExp]> = [
    [join(outside, 'secret.png'), 'rejected', /outside the folders/],
    ['../knowledge/house/fuse_box/content.md', 'rejected', /contains "\.\."/],
    ['link.png', 'rejected', /it leads to .*secret\.png/],
    ['linkdir/secret.png', 'rejected', /outside the folders/],
    ['bad\u0001.png', 'rejected', /control characters/],
    ['missing.png', 'not_found', /does not exist/],
    ['photos', 'type', /not a file/],
  ];
  for (const [path, reason, detail] of cases) {
    const error = await fails(t, s.call('knowledge_attach', { name: 'house/fuse_box', path }), reason, 'path');
    t.match(error?.info.detail, detail, JSON.stringify(path));
  }
  t.equal(s.kb.get('house/fuse_box')?.media.length, 1, 'nothing from outside was attached');

  writeFileSync(join(s.inbox, 'notes.txt'), 'just text');
  const type = await fails(t, s.call('knowledge_attach', { name: 'house/fuse_box', path: 'notes.txt' }), 'rejected', 'path');
  t.match(type?.info.detail, /HA_ERR_MEDIA_TYPE/);
  t.match(type?.info.hint, /images .* audio/);
  writeFileSync(join(s.inbox, 'huge.png'), Buffer.concat([PNG, Buffer.alloc(1024 * 1024)]));
  await fails(t, s.call('knowledge_attach', { name: 'house/fuse_box', path: 'huge.png' }), 'range', 'path');
  await fails(t, s.call('knowledge_attach', { name: 'house/nothing', path: 'fuses.png' }), 'not_found', 'name');
});

t.test('without a hand-over folder attach and import say who has to create it', async (t) => {
  const s = await setup(t, { inbox: false });
  await s.kb.create('house/fuse_box', 'Behind the coat rack.');
  const error = await fails(t, s.call('knowledge_attach', { name: 'house/fuse_box', path: 'a.png' }), 'not_found', 'path');
  t.match(error?.info.hint, /no hand-over folder exists yet: the owner creates .*inbox/);
  const none = knowledgeTools(s.kb, { settings: () => s.settings, sourceRoots: () => [] });
  const importer = none.find((d) => d.name === 'knowledge_import_dir') as ToolDefinition;
  const context: ToolContext = {
    signal: new AbortController().signal,
    task_id: 't',
    call_id: 'c',
    source: 's',
    channel: 'c',
    trust: 'owner',
  };
  await fails(
    t,
    Promise.resolve().then(() => importer.execute({ dir: '/tmp' }, context)),
    'unavailable',
  );
});

t.test('knowledge_delete removes the entry and gives its text back', async (t) => {
  const s = await setup(t);
  await s.kb.create('garden/roses', 'Prune the roses in March.');
  await s.kb.attach('garden/roses', { file_name: 'roses.png', data: PNG });
  const deleted = await s.call('knowledge_delete', { name: 'Garden/Roses' });
  t.same(deleted, {
    deleted: true,
    name: 'garden/roses',
    total_chars: 25,
    content: 'Prune the roses in March.',
    media_removed: ['roses.png'],
  });
  t.equal(s.kb.get('garden/roses'), undefined);
  t.notOk(existsSync(join(s.root, 'garden', 'roses', 'content.md')));
  t.same(((await s.call('knowledge_search', { query: 'prune roses' })).hits as unknown[]).length, 0, 'the index forgot it');
  await fails(t, s.call('knowledge_delete', { name: 'garden/roses' }), 'not_found', 'name');
});

t.test('knowledge_import_dir imports a folder in the hand-over folder and explains what it skipped', async (t) => {
  const s = await setup(t);
  await s.kb.create('manuals/washer', 'Existing washer notes.');
  const dir = join(s.inbox, 'manuals');
  mkdirSync(join(dir, 'kitchen'), { recursive: true });
  writeFileSync(join(dir, 'washer.md'), '# Washer\nNew text that must not replace the old entry.');
  writeFileSync(join(dir, 'dryer.txt'), 'Clean the lint filter after every load.');
  writeFileSync(join(dir, 'kitchen', 'oven.md'), 'Oven: pyrolytic cleaning takes two hours.');
  writeFileSync(join(dir, 'scan.pdf'), '%PDF-1.4');
  const outside = tempDir(t);
  writeFileSync(join(outside, 'secret.md'), 'secret');
  symlinkSync(join(outside, 'secret.md'), join(dir, 'linked.md'));

  const result = await s.call('knowledge_import_dir', { dir: 'manuals', category: 'manuals' });
  t.match(result, { imported: 2, skipped: 3, names: ['manuals/dryer', 'manuals/kitchen/oven'] });
  const skipped = new Map((result.skipped_files as Array<{ file: string; reason: string }>).map((x) => [x.file, x.reason]));
  t.match(skipped.get('scan.pdf'), /not a markdown or text file/);
  t.match(skipped.get('linked.md'), /symbolic link/);
  t.match(skipped.get('washer.md'), /already exists/);
  t.equal(s.kb.get('manuals/washer')?.content, 'Existing washer notes.', 'an import never replaces an entry');
  t.equal(((await s.call('knowledge_search', { query: 'lint filter' })).hits as Array<{ name: string }>)[0]?.name, 'manuals/dryer');

  await fails(t, s.call('knowledge_import_dir', { dir: outside }), 'rejected', 'dir');
  await fails(t, s.call('knowledge_import_dir', { dir: 'manuals/dryer.txt' }), 'type', 'dir');
  await fails(t, s.call('knowledge_import_dir', { dir: '../knowledge' }), 'rejected', 'dir');
  await fails(t, s.call('knowledge_import_dir', { dir: 'manuals', category: '../x' }), 'format', 'category');
});

t.test('knowledge_import_dir lists a capped number of names, with complete counts', async (t) => {
  const s = await setup(t);
  const dir = join(s.inbox, 'many');
  mkdirSync(dir);
  for (let i = 0; i < IMPORT_LISTED + 10; i++) writeFileSync(join(dir, `n${String(i).padStart(3, '0')}.md`), `note ${i}`);
  const result = await s.call('knowledge_import_dir', { dir: 'many' });
  t.equal(result.imported, IMPORT_LISTED + 10);
  t.equal((result.names as unknown[]).length, IMPORT_LISTED);
  t.match(result.note, /counts are complete/);
});

t.test('a stopped knowledge base answers unavailable', async (t) => {
  const s = await setup(t);
  await s.kb.stop();
  for (const [name, args] of [
    ['knowledge_search', { query: 'x' }],
    ['knowledge_list', {}],
    ['knowledge_create', { name: 'a/b', content: 'c' }],
  ] as const) {
    const error = await fails(t, s.call(name, args), 'unavailable');
    t.match(error?.info.detail, /HA_ERR_KNOWLEDGE_UNAVAILABLE/, name);
  }
});

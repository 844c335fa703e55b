import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { HomeAgentError } from '../../../../src/shared/errors.js';
import { type ApiHarness, apiHarness, Type } from './api-harness.js';

const Name = Type.String({ minLength: 1, maxLength: 1000 });
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');

/** kb.* doubles over a map of entries and a media folder, with the params schemas of src/knowledge/knowledge-methods.ts. */
function fakeLibrary(h: ApiHarness, mediaDir: string) {
  const entries = new Map<string, string>([['recipes/soup/tomato_soup', 'Roast tomatoes, blend with stock.']]);
  const checkName = (name: string) => {
    if (name.split('/').some((part) => part === '..' || part === '')) {
      throw new HomeAgentError('HA_ERR_KNOWLEDGE_NAME', `the knowledge name ${JSON.stringify(name)} is not allowed`);
    }
  };
  h.method(
    'kb.tree',
    Type.Object({
      category: Type.Optional(Name),
      depth: Type.Optional(Type.Integer({ minimum: 0, maximum: 64 })),
      items: Type.Optional(Type.Boolean()),
      preview: Type.Optional(Type.Integer({ minimum: 1, maximum: 2000 })),
    }),
    () => ({
      name: '',
      path: '',
      total_count: entries.size,
      children: [],
    }),
  );
  h.method(
    'kb.search',
    Type.Object({
      q: Type.String({ minLength: 1, maxLength: 1000 }),
      category: Type.Optional(Name),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    }),
    ({ q, category }) => ({
      query: q,
      category: category ?? null,
      hits: [...entries.keys()].filter((n) => category === undefined || n.startsWith(`${category}/`)).map((name) => ({ name, score: 1 })),
    }),
  );
  h.method('kb.get', Type.Object({ name: Name }), ({ name }) => {
    checkName(name);
    const content = entries.get(name);
    if (content === undefined) throw new HomeAgentError('HA_ERR_KNOWLEDGE_NOT_FOUND', `no entry ${name}`);
    return { name, category: name.split('/').slice(0, -1).join('/'), content, media: [] };
  });
  h.method(
    'kb.add',
    Type.Object({ name: Name, content: Type.String({ minLength: 1 }), overwrite: Type.Optional(Type.Boolean()) }),
    ({ name, content, overwrite }) => {
      checkName(name);
      if (entries.has(name) && overwrite !== true) throw new HomeAgentError('HA_ERR_KNOWLEDGE_EXISTS', `${name} exists`);
      const replaced = entries.has(name);
      entries.set(name, content);
      return { name, replaced };
    },
  );
  h.method('kb.rm', Type.Object({ name: Name }), ({ name }) => {
    if (!entries.delete(name)) throw new HomeAgentError('HA_ERR_KNOWLEDGE_NOT_FOUND', `no entry ${name}`);
    return { name, removed: true };
  });
  h.method('kb.media', Type.Object({ file: Type.String({ minLength: 1, maxLength: 255 }) }), ({ file }) => {
    if (file.includes('/') || file.startsWith('.'))
      throw new HomeAgentError('HA_ERR_KNOWLEDGE_NAME', `media file ${JSON.stringify(file)} is not a plain name`);
    // As the media store: files named by their digest without an extension, the type read from the bytes.
    const path = join(mediaDir, file.replace(/\.[a-z0-9]+$/, ''));
    if (!existsSync(path)) throw new HomeAgentError('HA_ERR_KNOWLEDGE_NOT_FOUND', `the media store has no file ${file}`);
    return {
      path,
      type: readFileSync(path).subarray(0, 8).equals(PNG.subarray(0, 8)) ? 'image/png' : 'application/octet-stream',
      bytes: 0,
    };
  });
  return entries;
}

t.test('tree, search and entries by their path names', async (t) => {
  const h = await apiHarness(t);
  const entries = fakeLibrary(h, t.testdir());

  await h.request({ method: 'GET', url: '/api/v1/knowledge/tree?category=recipes&depth=2&items=true&preview=80' });
  t.same(h.calls.at(-1)?.params, { category: 'recipes', depth: 2, items: true, preview: 80 });
  t.match((await h.request({ method: 'GET', url: '/api/v1/knowledge/tree' })).json, { ok: true, result: { total_count: 1 } });

  const scoped = await h.request({ method: 'GET', url: '/api/v1/knowledge/search?q=soup&category=recipes&limit=3' });
  t.match(scoped.json, { ok: true, result: { category: 'recipes', hits: [{ name: 'recipes/soup/tomato_soup' }] } });
  t.same(h.calls.at(-1)?.params, { q: 'soup', category: 'recipes', limit: 3 });
  t.equal((await h.request({ method: 'GET', url: '/api/v1/knowledge/search' })).status, 400, 'q is required');

  const entry = await h.request({ method: 'GET', url: '/api/v1/knowledge/entries/recipes/soup/tomato_soup' });
  t.match(entry.json, { ok: true, result: { name: 'recipes/soup/tomato_soup', category: 'recipes/soup', content: /Roast/ } });
  const missing = await h.request({ method: 'GET', url: '/api/v1/knowledge/entries/recipes/cake' });
  t.equal(missing.status, 404);
  t.match(missing.json, { ok: false, error: { code: 'HA_ERR_KNOWLEDGE_NOT_FOUND' } });

  const created = await h.request({
    method: 'POST',
    url: '/api/v1/knowledge/entries',
    payload: { name: '菜谱/红烧肉', content: '五花肉切块' },
  });
  t.equal(created.status, 200);
  t.equal(entries.get('菜谱/红烧肉'), '五花肉切块');
  t.equal(
    (await h.request({ method: 'GET', url: `/api/v1/knowledge/entries/${encodeURI('菜谱/红烧肉')}` })).status,
    200,
    'an encoded name reads back',
  );

  const again = await h.request({ method: 'POST', url: '/api/v1/knowledge/entries', payload: { name: '菜谱/红烧肉', content: 'other' } });
  t.equal(again.status, 409, 'an existing entry is not replaced without overwrite');
  t.equal(entries.get('菜谱/红烧肉'), '五花肉切块');
  const over = await h.request({
    method: 'POST',
    url: '/api/v1/knowledge/entries',
    payload: { name: '菜谱/红烧肉', content: 'other', overwrite: true },
  });
  t.match(over.json, { ok: true, result: { replaced: true } });

  t.equal((await h.request({ method: 'DELETE', url: `/api/v1/knowledge/entries/${encodeURI('菜谱/红烧肉')}` })).status, 200);
  t.notOk(entries.has('菜谱/红烧肉'));
  t.equal((await h.request({ method: 'DELETE', url: '/api/v1/knowledge/entries/recipes/nothing' })).status, 404);
});

t.test('bad entry requests name the problem and write nothing', async (t) => {
  const h = await apiHarness(t);
  const entries = fakeLibrary(h, t.testdir());
  for (const [label, payload, message] of [
    ['no name', { content: 'x' }, /name must be the entry path/],
    ['no content', { name: 'a/b' }, /kb.add: params.content/],
    ['an unknown field', { name: 'a/b', content: 'x', category: 'a' }, /unknown field "category"/],
    ['a traversal', { name: 'a/../../etc', content: 'x' }, /not allowed/],
  ] as const) {
    const reply = await h.request({ method: 'POST', url: '/api/v1/knowledge/entries', payload });
    t.equal(reply.status, 400, `${label}: 400`);
    t.match(reply.json, { ok: false, error: { message } }, `${label}: says why`);
  }
  t.same([...entries.keys()], ['recipes/soup/tomato_soup'], 'nothing was written');
  const empty = await h.request({ method: 'GET', url: '/api/v1/knowledge/entries/' });
  t.equal(empty.status, 400);
  t.match(empty.json, { error: { message: /entry name in the path is empty/ } });
});

t.test('media: pictures inline, anything else a download, never script in our origin', async (t) => {
  const h = await apiHarness(t);
  const base = t.testdir({ media: {}, outside: {} });
  const media = join(base, 'media');
  mkdirSync(media, { recursive: true });
  fakeLibrary(h, media);
  writeFileSync(join(media, 'soup'), PNG);
  writeFileSync(join(media, 'drawing'), '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
  writeFileSync(join(base, 'outside', 'secret'), PNG);
  symlinkSync(join(base, 'outside', 'secret'), join(media, 'link'));

  const png = await h.app.inject({ method: 'GET', url: '/api/v1/knowledge/media/soup.png' });
  t.equal(png.statusCode, 200);
  t.equal(png.headers['content-type'], 'image/png');
  t.match(png.headers['content-disposition'], /^inline; filename="soup.png"/);
  t.equal(png.headers['x-content-type-options'], 'nosniff');
  t.equal(png.headers['content-security-policy'], "sandbox; default-src 'none'");
  t.same(png.rawPayload, PNG);

  const svg = await h.app.inject({ method: 'GET', url: '/api/v1/knowledge/media/drawing.svg' });
  t.equal(svg.statusCode, 200);
  t.equal(svg.headers['content-type'], 'application/octet-stream', 'SVG is never shown as a document');
  t.match(svg.headers['content-disposition'], /^attachment; filename="drawing.bin"/);

  const disguised = await h.app.inject({ method: 'GET', url: '/api/v1/knowledge/media/drawing.png' });
  t.equal(disguised.headers['content-type'], 'application/octet-stream', 'a .png name does not make script bytes a picture');
  t.match(disguised.headers['content-disposition'], /^attachment; filename="drawing.bin"/);

  const link = await h.request({ method: 'GET', url: '/api/v1/knowledge/media/link.png' });
  t.equal(link.status, 403, 'a symlink out of the media folder is refused');
  t.match(link.json, { ok: false, error: { code: 'HA_ERR_FILES_DENIED' } });

  const traversal = await h.request({ method: 'GET', url: '/api/v1/knowledge/media/..%2Foutside%2Fsecret.png' });
  t.equal(traversal.status, 400, 'the library refuses a name leaving it');
  t.match(traversal.json, { ok: false, error: { code: 'HA_ERR_KNOWLEDGE_NAME' } });

  const gone = await h.request({ method: 'GET', url: '/api/v1/knowledge/media/nothing.png' });
  t.equal(gone.status, 404);
});

/**
 * Files somebody else wrote are served so they cannot run script as the page: only a few media
 * types inline, everything else a download, always nosniff and a sandboxing CSP; nothing outside
 * the root, through `..` or a symlink, and nothing that is not a regular file.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Fastify from 'fastify';
import t, { type Test } from 'tap';
import { installErrorHandlers } from '../../../../plugins/webui/http-errors.js';
import { contentDisposition, resolveInside, sendSafeFile } from '../../../../plugins/webui/safe-file.js';
import { expectErrorAsync, silentLogs, tempDir } from '../../fixtures/support.js';

function setup(t: Test) {
  const dir = tempDir(t);
  const root = join(dir, 'media');
  mkdirSync(join(root, 'sub'), { recursive: true });
  writeFileSync(join(dir, 'outside.txt'), 'secret outside');
  writeFileSync(join(root, 'photo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
  writeFileSync(join(root, 'clip.MP4'), 'video');
  writeFileSync(join(root, 'drawing.svg'), '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
  writeFileSync(join(root, 'page.html'), '<script>alert(1)</script>');
  writeFileSync(join(root, 'fake.png.html'), '<script>alert(1)</script>');
  writeFileSync(join(root, 'sub', 'notes 笔记.txt'), 'notes');
  symlinkSync(join(dir, 'outside.txt'), join(root, 'escape.png'));
  symlinkSync(join(root, 'photo.png'), join(root, 'inside-link.png'));
  symlinkSync(dir, join(root, 'up'));
  execFileSync('mkfifo', [join(root, 'pipe.png')]);
  const app = Fastify();
  installErrorHandlers(app, silentLogs().child('test'));
  app.get('/file/*', (request, reply) => sendSafeFile(reply, { root, path: (request.params as { '*': string })['*'] }));
  t.teardown(() => app.close());
  return { app, root, dir };
}

t.test('known media inline, everything else a download; always nosniff and a sandbox', async (t) => {
  const { app } = setup(t);
  for (const [file, type, disposition] of [
    ['photo.png', 'image/png', 'inline'],
    ['clip.MP4', 'video/mp4', 'inline'],
    ['drawing.svg', 'application/octet-stream', 'attachment'],
    ['page.html', 'application/octet-stream', 'attachment'],
    ['fake.png.html', 'application/octet-stream', 'attachment'],
    ['sub/notes 笔记.txt', 'application/octet-stream', 'attachment'],
    ['inside-link.png', 'image/png', 'inline'],
  ] as const) {
    const reply = await app.inject({ method: 'GET', url: `/file/${encodeURI(file)}` });
    t.equal(reply.statusCode, 200, file);
    t.equal(reply.headers['content-type'], type, `${file}: type`);
    t.match(reply.headers['content-disposition'], new RegExp(`^${disposition}; filename=`), `${file}: ${disposition}`);
    t.equal(reply.headers['x-content-type-options'], 'nosniff');
    t.equal(reply.headers['content-security-policy'], "sandbox; default-src 'none'");
  }
  const notes = await app.inject({ method: 'GET', url: `/file/${encodeURI('sub/notes 笔记.txt')}` });
  t.equal(notes.body, 'notes');
  t.equal(notes.headers['content-length'], '5');
  t.equal(notes.headers['content-disposition'], `attachment; filename="notes___.txt"; filename*=UTF-8''notes%20%E7%AC%94%E8%AE%B0.txt`);
});

t.test('nothing outside the root, through .. or a symlink; no directories, FIFOs or missing files', async (t) => {
  const { app } = setup(t);
  for (const [file, status, code] of [
    ['..%2Foutside.txt', 403, 'HA_ERR_FILES_DENIED'],
    ['sub%2F..%2F..%2Foutside.txt', 403, 'HA_ERR_FILES_DENIED'],
    ['escape.png', 403, 'HA_ERR_FILES_DENIED'],
    ['up/outside.txt', 403, 'HA_ERR_FILES_DENIED'],
    ['sub', 403, 'HA_ERR_FILES_DENIED'],
    ['pipe.png', 403, 'HA_ERR_FILES_DENIED'],
    ['missing.png', 404, 'HA_ERR_HTTP_NOT_FOUND'],
  ] as const) {
    const reply = await app.inject({ method: 'GET', url: `/file/${file}` });
    t.equal(reply.statusCode, status, file);
    t.equal(reply.json().error.code, code, file);
    t.notMatch(reply.body, 'secret outside');
  }
});

t.test('resolveInside: absolute paths count only inside the root; NUL is refused', async (t) => {
  const { root, dir } = setup(t);
  t.equal(await resolveInside(root, join(root, 'photo.png')), join(root, 'photo.png'));
  await expectErrorAsync(t, () => resolveInside(root, join(dir, 'outside.txt')), 'HA_ERR_FILES_DENIED');
  await expectErrorAsync(t, () => resolveInside(root, '.'), 'HA_ERR_FILES_DENIED');
  await expectErrorAsync(t, () => resolveInside(root, '../outside.txt'), 'HA_ERR_FILES_DENIED');
  await expectErrorAsync(t, () => resolveInside(root, 'sub/../../outside.txt'), 'HA_ERR_FILES_DENIED');
  await expectErrorAsync(t, () => resolveInside(root, 'photo.png\0.txt'), 'HA_ERR_FILES_DENIED');
});

t.test('content-disposition escapes what would break the header', (t) => {
  t.equal(contentDisposition('attachment', 'a"b\r\n.txt'), `attachment; filename="a_b__.txt"; filename*=UTF-8''a%22b%0D%0A.txt`);
  t.equal(contentDisposition('inline', "it's (1).png"), `inline; filename="it_s__1_.png"; filename*=UTF-8''it%27s%20%281%29.png`);
  t.end();
});

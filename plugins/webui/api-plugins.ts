/**
 * Plugins and changes over /api/v1. An uploaded plugin archive is the one body that is not JSON:
 * it arrives raw (application/octet-stream, up to upload_limit_bytes, accepted on that route
 * only), is written to a private file for `plugins.install` (which takes a path on this machine)
 * and removed afterwards whatever happened. The changes routes front the change tracker's
 * `changes.*` methods (docs/changes.md); change set ids are whole numbers.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { callMethod, invalidParams, noQuery, pathId, pathText, QueryParams } from './api-params.js';
import type { RouteDeps } from './types.js';

interface NameParams {
  Params: { name: string };
}
interface ChangeParams {
  Params: { id: string };
}

/** The plugin host's name rule (src/plugin/manifest.ts PLUGIN_NAME). */
const PLUGIN_NAME = /^[a-z0-9_-][a-z0-9_.-]{0,63}$/;
const ARCHIVE_NAME = /^[A-Za-z0-9][A-Za-z0-9._ -]{0,254}$/;
const ARCHIVE_EXTENSIONS = ['tar.gz', 'tgz', 'zip'] as const;
const UPLOADS = 'uploads';

const pluginName = (value: unknown) => pathText(value, 'plugin name', { max: 64, pattern: PLUGIN_NAME, hint: 'a-z, 0-9, _, - and .' });

/** The archive's kind from the name the client gave it; nothing else of that name is used. */
export function archiveExtension(filename: string | undefined): (typeof ARCHIVE_EXTENSIONS)[number] {
  if (filename === undefined) throw invalidParams('query parameter filename is required (the archive name, ending .tgz, .tar.gz or .zip)');
  if (!ARCHIVE_NAME.test(filename)) throw invalidParams(`filename ${JSON.stringify(filename)} is not a plain file name`);
  const lower = filename.toLowerCase();
  const extension = ARCHIVE_EXTENSIONS.find((ext) => lower.endsWith(`.${ext}`));
  if (!extension) throw invalidParams(`filename ${JSON.stringify(filename)} must end with .tgz, .tar.gz or .zip`);
  return extension;
}

export function pluginRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const { ctx } = deps;

  app.get('/plugins', async (request) => {
    noQuery(request.query);
    return callMethod(deps, request, 'plugins.list');
  });

  for (const action of ['enable', 'disable', 'reload'] as const) {
    app.post<NameParams>(`/plugins/:name/${action}`, async (request) => {
      noQuery(request.query);
      return callMethod(deps, request, `plugins.${action}`, { name: pluginName(request.params.name) });
    });
  }

  app.delete<NameParams>('/plugins/:name', async (request) => {
    noQuery(request.query);
    return callMethod(deps, request, 'plugins.uninstall', { name: pluginName(request.params.name) });
  });

  // Its own scope: the raw-body parser and the larger body limit apply to this route alone.
  const uploadLimit = deps.settings().upload_limit_bytes;
  app.register(async (upload) => {
    upload.addContentTypeParser('application/octet-stream', { parseAs: 'buffer', bodyLimit: uploadLimit }, (_request, body, done) =>
      done(null, body),
    );
    upload.post('/plugins/install', { bodyLimit: uploadLimit }, async (request) => {
      const extension = archiveExtension(new QueryParams(request.query, ['filename']).string('filename'));
      if (!Buffer.isBuffer(request.body) || request.body.length === 0) {
        throw invalidParams('the body must be the archive itself, sent as application/octet-stream');
      }
      const dir = join(ctx.paths.data, UPLOADS);
      await mkdir(dir, { recursive: true, mode: 0o700 });
      const file = join(dir, `${randomBytes(12).toString('hex')}.${extension}`);
      await writeFile(file, request.body, { mode: 0o600, flag: 'wx' });
      try {
        return await callMethod(deps, request, 'plugins.install', { file });
      } finally {
        await rm(file, { force: true });
      }
    });
  });

  changesRoutes(app, deps);
}

function changesRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.get('/changes', async (request) => {
    const query = new QueryParams(request.query, ['limit', 'status']);
    return callMethod(deps, request, 'changes.list', { limit: query.integer('limit'), status: query.string('status') });
  });
  // A static segment: matched before /changes/:id.
  app.get('/changes/status', async (request) => {
    noQuery(request.query);
    return callMethod(deps, request, 'changes.status');
  });
  app.get<ChangeParams>('/changes/:id', async (request) => {
    noQuery(request.query);
    return callMethod(deps, request, 'changes.show', { id: pathId(request.params.id, 'change id') });
  });
  app.get<ChangeParams>('/changes/:id/diff', async (request) => {
    noQuery(request.query);
    return callMethod(deps, request, 'changes.diff', { id: pathId(request.params.id, 'change id') });
  });
  for (const action of ['rollback', 'commit'] as const) {
    app.post<ChangeParams>(`/changes/:id/${action}`, async (request) => {
      noQuery(request.query);
      return callMethod(deps, request, `changes.${action}`, { id: pathId(request.params.id, 'change id') });
    });
  }
}

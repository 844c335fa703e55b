/**
 * The knowledge library over /api/v1: the category tree, search (optionally within a category),
 * an entry with its media, writing and deleting entries. Entry names are paths
 * (`recipes/soup/tomato_soup`), so they are the wildcard rest of the URL; the library itself
 * refuses names that escape it. Media files are served through the safe-file rules, never as a
 * page of this origin.
 */
import { dirname } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { bodyObject, callMethod, invalidParams, noQuery, pathText, QueryParams } from './api-params.js';
import { sendSafeFile } from './safe-file.js';
import type { RouteDeps } from './types.js';

interface RestParams {
  Params: { '*': string };
}

/** What `kb.media` answers: the file to serve. */
export interface KbMediaResult {
  path: string;
  type: string;
  bytes: number;
}

const entryName = (value: unknown) => pathText(value, 'entry name', { max: 1000 });

/**
 * Extensions of the media types the library sniffs from a file's bytes. The store keeps files
 * without one, and the extension in the requested name is the client's word: the served name (and
 * so whether the file is shown inline or downloaded) follows the bytes.
 */
const MEDIA_EXTENSIONS: Readonly<Record<string, string>> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'audio/mpeg': 'mp3',
  'audio/ogg': 'ogg',
  'audio/wav': 'wav',
  'audio/flac': 'flac',
};

/** `<stem>.<extension of the sniffed type>`; `.bin` for anything else. */
export function mediaName(requested: string, type: string): string {
  const dot = requested.lastIndexOf('.');
  const stem = dot > 0 ? requested.slice(0, dot) : requested;
  return `${stem}.${MEDIA_EXTENSIONS[type] ?? 'bin'}`;
}

export function knowledgeRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.get('/knowledge/tree', async (request) => {
    const query = new QueryParams(request.query, ['category', 'depth', 'items', 'preview']);
    return callMethod(deps, request, 'kb.tree', {
      category: query.string('category'),
      depth: query.integer('depth'),
      items: query.boolean('items'),
      preview: query.integer('preview'),
    });
  });

  app.get('/knowledge/search', async (request) => {
    const query = new QueryParams(request.query, ['q', 'category', 'limit']);
    return callMethod(deps, request, 'kb.search', {
      q: query.required('q'),
      category: query.string('category'),
      limit: query.integer('limit'),
    });
  });

  app.get<RestParams>('/knowledge/entries/*', async (request) => {
    noQuery(request.query);
    return callMethod(deps, request, 'kb.get', { name: entryName(request.params['*']) });
  });

  app.post('/knowledge/entries', async (request) => {
    noQuery(request.query);
    const body = bodyObject(request.body, ['name', 'content', 'overwrite']);
    if (typeof body.name !== 'string') throw invalidParams('name must be the entry path, like recipes/soup/tomato_soup');
    return callMethod(deps, request, 'kb.add', { name: body.name, content: body.content, overwrite: body.overwrite });
  });

  app.delete<RestParams>('/knowledge/entries/*', async (request) => {
    noQuery(request.query);
    return callMethod(deps, request, 'kb.rm', { name: entryName(request.params['*']) });
  });

  app.get<RestParams>('/knowledge/media/*', async (request, reply) => {
    noQuery(request.query);
    const file = pathText(request.params['*'], 'media file', { max: 255 });
    const media = (await deps.ctx.control.call('kb.media', { file }, request.caller)) as KbMediaResult;
    // The library has already refused names leaving it; the file must also really lie where it says.
    return sendSafeFile(reply, { root: dirname(media.path), path: media.path, downloadName: mediaName(file, media.type) });
  });
}

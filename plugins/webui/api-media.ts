/**
 * GET /api/v1/media/:id: a picture of the media store (one the agent generated or a camera took)
 * for the page's chat, which shows an image output by its media id. Only the owner's logged-in
 * page or key reaches it (the auth hook); the id must be exactly a sha256 digest, which the media
 * store turns into its own path, so no id can name another file. Only pictures are answered: the
 * bytes' own type decides (never a name), with nosniff and a sandboxing CSP, so a stored file can
 * never become a page of ours. The content never changes under its digest, so the browser may keep it.
 */
import type { FastifyInstance } from 'fastify';
import { HomeAgentError, isHomeAgentError, pictureMime } from '../../src/sdk/index.js';
import { invalidParams, noQuery } from './api-params.js';
import { SANDBOX_CSP } from './safe-file.js';
import type { RouteDeps } from './types.js';

/** A media id as outputs give it: the digest, optionally as `sha256:<digest>` or `media:<digest>`. */
export const MEDIA_ID = /^(?:sha256:|media:)?([0-9a-f]{64})$/i;
/** A day: a digest's bytes never change, and a session ends sooner anyway. */
const CACHE = 'private, max-age=86400, immutable';

/** The digest of a media id, or undefined when it is not one. */
export function mediaDigest(id: unknown): string | undefined {
  if (typeof id !== 'string') return undefined;
  return MEDIA_ID.exec(id.trim())?.[1]?.toLowerCase();
}

function notFound(digest: string): HomeAgentError {
  return new HomeAgentError('HA_ERR_HTTP_NOT_FOUND', `no picture ${digest} in the media store`);
}

export function mediaRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.get<{ Params: { id: string } }>('/media/:id', async (request, reply) => {
    noQuery(request.query);
    if (request.caller.owner !== true) throw new HomeAgentError('HA_ERR_HTTP_AUTH', 'pictures of the media store are for the owner only');
    const digest = mediaDigest(request.params.id);
    if (digest === undefined)
      throw invalidParams(
        `the media id in the path must be a sha256 digest (64 hex digits), got ${JSON.stringify(request.params.id.slice(0, 80))}`,
      );
    let bytes: Buffer;
    try {
      bytes = deps.ctx.media.read(digest);
    } catch (error) {
      if (isHomeAgentError(error) && error.code.endsWith('_NOT_FOUND')) throw notFound(digest);
      throw error;
    }
    const mime = pictureMime(bytes);
    // A sound has a digest too; the page shows pictures only.
    if (mime === undefined) throw notFound(digest);
    return reply
      .headers({
        'content-type': mime,
        'content-length': String(bytes.byteLength),
        'content-disposition': `inline; filename="${digest.slice(0, 16)}.${mime.slice('image/'.length)}"`,
        'x-content-type-options': 'nosniff',
        'content-security-policy': SANDBOX_CSP,
        // Another site may not embed it either (the session cookie is SameSite=Strict already).
        'cross-origin-resource-policy': 'same-origin',
        'cache-control': CACHE,
      })
      .send(bytes);
  });
}

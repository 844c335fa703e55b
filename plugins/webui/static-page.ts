/**
 * Serves the built web page (Vite's output: index.html and hashed files under assets/). The files
 * are read and gzipped once at start and answered from memory: a Pi should not compress the same
 * bundle for every phone that opens the page. Hashed assets are cached for good (their name changes
 * with their content); index.html is revalidated every time so a new build is picked up at once.
 * Every answer carries the page's security headers: a CSP allowing only the page's own scripts, no
 * framing (clickjacking), no referrer, no type sniffing.
 */
import { createHash } from 'node:crypto';
import { type Dirent, existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HomeAgentError } from '../../src/sdk/index.js';
import { sendError } from './http-errors.js';

export const PAGE_CSP =
  "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

export const PAGE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': PAGE_CSP,
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

const NOT_BUILT_HTML =
  '<!doctype html><html><head><meta charset="utf-8"><title>HomeAgent</title></head><body><h1>HomeAgent</h1><p>the web page was not built: run npm run build</p></body></html>\n';

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.webp': 'image/webp',
  '.woff2': 'font/woff2',
};
/** Types worth compressing (images and fonts are compressed already). */
const COMPRESSIBLE = new Set(['.html', '.js', '.mjs', '.css', '.json', '.map', '.webmanifest', '.txt', '.svg']);
const IMMUTABLE = 'public, max-age=31536000, immutable';
const REVALIDATE = 'no-cache';
/** A build is a few hundred KB; these bounds only stop a wrong directory from being read into memory. */
const MAX_FILES = 500;
const MAX_TOTAL_BYTES = 32 * 1024 * 1024;

interface PageFile {
  type: string;
  body: Buffer;
  gzip: Buffer | undefined;
  etag: string;
  cache: string;
}

/**
 * Where the built page is: next to the compiled plugin (dist/plugins/webui/page/). Run from source
 * (tests under tap), this module is plugins/webui/static-page.ts and the build is still in dist.
 */
export function defaultPageDir(): string {
  const fromSource = import.meta.url.endsWith('.ts');
  return fileURLToPath(new URL(fromSource ? '../../dist/plugins/webui/page/' : './page/', import.meta.url));
}

export class StaticPage {
  readonly #files = new Map<string, PageFile>();
  readonly #dir: string;

  private constructor(dir: string) {
    this.#dir = dir;
  }

  /** Reads and compresses the build in `dir`; a directory without index.html is "not built". */
  static load(dir: string): StaticPage {
    const page = new StaticPage(dir);
    if (!existsSync(join(dir, 'index.html'))) return page;
    let total = 0;
    for (const relative of listFiles(dir)) {
      const body = readFileSync(join(dir, relative));
      total += body.length;
      if (page.#files.size >= MAX_FILES || total > MAX_TOTAL_BYTES) {
        throw new HomeAgentError(
          'HA_ERR_PLUGIN_START',
          `${dir} holds more than ${MAX_FILES} files or ${MAX_TOTAL_BYTES} bytes; it is not a build of the web page`,
        );
      }
      page.#files.set(relative, pageFile(relative, body));
    }
    return page;
  }

  get built(): boolean {
    return this.#files.has('index.html');
  }

  get dir(): string {
    return this.#dir;
  }

  /** Bytes the first load transfers gzipped: index.html and everything under assets/ (the bench reads this). */
  gzippedBytes(): number {
    let bytes = 0;
    for (const [name, file] of this.#files) {
      if (name === 'index.html' || name.startsWith('assets/')) bytes += (file.gzip ?? file.body).length;
    }
    return bytes;
  }

  /** GET / (index.html), /assets/*, and the other files at the top of the build; all public. */
  register(app: FastifyInstance): void {
    const config = { public: true };
    app.get('/', { config }, (request, reply) => this.#serve(request, reply, 'index.html'));
    app.get('/assets/*', { config }, (request, reply) => {
      const rest = (request.params as { '*'?: string })['*'] ?? '';
      return this.#serve(request, reply, `assets/${rest}`);
    });
    for (const name of this.#files.keys()) {
      if (name.includes('/') || name === 'index.html') continue;
      app.get(`/${name}`, { config }, (request, reply) => this.#serve(request, reply, name));
    }
  }

  #serve(request: FastifyRequest, reply: FastifyReply, name: string): FastifyReply {
    if (!this.built) {
      if (name === 'index.html') {
        return reply
          .code(503)
          .headers(PAGE_SECURITY_HEADERS)
          .header('cache-control', 'no-store')
          .type('text/html; charset=utf-8')
          .send(NOT_BUILT_HTML);
      }
      return sendError(reply, new HomeAgentError('HA_ERR_HTTP_NOT_FOUND', 'the web page was not built: run npm run build'));
    }
    const file = this.#files.get(name);
    if (!file) return sendError(reply, new HomeAgentError('HA_ERR_HTTP_NOT_FOUND', `the web page has no file ${JSON.stringify(name)}`));
    const gzip = file.gzip !== undefined && acceptsGzip(request.headers['accept-encoding']);
    const etag = gzip ? `"${file.etag}-gz"` : `"${file.etag}"`;
    reply.headers(PAGE_SECURITY_HEADERS).headers({ 'cache-control': file.cache, etag, vary: 'Accept-Encoding' });
    if (matchesEtag(request.headers['if-none-match'], etag)) return reply.code(304).send();
    if (gzip) reply.header('content-encoding', 'gzip');
    return reply.type(file.type).send(gzip ? file.gzip : file.body);
  }
}

function pageFile(name: string, body: Buffer): PageFile {
  const extension = extname(name).toLowerCase();
  const gzip = COMPRESSIBLE.has(extension) ? gzipSync(body, { level: 9 }) : undefined;
  return {
    type: CONTENT_TYPES[extension] ?? 'application/octet-stream',
    body,
    gzip: gzip !== undefined && gzip.length < body.length ? gzip : undefined,
    etag: createHash('sha256').update(body).digest('base64url').slice(0, 22),
    cache: name.startsWith('assets/') ? IMMUTABLE : REVALIDATE,
  };
}

/** Regular files below `dir`, as `/`-separated relative paths (symlinks are not followed). */
function listFiles(dir: string, prefix = ''): string[] {
  const files: string[] = [];
  const entries: Dirent[] = readdirSync(join(dir, prefix), { withFileTypes: true });
  for (const entry of entries) {
    const relative = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    if (entry.isDirectory()) files.push(...listFiles(dir, relative));
    else if (entry.isFile()) files.push(relative);
    if (files.length > MAX_FILES) break;
  }
  return files;
}

/** True when Accept-Encoding allows gzip (`gzip` or `*` without q=0). */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  for (const part of header.split(',')) {
    const [coding = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    if (coding !== 'gzip' && coding !== '*') continue;
    const q = params.find((p) => p.startsWith('q='));
    if (q === undefined || Number(q.slice(2)) > 0) return true;
  }
  return false;
}

function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((tag) => {
    const value = tag.trim();
    return value === '*' || value === etag || value === `W/${etag}`;
  });
}

/**
 * Downloads one file over http(s) into a local path with a byte limit, hashing as it goes. Used by
 * `homeagentctl models install <url>`; nothing in the daemon downloads.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { describeError, HomeAgentError } from '../shared/errors.js';

export interface DownloadProgress {
  received: number;
  /** From Content-Length; undefined when the server does not say. */
  total: number | undefined;
}

export interface DownloadOptions {
  maxBytes: number;
  onProgress?: (progress: DownloadProgress) => void;
  signal?: AbortSignal;
}

export interface Downloaded {
  bytes: number;
  /** Hex sha256 of the bytes written. */
  sha256: string;
}

/** The URL without credentials or query (which may carry tokens), for messages and records. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}

export async function downloadFile(url: string, file: string, options: DownloadOptions): Promise<Downloaded> {
  const shown = redactUrl(url);
  const fail = (why: string, cause?: unknown) =>
    new HomeAgentError('HA_ERR_EMBED_INSTALL', `cannot download ${shown}: ${why}`, cause === undefined ? {} : { cause });
  let response: Response;
  try {
    // fetch refuses credentials in the URL; send them as Basic auth (private model servers).
    const target = new URL(url);
    const headers: Record<string, string> = {};
    if (target.username !== '' || target.password !== '') {
      const user = decodeURIComponent(target.username);
      const password = decodeURIComponent(target.password);
      headers.authorization = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
      target.username = '';
      target.password = '';
    }
    // fetch follows redirects (model hosts redirect to a CDN) and honours the abort signal.
    response = await fetch(target, { redirect: 'follow', headers, ...(options.signal ? { signal: options.signal } : {}) });
  } catch (error) {
    if (options.signal?.aborted) throw new HomeAgentError('HA_ERR_ABORTED', 'the download was cancelled', { cause: error });
    throw fail(describeError(error), error);
  }
  if (!response.ok || !response.body) {
    await response.body?.cancel().catch(() => undefined);
    throw fail(`the server answered ${response.status} ${response.statusText}`.trim());
  }
  const length = Number(response.headers.get('content-length'));
  const total = Number.isFinite(length) && length > 0 ? length : undefined;
  if (total !== undefined && total > options.maxBytes) {
    await response.body.cancel().catch(() => undefined);
    throw fail(`it is ${total} bytes; the limit is ${options.maxBytes}`);
  }

  const hash = createHash('sha256');
  const out = createWriteStream(file, { flags: 'wx', mode: 0o644 });
  const outClosed = new Promise<void>((resolve, reject) => {
    out.on('close', resolve);
    out.on('error', reject);
  });
  let received = 0;
  try {
    for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
      received += chunk.length;
      if (received > options.maxBytes) throw fail(`it is larger than the limit of ${options.maxBytes} bytes`);
      hash.update(chunk);
      if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', resolve));
      options.onProgress?.({ received, total });
    }
    if (total !== undefined && received !== total) throw fail(`the connection ended after ${received} of ${total} bytes`);
  } catch (error) {
    out.destroy();
    await outClosed.catch(() => undefined);
    if (error instanceof HomeAgentError) throw error;
    if (options.signal?.aborted) throw new HomeAgentError('HA_ERR_ABORTED', 'the download was cancelled', { cause: error });
    throw fail(describeError(error), error);
  }
  out.end();
  try {
    await outClosed;
  } catch (error) {
    throw fail(`cannot write ${file}: ${describeError(error)}`, error);
  }
  return { bytes: received, sha256: hash.digest('hex') };
}

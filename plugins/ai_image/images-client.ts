/**
 * One request to an OpenAI-compatible images API: POST <base_url>/images/generations with
 * {model, prompt, size, n: 1, response_format}, and the picture's bytes out of the answer, whether
 * it came as `b64_json` or as a `url` to fetch. Every failure is a HomeAgentError with its own
 * code (error-codes.ts); nothing here stores anything, so a failed request leaves no trace.
 *
 * Bounds: one deadline covers the request and a url download; bodies are read as a stream and
 * abandoned as soon as they pass their limit (a Content-Length over it is refused unread). A url
 * answer is fetched only over http(s), without following redirects, and never from a loopback
 * address unless the images API itself is on one: the address comes from the server's answer, and
 * must not turn the daemon into a client of its own local services.
 */
import { addressScope, HomeAgentError } from '../../src/sdk/index.js';

export type ResponseFormat = 'b64_json' | 'url' | 'server_default';

export interface ImageRequest {
  base_url: string;
  api_key: string;
  model: string;
  prompt: string;
  size: string;
  response_format: ResponseFormat;
  timeout_ms: number;
  /** Largest picture, in bytes. */
  max_bytes: number;
  /** The tool's signal: aborted when the turn is cancelled or the tool timed out. */
  signal: AbortSignal;
}

export interface GeneratedImage {
  bytes: Uint8Array;
  /** Which form the answer used. */
  form: 'b64_json' | 'url';
  /** The prompt as the server rewrote it (DALL-E 3 does), when it says. */
  revised_prompt?: string;
}

/** JSON around the base64 (field names, revised_prompt) is small; this much is allowed on top. */
const JSON_OVERHEAD_BYTES = 64 * 1024;
/** Characters of an error body quoted in the message. */
const QUOTED_ERROR_CHARS = 300;

export async function generateImage(request: ImageRequest): Promise<GeneratedImage> {
  const deadline = AbortSignal.timeout(request.timeout_ms);
  const signal = AbortSignal.any([request.signal, deadline]);
  const endpoint = `${request.base_url.replace(/\/+$/, '')}/images/generations`;
  const body: Record<string, unknown> = { prompt: request.prompt, size: request.size, n: 1 };
  if (request.model !== '') body.model = request.model;
  if (request.response_format !== 'server_default') body.response_format = request.response_format;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (request.api_key !== '') headers.authorization = `Bearer ${request.api_key}`;

  const jsonLimit = Math.ceil((request.max_bytes * 4) / 3) + JSON_OVERHEAD_BYTES;
  const answer = await guarded(request, deadline, 'the images API', async () => {
    const response = await fetch(endpoint, { method: 'POST', headers, body: JSON.stringify(body), signal, redirect: 'error' });
    const text = new TextDecoder().decode(await readLimited(response, jsonLimit, 'the answer of the images API'));
    if (!response.ok) throw httpError(response.status, text);
    return text;
  });

  const item = firstItem(answer);
  const revised = typeof item.revised_prompt === 'string' && item.revised_prompt !== '' ? { revised_prompt: item.revised_prompt } : {};
  if (typeof item.b64_json === 'string' && item.b64_json !== '') {
    return { bytes: decodeBase64(item.b64_json, request.max_bytes), form: 'b64_json', ...revised };
  }
  if (typeof item.url === 'string' && item.url !== '') {
    const url = checkedImageUrl(item.url, request.base_url);
    const bytes = await guarded(request, deadline, 'the picture download', async () => {
      const response = await fetch(url, { signal, redirect: 'error' });
      if (!response.ok) {
        await response.body?.cancel();
        throw new HomeAgentError('HA_ERR_AI_IMAGE_HTTP', `downloading the picture from ${url.origin} answered HTTP ${response.status}`);
      }
      return readLimited(response, request.max_bytes, 'the picture');
    });
    return { bytes, form: 'url', ...revised };
  }
  throw new HomeAgentError('HA_ERR_AI_IMAGE_BAD_RESPONSE', 'the answer of the images API has neither data[0].b64_json nor data[0].url');
}

/** Runs a fetch step, turning a timeout, a cancellation or a network failure into its coded error. */
async function guarded<T>(request: ImageRequest, deadline: AbortSignal, what: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof HomeAgentError) throw error;
    if (deadline.aborted) {
      throw new HomeAgentError(
        'HA_ERR_AI_IMAGE_TIMEOUT',
        `${what} did not answer within ${request.timeout_ms} ms (plugin.ai_image.timeout_ms)`,
      );
    }
    if (request.signal.aborted) throw new HomeAgentError('HA_ERR_ABORTED', `${what}: the request was cancelled`);
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
    throw new HomeAgentError(
      'HA_ERR_AI_IMAGE_UNREACHABLE',
      `${what} at ${new URL(request.base_url).origin} could not be reached (${why})`,
      {
        cause: error,
      },
    );
  }
}

/** The body, read until `limit` bytes and abandoned past it. */
async function readLimited(response: Response, limit: number, what: string): Promise<Uint8Array> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  const tooLarge = (seen: string) =>
    new HomeAgentError('HA_ERR_AI_IMAGE_TOO_LARGE', `${what} is larger than ${limit} bytes (${seen}; plugin.ai_image.max_bytes)`);
  if (Number.isFinite(declared) && declared > limit) {
    await response.body?.cancel();
    throw tooLarge(`Content-Length ${declared}`);
  }
  const reader = response.body?.getReader();
  if (!reader) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel();
      throw tooLarge(`more than ${limit} bytes arrived`);
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

function httpError(status: number, text: string): HomeAgentError {
  let message = text.trim();
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const inner = typeof parsed.error === 'string' ? parsed.error : (parsed.error?.message ?? parsed.message);
    if (typeof inner === 'string') message = inner;
  } catch {
    // Not JSON: the text as it came.
  }
  const said = message === '' ? '' : `: ${message.slice(0, QUOTED_ERROR_CHARS)}`;
  const hint =
    status === 401 || status === 403 ? ' (check plugin.ai_image.api_key)' : status === 404 ? ' (check plugin.ai_image.base_url)' : '';
  return new HomeAgentError('HA_ERR_AI_IMAGE_HTTP', `the images API answered HTTP ${status}${said}${hint}`, { details: { status } });
}

function firstItem(text: string): { b64_json?: unknown; url?: unknown; revised_prompt?: unknown } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new HomeAgentError(
      'HA_ERR_AI_IMAGE_BAD_RESPONSE',
      `the images API answered something that is not JSON: ${JSON.stringify(text.slice(0, 80))}`,
    );
  }
  const data = (parsed as { data?: unknown } | null)?.data;
  const first = Array.isArray(data) ? data[0] : undefined;
  if (first === null || typeof first !== 'object') {
    throw new HomeAgentError('HA_ERR_AI_IMAGE_BAD_RESPONSE', 'the answer of the images API has no data[0] object');
  }
  return first;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function decodeBase64(text: string, maxBytes: number): Uint8Array {
  const clean = text.replace(/\s+/g, '');
  if (clean.length % 4 !== 0 || !BASE64.test(clean)) {
    throw new HomeAgentError('HA_ERR_AI_IMAGE_BAD_RESPONSE', 'data[0].b64_json of the images API answer is not base64');
  }
  const bytes = Buffer.from(clean, 'base64');
  if (bytes.byteLength > maxBytes) {
    throw new HomeAgentError(
      'HA_ERR_AI_IMAGE_TOO_LARGE',
      `the picture is ${bytes.byteLength} bytes, more than ${maxBytes} (plugin.ai_image.max_bytes)`,
    );
  }
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The picture's address, when it is one HomeAgent fetches (see the header). */
function checkedImageUrl(text: string, baseUrl: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new HomeAgentError(
      'HA_ERR_AI_IMAGE_BAD_RESPONSE',
      `data[0].url of the images API answer is not a URL: ${JSON.stringify(text.slice(0, 80))}`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new HomeAgentError('HA_ERR_AI_IMAGE_URL_REFUSED', `the picture address uses ${url.protocol}; only http and https are fetched`);
  }
  if (addressScope(url.hostname) === 'loopback' && addressScope(new URL(baseUrl).hostname) !== 'loopback') {
    throw new HomeAgentError(
      'HA_ERR_AI_IMAGE_URL_REFUSED',
      `the picture address ${url.origin} is on this machine while the images API is not; it is not fetched`,
    );
  }
  return url;
}

/**
 * One POST to an OpenAI-compatible audio endpoint (/audio/transcriptions, /audio/speech), shared by
 * the speech-to-text and text-to-speech back ends. It bounds the call with a timeout joined to the
 * caller's signal, caps the answer's size, and turns every failure into one coded error that names
 * the host and, for HTTP errors, the status and the server's own message ({error:{message}}). The
 * API key is sent only in the Authorization header and scrubbed from any message that echoes it.
 */
import { type HomeAgentError, isHomeAgentError } from '../../../src/sdk/index.js';

export interface OpenAiRequest {
  baseUrl: string;
  apiKey: string;
  /** Below the base URL, e.g. "/audio/transcriptions". */
  path: string;
  body: FormData | string;
  timeoutMs: number;
  signal?: AbortSignal;
  maxResponseBytes: number;
  /** How messages name the call, e.g. "openai speech-to-text". */
  what: string;
  fail: (message: string, cause?: unknown) => HomeAgentError;
}

export interface OpenAiResponse {
  body: Buffer;
  contentType: string;
}

const MESSAGE_KEEP = 500;

export function endpointUrl(baseUrl: string, path: string): URL {
  return new URL(`${baseUrl.replace(/\/+$/, '')}${path}`);
}

function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code === 'ECONNREFUSED') return 'connection refused';
  if (cause?.code === 'ENOTFOUND' || cause?.code === 'EAI_AGAIN') return 'host not found';
  if (cause?.code === 'ECONNRESET' || cause?.code === 'UND_ERR_SOCKET') return 'the connection was reset';
  return cause?.message ?? (error instanceof Error ? error.message : String(error));
}

/** The server's error message: OpenAI's {error:{message}}, a {message} or {detail}, else the text. */
function serverMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown; detail?: unknown };
    const nested = typeof parsed.error === 'object' ? parsed.error?.message : parsed.error;
    const message = nested ?? parsed.message ?? parsed.detail;
    if (typeof message === 'string' && message.trim() !== '') return message.trim();
  } catch {
    // Not JSON: the text itself is the best message there is.
  }
  return body.trim() || 'no message';
}

async function readLimited(response: Response, limit: number, request: OpenAiRequest, host: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  if (!response.body) return Buffer.alloc(0);
  for await (const chunk of response.body) {
    total += chunk.length;
    if (total > limit) throw request.fail(`${request.what} at ${host}: the answer is over ${limit} bytes`);
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks, total);
}

export async function postOpenAi(request: OpenAiRequest): Promise<OpenAiResponse> {
  const url = endpointUrl(request.baseUrl, request.path);
  const host = url.host;
  const scrub = (text: string): string => (request.apiKey ? text.split(request.apiKey).join('[redacted]') : text);
  const timeout = AbortSignal.timeout(request.timeoutMs);
  const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
  const headers: Record<string, string> = {};
  if (request.apiKey) headers.authorization = `Bearer ${request.apiKey}`;
  if (typeof request.body === 'string') headers['content-type'] = 'application/json';
  try {
    const response = await fetch(url, { method: 'POST', headers, body: request.body, signal });
    const body = await readLimited(response, request.maxResponseBytes, request, host);
    if (!response.ok) {
      const message = scrub(serverMessage(body.toString('utf8'))).slice(0, MESSAGE_KEEP);
      throw request.fail(`${request.what} at ${host}: HTTP ${response.status}: ${message}`);
    }
    return { body, contentType: response.headers.get('content-type') ?? '' };
  } catch (error) {
    if (isHomeAgentError(error)) throw error;
    if (timeout.aborted) throw request.fail(`${request.what} at ${host}: no answer within ${request.timeoutMs} ms`, error);
    if (request.signal?.aborted) throw request.fail(`${request.what} at ${host} was cancelled`, error);
    throw request.fail(`${request.what} at ${host} failed: ${scrub(networkReason(error))}`, error);
  }
}

/**
 * Is a language model source reachable? One HTTP GET to its base URL: any HTTP answer (a 404, a
 * 401 without the key, a 500) proves a server listens there, which is all the supervisor asks; a
 * refused connection, an unknown host or no answer in time means unreachable. No model is called,
 * so the probe costs no tokens and needs no key.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { describeError } from '../shared/errors.js';

export interface ProbeResult {
  reachable: boolean;
  /** `HTTP 200`, or why it is unreachable. */
  detail: string;
}

export type Probe = (url: string, timeoutMs: number) => Promise<ProbeResult>;

export const probeUrl: Probe = (url, timeoutMs) => {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return Promise.resolve({ reachable: false, detail: `not a URL: ${url}` });
  }
  const request = target.protocol === 'https:' ? httpsRequest : target.protocol === 'http:' ? httpRequest : undefined;
  if (!request) return Promise.resolve({ reachable: false, detail: `cannot probe a ${target.protocol} URL` });
  return new Promise<ProbeResult>((resolve) => {
    const signal = AbortSignal.timeout(timeoutMs);
    const req = request(target, { method: 'GET', signal, headers: { accept: '*/*' } }, (res) => {
      // The status line is the answer; the body is not wanted.
      res.resume();
      req.destroy();
      resolve({ reachable: true, detail: `HTTP ${res.statusCode ?? '?'}` });
    });
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (signal.aborted) resolve({ reachable: false, detail: `no answer within ${timeoutMs} ms` });
      else resolve({ reachable: false, detail: describeError(error) || (error.code ?? 'connection failed') });
    });
    req.end();
  });
};

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
  /** The same in Chinese (a connection error's own text stays as it is). */
  detail_zh: string;
}

export type Probe = (url: string, timeoutMs: number) => Promise<ProbeResult>;

export const probeUrl: Probe = (url, timeoutMs) => {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return Promise.resolve({ reachable: false, detail: `not a URL: ${url}`, detail_zh: `不是 URL：${url}` });
  }
  const request = target.protocol === 'https:' ? httpsRequest : target.protocol === 'http:' ? httpRequest : undefined;
  if (!request) {
    return Promise.resolve({
      reachable: false,
      detail: `cannot probe a ${target.protocol} URL`,
      detail_zh: `无法探测 ${target.protocol} URL`,
    });
  }
  return new Promise<ProbeResult>((resolve) => {
    const signal = AbortSignal.timeout(timeoutMs);
    const req = request(target, { method: 'GET', signal, headers: { accept: '*/*' } }, (res) => {
      // The status line is the answer; the body is not wanted.
      res.resume();
      req.destroy();
      const status = `HTTP ${res.statusCode ?? '?'}`;
      resolve({ reachable: true, detail: status, detail_zh: status });
    });
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (signal.aborted)
        resolve({ reachable: false, detail: `no answer within ${timeoutMs} ms`, detail_zh: `${timeoutMs} ms 内没有应答` });
      else {
        const why = describeError(error);
        resolve({ reachable: false, detail: why || (error.code ?? 'connection failed'), detail_zh: why || (error.code ?? '连接失败') });
      }
    });
    req.end();
  });
};

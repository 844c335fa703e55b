/**
 * The daemon's side of the isolated runner (runner-service.ts): sends one approved command over
 * the runner's Unix socket and waits for its result. A cancelled tool call sends a cancel frame;
 * a runner that is missing, breaks the protocol or goes away mid-run is a ToolError naming what
 * happened, and a deadline (the command's timeout plus the kill grace plus a margin) keeps a
 * wedged runner from holding the tool call forever.
 */
import { createConnection } from 'node:net';
import { LineDecoder, ToolError } from '../../src/sdk/index.js';
import type { RunResult } from './runner.js';
import { encodeFrame, MAX_RESPONSE_BYTES, PROTOCOL_VERSION, type RunFrame, type RunnerFrame } from './runner-protocol.js';

export interface RunnerRequest {
  executable: string;
  argv0: string;
  args: readonly string[];
  /** The folder commands are confined to; empty: the runner's own working directory. */
  base: string;
  workdir: string;
  timeoutMs: number;
  maxOutputBytes: number;
  killGraceMs: number;
  signal: AbortSignal;
  /** Called when the runner reports the command started, with its pid in the runner's namespace. */
  onStart?: (pid: number) => void;
}

export interface RunnerRun {
  result: RunResult;
  /** The real working directory the runner used. */
  workdir: string;
}

/** Beyond the command's own timeout and kill grace, how long the runner may take to answer. */
export const RUNNER_ANSWER_MARGIN_MS = 10_000;

export function runInRunner(socketPath: string, request: RunnerRequest): Promise<RunnerRun> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(socketPath);
    const decoder = new LineDecoder(MAX_RESPONSE_BYTES);
    let settled = false;
    let connected = false;
    const settle = (outcome: { run: RunnerRun } | { error: ToolError }) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      request.signal.removeEventListener('abort', onAbort);
      socket.destroy();
      if ('run' in outcome) resolve(outcome.run);
      else reject(outcome.error);
    };
    const protocolError = (problem: string) =>
      settle({ error: new ToolError({ reason: 'failed', detail: `HA_ERR_CMD_RUNNER_PROTOCOL: ${problem}` }) });
    const deadline = setTimeout(
      () =>
        settle({
          error: new ToolError({
            reason: 'timeout',
            detail: `HA_ERR_CMD_RUNNER_UNAVAILABLE: the cmd runner at ${socketPath} did not answer within ${request.timeoutMs + request.killGraceMs + RUNNER_ANSWER_MARGIN_MS} ms`,
          }),
        }),
      request.timeoutMs + request.killGraceMs + RUNNER_ANSWER_MARGIN_MS,
    );
    const onAbort = () => {
      if (connected && !socket.destroyed) socket.write(encodeFrame({ type: 'cancel' }));
    };
    request.signal.addEventListener('abort', onAbort, { once: true });

    socket.once('connect', () => {
      connected = true;
      const frame: RunFrame = {
        type: 'run',
        v: PROTOCOL_VERSION,
        executable: request.executable,
        argv0: request.argv0,
        args: [...request.args],
        base: request.base,
        workdir: request.workdir,
        timeout_ms: request.timeoutMs,
        max_output_bytes: request.maxOutputBytes,
        kill_grace_ms: request.killGraceMs,
      };
      socket.write(encodeFrame(frame));
      if (request.signal.aborted) onAbort();
    });
    socket.on('data', (chunk: Buffer) => {
      for (const frame of decoder.push(chunk)) {
        if (frame.kind === 'too_large') return protocolError(`the runner sent a frame of more than ${MAX_RESPONSE_BYTES} bytes`);
        let parsed: RunnerFrame;
        try {
          parsed = JSON.parse(frame.text) as RunnerFrame;
        } catch {
          return protocolError('the runner sent a frame that is not JSON');
        }
        if (parsed?.type === 'started') request.onStart?.(parsed.pid);
        else if (parsed?.type === 'result' && typeof parsed.result === 'object' && parsed.result !== null) {
          return settle({ run: { result: parsed.result, workdir: parsed.workdir } });
        } else if (parsed?.type === 'error' && typeof parsed.error?.detail === 'string') {
          return settle({ error: new ToolError(parsed.error) });
        } else return protocolError(`the runner sent an unknown frame ${frame.text.slice(0, 200)}`);
      }
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (connected) return protocolError(`the connection to the runner failed (${error.code ?? error.message})`);
      settle({
        error: new ToolError({
          reason: 'unavailable',
          detail: `HA_ERR_CMD_RUNNER_UNAVAILABLE: the cmd runner at ${socketPath} cannot be reached (${error.code ?? error.message})`,
          hint: 'start it with systemctl start homeagent-cmd.socket, or ask the owner to check plugin.cmd.isolation',
        }),
      });
    });
    socket.on('close', () => protocolError('the runner closed the connection before the command finished'));
  });
}

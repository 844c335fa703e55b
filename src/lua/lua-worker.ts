/**
 * Entry point of a Lua sandbox worker thread. Runs one SandboxEngine and answers the main
 * thread's load/call messages. HTTP and logging go back to the main thread, so the worker itself
 * holds no sockets and no logger. If the engine ever ends up in an untrusted state, the worker
 * reports it as fatal and the main thread replaces it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { EngineCallError, SandboxEngine } from './lua-engine.js';
import type { FromWorker, LuaHttpResult, ToWorker, WorkerInit } from './lua-protocol.js';

const port = parentPort;
if (!port) throw new Error('lua-worker must run in a worker thread');

const init = workerData as WorkerInit;
const pendingHttp = new Map<number, (result: LuaHttpResult) => void>();
let nextHttp = 0;

const send = (message: FromWorker): void => port.postMessage(message);

// The emscripten runtime prints (aborts, Lua panics) through console, which it binds when the
// engine is created: route it to the main thread's logger, never to the daemon's stdout.
for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) {
  console[method] = (...args: unknown[]) => send({ t: 'log', level: 'warn', message: `lua engine: ${args.map(String).join(' ')}` });
}

function fatal(error: unknown): void {
  send({ t: 'fatal', message: error instanceof Error ? error.message : String(error) });
}

try {
  const engine = await SandboxEngine.create(init.limits, {
    log: (level, message) => send({ t: 'log', level, message }),
    http: (request) =>
      new Promise<LuaHttpResult>((resolve) => {
        const req = ++nextHttp;
        pendingHttp.set(req, resolve);
        send({ t: 'http', req, request });
      }),
  });

  const failed = (error: unknown) => {
    if (error instanceof EngineCallError) return error.failure;
    // Not a script error: the engine itself failed.
    if (engine.broken) fatal(error);
    return { code: 'HA_ERR_LUA_RUNTIME' as const, message: error instanceof Error ? error.message : String(error) };
  };

  port.on('message', (message: ToWorker) => {
    switch (message.t) {
      case 'load':
        engine.load(message.source, message.chunk_name, message.libraries).then(
          (module) => send({ t: 'loaded', id: message.id, ok: true, module }),
          (error: unknown) => send({ t: 'loaded', id: message.id, ok: false, error: failed(error) }),
        );
        break;
      case 'call':
        engine.call(message.fn, message.args, { raw: message.raw, state: message.state }).then(
          (values) => send({ t: 'done', id: message.id, ok: true, values }),
          (error: unknown) => send({ t: 'done', id: message.id, ok: false, error: failed(error) }),
        );
        break;
      case 'state_drop':
        engine.dropState(message.id);
        break;
      case 'http_done': {
        const resolve = pendingHttp.get(message.req);
        pendingHttp.delete(message.req);
        resolve?.(message.result);
        break;
      }
    }
  });
  send({ t: 'ready' });
} catch (error) {
  fatal(error);
}

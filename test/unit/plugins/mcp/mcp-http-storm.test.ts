/**
 * The mcp plugin against a hostile streamable HTTP server, 500 reconnect cycles on the plugin's
 * manual clock. Every cycle breaks at a random step of the set-up (initialize, the initialized
 * notification, tools/list, or at accept) in a random way: a reset, a close, raw garbage instead
 * of HTTP, half a status line, a body shorter than announced, a body that is no JSON, an HTTP
 * error, a JSON-RPC error, a result of the wrong shape; the server-sent-event stream (GET) is
 * refused or broken too. The plugin stays up, health() names the failure in one line, each attempt
 * waits its turn (one wait per failure, doubling to the maximum, so it cannot spin), no listeners
 * pile up, and a well-behaved server afterwards is connected with its tools.
 *
 * The choices are random from one seed, printed as a comment: STORM_SEED=<seed> replays them.
 */
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import t from 'tap';
import { garbage, Rng, startHostileServer, stormSeed } from '../../../helpers/storm.js';
import { until } from '../../../helpers/until.js';
import { reconnectCycles, startPlugin } from './storm-kit.js';

const HTTP_CYCLES = 500;
const TOOL = { name: 'ping', description: 'Answers pong.', inputSchema: { type: 'object', properties: {} } };

interface Rpc {
  id?: number | string;
  method?: string;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => resolve(body));
    request.on('error', () => resolve(body));
  });
}

function json(response: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(value);
  response
    .writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...headers })
    .end(body);
}

/** The ways a response can break. Each makes the request it answers fail at once (none leaves it waiting for a timeout). */
const BREAKS: Record<string, (response: ServerResponse, rpc: Rpc, rng: Rng) => void> = {
  reset: (response) => response.socket?.resetAndDestroy(),
  close: (response) => response.socket?.destroy(),
  garbage: (response, _rpc, rng) => response.socket?.end(garbage(rng)),
  'half status line': (response) => response.socket?.end('HTTP/1.1 200 O'),
  'short body': (response) => {
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
    response.write('{"jsonrpc":"2.0","id"', () => response.socket?.destroy());
  },
  'not JSON': (response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc": "2.0", nope');
  },
  'HTTP 500': (response) => {
    response.writeHead(500, { 'content-type': 'text/html' }).end('<h1>Internal Server Error</h1>');
  },
  'HTTP 404': (response) => {
    response.writeHead(404).end();
  },
  'JSON-RPC error': (response, rpc) =>
    json(response, 200, { jsonrpc: '2.0', id: rpc.id ?? null, error: { code: -32603, message: 'boom' } }),
  'wrong shape': (response, rpc) => json(response, 200, { jsonrpc: '2.0', id: rpc.id ?? null, result: 'not an object' }),
};
/** A notification's answer has no JSON-RPC content: only the transport-level breaks fail it. */
const NOTIFICATION_BREAKS = ['reset', 'close', 'garbage', 'half status line', 'HTTP 500', 'HTTP 404'];

const STEPS = ['initialize', 'notifications/initialized', 'tools/list'] as const;

t.test(`streamable HTTP: ${HTTP_CYCLES} reconnect cycles against a server that breaks the set-up`, async (t) => {
  const rng = new Rng(stormSeed(t));
  let hostile = true;
  /** Where and how the current attempt breaks ('accept': every connection is reset or closed before any HTTP). */
  let plan: { step: (typeof STEPS)[number] | 'accept'; how: string } = { step: 'initialize', how: 'reset' };
  const used = new Set<string>();
  /** initialize requests per attempt: more than one would be an attempt that did not wait. */
  const initializes: number[] = [0];
  const planFor = () => {
    const step = rng.pick([...STEPS, 'accept'] as const);
    plan = {
      step,
      how: rng.pick(
        step === 'notifications/initialized' ? NOTIFICATION_BREAKS : step === 'accept' ? ['reset', 'close'] : Object.keys(BREAKS),
      ),
    };
  };
  const http = createHttpServer(async (request, response) => {
    response.on('error', () => {});
    if (request.method === 'GET') {
      // The optional event stream: refused or broken, never a reason for the set-up to fail.
      if (!hostile || rng.chance(0.5)) response.writeHead(405).end();
      else rng.pick([BREAKS.reset, BREAKS.garbage, BREAKS['HTTP 500']])?.(response, {}, rng);
      return;
    }
    if (request.method === 'DELETE') {
      response.writeHead(200).end();
      return;
    }
    if (hostile && plan.step === 'accept') {
      // A connection kept alive from an earlier request: it breaks now, before the request is read.
      response.socket?.resetAndDestroy();
      return;
    }
    let rpc: Rpc = {};
    try {
      rpc = JSON.parse(await readBody(request)) as Rpc;
    } catch {
      // answered as a valid request would be
    }
    if (rpc.method === 'initialize') initializes[initializes.length - 1] = (initializes.at(-1) ?? 0) + 1;
    if (hostile && rpc.method === plan.step) {
      used.add(`${plan.step}: ${plan.how}`);
      BREAKS[plan.how]?.(response, rpc, rng);
      return;
    }
    const session = { 'mcp-session-id': `s-${initializes.length}` };
    if (rpc.method === 'initialize') {
      json(
        response,
        200,
        {
          jsonrpc: '2.0',
          id: rpc.id,
          result: { protocolVersion: '2025-03-26', capabilities: { tools: {} }, serverInfo: { name: 'hostile', version: '1.0.0' } },
        },
        session,
      );
    } else if (rpc.method === 'notifications/initialized') response.writeHead(202, session).end();
    else if (rpc.method === 'tools/list') json(response, 200, { jsonrpc: '2.0', id: rpc.id, result: { tools: [TOOL] } }, session);
    else json(response, 200, { jsonrpc: '2.0', id: rpc.id ?? null, error: { code: -32601, message: 'no such method' } });
  });
  const server = await startHostileServer((socket) => {
    if (hostile && plan.step === 'accept') {
      used.add(`accept: ${plan.how}`);
      if (plan.how === 'reset') socket.resetAndDestroy();
      else socket.destroy();
    } else http.emit('connection', socket);
  });
  t.teardown(() => server.close());

  // Every request used to add an abort listener to one signal kept for all attempts: Node warns past ten.
  const warnings: string[] = [];
  const onWarning = (warning: Error) => void warnings.push(`${warning.name}: ${warning.message}`);
  process.on('warning', onWarning);
  t.teardown(() => void process.off('warning', onWarning));

  const run = await startPlugin(t, { transport: 'http', url: `http://127.0.0.1:${server.port}/mcp` });
  const { details, lastWait } = await reconnectCycles(t, run, HTTP_CYCLES, () => {
    initializes.push(0);
    planFor();
  });
  t.ok(
    initializes.every((n) => n <= 1),
    'no attempt sent initialize twice: nothing retried before its wait',
  );
  t.same(
    warnings.filter((w) => w.startsWith('MaxListenersExceededWarning')),
    [],
    'no listeners pile up on a signal',
  );
  t.ok(
    [...details].every((d) => d.length < 400 && !d.includes('\n')),
    'a failure is one line of reasonable length in health',
  );
  t.comment(`breaks used: ${[...used].sort().join(' | ')}`);
  t.comment(`health details: ${[...details].join(' | ')}`);
  t.ok(
    [...details].every((d) => d.startsWith('server hostile: ') && d.includes('; retrying in')),
    'health names the server, the failure and the retry',
  );
  t.same(
    run.tc.tools.list().filter((tool) => tool.owner === 'plugin:mcp'),
    [],
    'no tools registered from a server that never finished its set-up',
  );

  hostile = false;
  await run.manual.advance(lastWait);
  await until('connected', () => (run.plugin.health().ok ? true : undefined));
  t.match(
    run.plugin.health(),
    { ok: true, detail: 'server hostile: connected, 1 tools' },
    'a well-behaved server is connected at the next attempt',
  );
});

// The web server: a chat request through HTTP with a loopback LLM that answers at once (POST
// /api/v1/chat with wait, and POST /v1/chat/completions), so the time is all overhead: HTTP, auth,
// the scheduler, the agent's turn, memory; the same turn through the CLI socket's agent.chat (a new
// connection per call) is given for comparison. And the page's first-load transfer size
// (index.html plus everything it references, gzip as a browser asks for it). Goal: ≤ 300 KB.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { rpc } from './cli-socket.mjs';
import { size } from './quick.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const MAIN = join(root, 'dist/src/main.js');
const WARMUP = size(20, 2);
const RUNS = size(200, 10);

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const round = (x, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

/** An OpenAI-compatible server that streams a one-line answer at once. */
function startLlm() {
  const chunk = (delta, finish = null) =>
    `data: ${JSON.stringify({ id: 'b', object: 'chat.completion.chunk', model: 'bench', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`${chunk({ role: 'assistant', content: 'Done.' })}${chunk({}, 'stop')}data: [DONE]\n\n`);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function waitForCredentials(socketPath, child) {
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`the daemon exited with ${child.exitCode}`);
    try {
      return await rpc(socketPath, 'webui.credentials', {});
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error('the web server did not come up within 30 s');
}

function http(url, { method = 'GET', headers = {}, body, fresh = false } = {}) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent: fresh ? false : keepAlive }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
let keepAlive;

const SLOW_CLIENTS = size(500, 20);

/** Opens sockets that trickle a request's headers one byte every 200 ms, as a slowloris client does. */
async function openSlowClients(url, count) {
  const sockets = [];
  const head = `GET /api/v1/status HTTP/1.1\r\nHost: ${url.host}\r\nX-Slow: `;
  for (let i = 0; i < count; i++) {
    const socket = connect(Number(url.port), url.hostname);
    socket.on('error', () => {});
    await new Promise((resolve) => socket.once('connect', resolve).once('close', resolve));
    let sent = 0;
    socket.write(head.slice(0, 10));
    sent = 10;
    const timer = setInterval(() => {
      if (socket.destroyed) return clearInterval(timer);
      socket.write(sent < head.length ? head[sent++] : 'a');
    }, 200);
    sockets.push({ socket, timer });
  }
  return {
    open: () => sockets.filter((s) => !s.socket.destroyed).length,
    close: () => {
      for (const { socket, timer } of sockets) {
        clearInterval(timer);
        socket.destroy();
      }
    },
  };
}

async function timeRequests(label, send) {
  const times = [];
  for (let i = 0; i < WARMUP + RUNS; i++) {
    const t0 = performance.now();
    await send(i);
    if (i >= WARMUP) times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { label, p50: percentile(times, 50), p95: percentile(times, 95) };
}

/**
 * Welch's t-test between the times of API-key checks that differ from the key at its first
 * character and at its last one (reliability-and-performance.md A6): a comparison that stopped at
 * the first difference would make the first group faster. Samples interleave, so drift hits both.
 */
async function tokenTiming(emit) {
  const { TokenCheck, randomToken } = await import(join(root, 'dist/src/shared/access-token.js'));
  const key = randomToken();
  const check = new TokenCheck(key);
  const flip = (c) => (c === 'A' ? 'B' : 'A');
  const early = flip(key[0]) + key.slice(1);
  const late = key.slice(0, -1) + flip(key.at(-1));
  const N = 100_000;
  const a = new Float64Array(N);
  const b = new Float64Array(N);
  for (let i = 0; i < 2000; i++) check.matches(i % 2 ? early : late);
  for (let i = 0; i < N; i++) {
    let t0 = process.hrtime.bigint();
    check.matches(early);
    a[i] = Number(process.hrtime.bigint() - t0);
    t0 = process.hrtime.bigint();
    check.matches(late);
    b[i] = Number(process.hrtime.bigint() - t0);
  }
  const stats = (xs) => {
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    return { mean, variance: xs.reduce((s, x) => s + (x - mean) ** 2, 0) / (xs.length - 1) };
  };
  const sa = stats(a);
  const sb = stats(b);
  const t = (sa.mean - sb.mean) / Math.sqrt(sa.variance / N + sb.variance / N);
  // With ~2×10⁵ degrees of freedom the t distribution is the normal one.
  const p = 2 * (1 - normalCdf(Math.abs(t)));
  emit({
    name: 'api_key_check_timing_p',
    unit: 'p',
    value: Math.round(p * 1000) / 1000,
    n: N,
    what: `Welch t-test, key differing at its first vs last character: means ${round(sa.mean, 0)} vs ${round(sb.mean, 0)} ns, t = ${round(t)}`,
    goal: '> 0.01 (no detectable difference)',
    goal_met: p > 0.01,
  });
}

/** Φ(x) by the Abramowitz–Stegun 7.1.26 erf approximation (error < 1.5e-7). */
function normalCdf(x) {
  const z = Math.abs(x) / Math.SQRT2;
  const k = 1 / (1 + 0.3275911 * z);
  const erf = 1 - ((((1.061405429 * k - 1.453152027) * k + 1.421413741) * k - 0.284496736) * k + 0.254829592) * k * Math.exp(-z * z);
  return x >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}

export async function run(emit) {
  await tokenTiming(emit);
  const { Agent } = await import('node:http');
  keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });
  const dir = mkdtempSync(join(tmpdir(), 'homeagent-bench-webui-'));
  const llm = await startLlm();
  const env = {
    ...process.env,
    HOMEAGENT_DATA_DIR: join(dir, 'data'),
    HOMEAGENT_LOG_LEVEL: 'warn',
    HOMEAGENT_PLUGIN_WEBUI_PORT: '0',
    HOMEAGENT_LLM_BASE_URL: `http://127.0.0.1:${llm.address().port}/v1`,
    HOMEAGENT_LLM_API_KEY: 'bench',
    HOMEAGENT_LLM_MODEL: 'bench',
    // Every bench input is new text anyway; the duplicate window stays out of the measurement.
    HOMEAGENT_AGENT_DEDUPE_WINDOW_MS: '0',
  };
  delete env.HOMEAGENT_CONFIG;
  delete env.NOTIFY_SOCKET;
  const child = spawn(process.execPath, [MAIN, 'run'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  try {
    const socketPath = join(dir, 'data', 'run', 'homeagent.sock');
    const credentials = await waitForCredentials(socketPath, child);
    const base = credentials.url.replace(/\/$/, '');
    const auth = { 'x-api-key': credentials.api_key, 'content-type': 'application/json' };

    const direct = await timeRequests('agent.chat over the CLI socket', (i) => rpc(socketPath, 'agent.chat', { text: `direct ${i}` }));
    const api = await timeRequests('POST /api/v1/chat (wait)', async (i) => {
      const res = await http(`${base}/api/v1/chat`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ text: `api ${i}`, wait: true }),
      });
      if (res.status !== 200) throw new Error(`/api/v1/chat answered ${res.status}: ${res.body}`);
    });
    const openai = await timeRequests('POST /v1/chat/completions', async (i) => {
      const res = await http(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${credentials.api_key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'homeagent', messages: [{ role: 'user', content: `openai ${i}` }] }),
      });
      if (res.status !== 200) throw new Error(`/v1/chat/completions answered ${res.status}: ${res.body}`);
    });
    for (const m of [api, openai]) {
      emit({
        name: m.label.startsWith('POST /api') ? 'webui_chat_p95_ms' : 'openai_chat_p95_ms',
        unit: 'ms',
        value: round(m.p95),
        n: RUNS,
        what: `${m.label}, LLM on loopback answering at once (the whole time is overhead); p50 ${round(m.p50)} ms`,
        agent_chat_over_cli_socket_p95_ms: round(direct.p95),
      });
    }

    // Slow clients (reliability-and-performance.md A6): 500 sockets that send their headers a
    // byte at a time must not delay an authenticated request beyond 1 s.
    const slow = await openSlowClients(new URL(base), SLOW_CLIENTS);
    try {
      const during = await timeRequests('GET /api/v1/status with 500 slow clients', async () => {
        // A new connection each time, as a phone arriving during the attack would open.
        const res = await http(`${base}/api/v1/status`, { headers: { 'x-api-key': credentials.api_key }, fresh: true });
        if (res.status !== 200) throw new Error(`/api/v1/status answered ${res.status} while slow clients were connected`);
      });
      emit({
        name: 'webui_request_with_slow_clients_p95_ms',
        unit: 'ms',
        value: round(during.p95),
        n: RUNS,
        what: `an authenticated GET /api/v1/status while ${slow.open()} slowloris sockets are open (headers one byte every 200 ms); p50 ${round(during.p50)} ms`,
        goal: '<= 1000',
        goal_met: during.p95 <= 1000,
      });
    } finally {
      slow.close();
    }

    // The page as a browser loads it the first time: index.html, then every script, style and
    // icon it names, each asked for with Accept-Encoding: gzip; bytes on the wire are counted.
    const gzip = { 'accept-encoding': 'gzip' };
    const index = await http(`${base}/`, { headers: gzip });
    if (index.status !== 200) throw new Error(`GET / answered ${index.status}`);
    const { gunzipSync } = await import('node:zlib');
    const html = (index.headers['content-encoding'] === 'gzip' ? gunzipSync(index.body) : index.body).toString('utf8');
    const assets = [...html.matchAll(/(?:src|href)="(\/[^"]+)"/g)].map((m) => m[1]);
    let bytes = index.body.length;
    const files = [{ path: '/', bytes: index.body.length }];
    for (const path of new Set(assets)) {
      const res = await http(`${base}${path}`, { headers: gzip });
      if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}`);
      bytes += res.body.length;
      files.push({ path, bytes: res.body.length });
    }
    const kb = bytes / 1024;
    emit({
      name: 'webui_first_load_kb',
      unit: 'KB',
      value: round(kb, 1),
      n: files.length,
      what: 'index.html and every file it references, gzip-encoded as transferred',
      files,
      goal: '<= 300',
      goal_met: kb <= 300,
    });
  } finally {
    child.kill('SIGTERM');
    await exited;
    keepAlive.destroy();
    llm.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

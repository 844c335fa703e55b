// Issue 32's soak: chat turns in Chinese and English through the CLI socket (agent.chat, as
// `homeagentctl chat` sends them) to the built daemon started with the unit's node flags, memory on,
// against a loopback OpenAI-compatible server that answers at once (so the time is the daemon's).
// Reports RSS every tenth of the run and at the end, the turn p95 of the first and the last
// thousand turns, and where the memory is at the end (`daemon.memory`: heap by space, children).
// Goals: RSS <= 160 MB throughout; p95 at the end within 1.25x of the first thousand turns.
// 10,000 turns (about 5-10 minutes here); --quick: 200; SOAK_TURNS=<n> for another count.
// SOAK_PROFILE=small runs the daemon under `core.profile: small` (src/config/profiles.ts).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rpc } from './cli-socket.mjs';
import { quick, size } from './quick.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const TURNS = Number(process.env.SOAK_TURNS) || size(10_000, 200);
const PROFILE = process.env.SOAK_PROFILE || 'standard';
const WINDOW = Math.min(1000, Math.floor(TURNS / 4));
const RSS_GOAL_MB = 160;

const chunk = (delta, finish = null) =>
  `data: ${JSON.stringify({ id: 's', object: 'chat.completion.chunk', model: 'soak', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/** Answers every request with a short sentence about what it was told. */
function startModel() {
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => {
      raw += d;
    });
    req.on('end', () => {
      let last = '';
      try {
        const body = JSON.parse(raw);
        last = String(body.messages?.filter((m) => m.role === 'user').pop()?.content ?? '').slice(0, 40);
      } catch {}
      const text = /[\u4e00-\u9fff]/.test(last) ? `好的，我记住了：${last}` : `Noted: ${last}`;
      if (req.url?.includes('/models')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ object: 'list', data: [{ id: 'soak', object: 'model' }] }));
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`${chunk({ role: 'assistant', content: text })}${chunk({}, 'stop')}data: [DONE]\n\n`);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const EN = [
  'my sister Anna lives in Lyon and works at a bakery',
  'remind me that the spare key is under the blue flower pot',
  'what should we cook tonight with potatoes and leeks',
  'the plumber comes on Tuesday morning at nine',
  'our dog Max needs his vaccination in March',
  'I parked the car on level two near the lift',
];
const ZH = [
  '我女儿叫小雨，她今年七岁',
  '明天下午三点要去医院复查',
  '车停在地下车库二层',
  '冰箱里还有两盒牛奶和一些鸡蛋',
  '周末我们打算去爬山',
  '奶奶喜欢喝龙井茶',
];

/** A different sentence each turn (the daemon drops a repeat within its dedupe window). */
const sentence = (i) => (i % 2 === 0 ? `${EN[(i / 2) % EN.length]} (${i})` : `${ZH[((i - 1) / 2) % ZH.length]}（第${i}次）`);

const rssMb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? Number.NaN) / 1024;
const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
const p95 = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(0.95 * s.length))];
};

async function waitForSocket(socketPath, child, deadlineMs = 30_000) {
  const end = Date.now() + deadlineMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the daemon exited (${child.exitCode})`);
    try {
      await rpc(socketPath, 'version', {});
      return;
    } catch {}
    if (Date.now() > end) throw new Error('the daemon did not open its CLI socket');
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function run(emit) {
  const model = await startModel();
  const dir = mkdtempSync(join(tmpdir(), 'ha-bench-soak-'));
  const socketPath = join(dir, 'homeagent.sock');
  const env = {
    PATH: process.env.PATH,
    HOME: dir,
    HOMEAGENT_DATA_DIR: join(dir, 'data'),
    HOMEAGENT_RUNTIME_DIR: dir,
    HOMEAGENT_LLM_BASE_URL: `http://127.0.0.1:${model.address().port}/v1`,
    HOMEAGENT_LLM_API_KEY: 'soak',
    HOMEAGENT_LLM_MODEL: 'soak',
    // No sound card here: the microphone would only retry.
    HOMEAGENT_PLUGIN_VOICE_ENABLED: 'false',
    HOMEAGENT_PLUGIN_WEBUI_ENABLED: 'false',
    HOMEAGENT_PROFILE: PROFILE,
  };
  // The node flags of systemd/homeagent.service.
  const child = spawn(process.execPath, ['--max-old-space-size=192', '--max-semi-space-size=2', join(root, 'dist/src/main.js'), 'run'], {
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    await waitForSocket(socketPath, child);
    const times = [];
    const rss = [{ turn: 0, mb: round(rssMb(child.pid)) }];
    let failed = 0;
    const every = Math.max(1, Math.floor(TURNS / 10));
    for (let i = 0; i < TURNS; i++) {
      const t0 = performance.now();
      const receipt = await rpc(socketPath, 'agent.chat', { text: sentence(i) });
      times.push(performance.now() - t0);
      if (receipt.status !== 'done') failed += 1;
      if ((i + 1) % every === 0) rss.push({ turn: i + 1, mb: round(rssMb(child.pid)) });
    }
    const where = await rpc(socketPath, 'daemon.memory', {});
    const maxRss = Math.max(...rss.map((r) => r.mb));
    const first = p95(times.slice(0, WINDOW));
    const last = p95(times.slice(-WINDOW));
    emit({
      name: 'soak_rss_mb',
      unit: 'MB',
      value: maxRss,
      n: TURNS,
      what: `highest daemon RSS over ${TURNS} chat turns (English and Chinese alternating, memory on, unit node flags, profile ${PROFILE}), sampled every ${every} turns`,
      profile: PROFILE,
      samples: rss,
      failed_turns: failed,
      at_end: {
        heap_used_mb: round(where.heap_used_bytes / 1048576),
        heap_total_mb: round(where.heap_total_bytes / 1048576),
        external_mb: round(where.external_bytes / 1048576),
        rss_file_mb: round((where.rss_file_bytes ?? 0) / 1048576),
        heap_spaces_mb: Object.fromEntries(where.heap_spaces.map((s) => [s.space, round(s.used_bytes / 1048576)])),
        children_rss_mb: round(where.children_rss_bytes / 1048576),
      },
      ...(quick ? {} : { goal: `value <= ${RSS_GOAL_MB}`, goal_met: maxRss <= RSS_GOAL_MB }),
    });
    emit({
      name: 'soak_turn_p95_ms',
      unit: 'ms',
      value: round(last),
      n: WINDOW,
      what: `turn p95 (agent.chat over the CLI socket) of the last ${WINDOW} turns; first_window_p95_ms is the first ${WINDOW}`,
      first_window_p95_ms: round(first),
      ratio_to_first_window: round(last / first, 2),
      ...(quick ? {} : { goal: 'ratio_to_first_window <= 1.25', goal_met: last / first <= 1.25 }),
    });
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', resolve)));
    model.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

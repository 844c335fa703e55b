// plugin_rpc_roundtrip_ms: one tool call into an out-of-process plugin and back (JSON-RPC over the
// child's stdio, under the permission model, as the daemon runs it), measured through the
// registered tool's execute like the agent's executor calls it. plugin_idle_rss_mb: the resident
// size (VmRSS) of an idle plugin process right after it started.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { size } from './quick.mjs';

const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'src');
const load = (path) => import(join(dist, path));

const WARMUP = size(200, 10);
const RUNS = size(2000, 20);

const PLUGIN = `
export default {
  kind: 'homeagent-plugin',
  create(ctx) {
    return {
      async start() {
        ctx.tools.register({
          name: 'bench_echo',
          description: 'echoes its argument',
          parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
          tier: 'read',
          execute: async ({ text }) => ({ text }),
        });
      },
      async stop() {},
    };
  },
};
`;

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const round = (ms) => Math.round(ms * 1000) / 1000;

function residentMb(pid) {
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

export async function run(emit) {
  const [{ ToolRegistry }, { LogManager }, { defaultConfig }, { ProcessPlugin }] = await Promise.all([
    load('agent/tool-registry.js'),
    load('log/logger.js'),
    load('config/loader.js'),
    load('plugin/process/process-plugin.js'),
  ]);
  const root = mkdtempSync(join(tmpdir(), 'ha-bench-plugin-'));
  const plugins = [];
  try {
    const logs = new LogManager({ level: 'silent', levels: {} });
    const tools = new ToolRegistry({ log: logs.child('tools') });
    const limits = defaultConfig().core.plugins;
    const start = async (name) => {
      const dir = join(root, 'plugins', name);
      const data = join(root, 'plugin-data', name);
      mkdirSync(dir, { recursive: true });
      mkdirSync(data, { recursive: true });
      writeFileSync(join(dir, 'index.mjs'), PLUGIN.replaceAll('bench_echo', `${name}_echo`));
      const unavailable = () => Promise.reject(new Error('not in the benchmark'));
      const context = {
        name,
        trust: 'external',
        log: logs.child(`plugin.${name}`),
        audit: () => {},
        settings: { get: () => undefined, set: () => {}, onChange: () => () => {} },
        events: { subscribe: () => () => {}, publish: () => {} },
        control: { call: unavailable, methods: () => [] },
        paths: { data, runtime: root, root: dir },
        io: { registerOutputChannel: () => () => {}, injectInput: unavailable, injectInterrupt: unavailable },
        tools: { register: (definition) => tools.register({ ...definition, owner: `plugin:${name}` }) },
        stages: { register: () => () => {} },
        memory: { recall: unavailable, commit: unavailable },
        // As PluginKnowledge of src/sdk/plugin.ts: a daemon without a library (the benchmark's).
        knowledge: {
          available: () => false,
          search: unavailable,
          list: unavailable,
          tree: unavailable,
          categories: unavailable,
          categoryCounts: unavailable,
          add: unavailable,
        },
        llm: { chat: unavailable },
        http: { route: () => () => {} },
      };
      const plugin = new ProcessPlugin({
        manifest: { name, version: '1.0.0', description: 'bench', engine: '*', kind: 'process', entry: 'index.mjs' },
        dir,
        context,
        limits: () => limits,
        dataDir: root,
        log: context.log,
        reportState: (state, detail) => {
          throw new Error(`the benchmark plugin ${name} went ${state}: ${detail}`);
        },
      });
      plugins.push(plugin);
      await plugin.start(new AbortController().signal);
      return plugin;
    };

    const idle = await start('idle');
    const idleRss = residentMb(idle.pid);

    await start('bench');
    const tool = tools.get('bench_echo');
    const toolContext = { signal: new AbortController().signal, task_id: 'bench', call_id: 'c', source: 'bench', channel: 'bench' };
    const times = [];
    for (let i = 0; i < WARMUP + RUNS; i++) {
      const started = performance.now();
      const result = await tool.execute({ text: `call ${i}` }, toolContext);
      if (i >= WARMUP) times.push(performance.now() - started);
      if (result.text !== `call ${i}`) throw new Error(`unexpected answer: ${JSON.stringify(result)}`);
    }
    times.sort((a, b) => a - b);
    const p50 = percentile(times, 50);
    const p95 = percentile(times, 95);
    emit({
      name: 'plugin_rpc_roundtrip_ms',
      unit: 'ms',
      value: round(p95),
      p50: round(p50),
      p95: round(p95),
      n: RUNS,
      what: 'one tool call into an out-of-process plugin and back (JSON-RPC over stdio, permission model on), sequential, after warm-up; value is p95',
      goal: 'p95 <= 2',
      goal_met: p95 <= 2,
    });
    emit({
      name: 'plugin_idle_rss_mb',
      unit: 'MB',
      value: Math.round(idleRss * 10) / 10,
      n: 1,
      what: `VmRSS of one idle plugin process just after start (heap limit ${limits.process_heap_mb} MB)`,
    });
  } finally {
    for (const plugin of plugins) await plugin.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

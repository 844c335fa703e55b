// The seq plugin's own cost, on the built plugin over a real tool registry and a real
// sequences.db (synchronous FULL), with tools that do nothing so only the plugin is measured:
// seq_run_10_steps_ms: seq_run of ten groups of one call each (checks, substitution of $args and
//   $results, the tier and the run), p50/p99 (goal p99 <= 10 ms: a "good night" of ten steps adds
//   no wait a person notices to what its tools take);
// seq_step_overhead_us: (that run − ten direct calls of the same tool) / 10, median;
// seq_create_ms: seq_create of the largest definition the defaults allow (20 groups × 20 calls),
//   checked whole and written (goal p99 <= 50 ms).
// The tails on a shared machine are its other load and the disk's fsync; the GC fields show the rest.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { size } from './quick.mjs';
import { spread, watchGc } from './stats.mjs';

const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const load = (path) => import(join(dist, path));

const RUNS = size(2000, 20);
const CREATES = size(200, 5);
const SETTINGS = {
  max_sequences: 200,
  max_groups: 20,
  max_calls_per_group: 20,
  max_call_depth: 4,
  run_timeout_s: 120,
  max_definition_chars: 200000,
  run_by_name: true,
};

export async function run(emit) {
  const [{ SeqPlugin }, { ToolRegistry }, { StageRegistry }, { ControlRegistry }, generation, { LogManager }, { openPluginDatabase }] =
    await Promise.all([
      load('plugins/seq/index.js'),
      load('src/agent/tool-registry.js'),
      load('src/agent/stage-registry.js'),
      load('src/plugin/control-registry.js'),
      load('src/plugin/plugin-generation.js'),
      load('src/log/logger.js'),
      load('src/sdk/database.js'),
    ]);
  const dir = mkdtempSync(join(tmpdir(), 'ha-bench-seq-'));
  try {
    const log = new LogManager({ level: 'silent', levels: {} }).child('bench');
    const tools = new ToolRegistry({ log });
    const stages = new StageRegistry(log);
    const control = new ControlRegistry();
    tools.register({
      name: 'noop',
      description: 'does nothing',
      owner: 'plugin:bench',
      tier: 'act',
      parameters: { type: 'object', properties: { n: { type: 'integer' }, text: { type: 'string' } } },
      execute: (args) => ({ n: args.n ?? 0 }),
    });
    const owner = 'plugin:seq';
    const ctx = {
      name: 'seq',
      trust: 'builtin',
      log,
      audit: () => {},
      settings: { get: (key) => SETTINGS[key], values: () => SETTINGS, set: () => {}, onChange: () => () => {} },
      paths: { data: dir, runtime: dir, root: dir },
      // As the kernel opens it (src/plugin/plugin-generation.ts), without the store's listing.
      database: {
        open: (request) =>
          openPluginDatabase({
            name: `seq.${request.name}`,
            file: join(dir, `${request.name}.db`),
            component: 'seq',
            migrations: request.migrations,
            log,
          }),
      },
      tools: {
        register: (definition) => tools.register({ ...definition, owner }),
        describe: (name) => generation.describeTool(tools, name),
        call: (name, args, context) => generation.callTool(tools, name, args, context),
      },
      stages: { register: (stage, handler, scope) => stages.register(owner, stage, handler, scope) },
      control: { call: (m, p, c) => control.call(m, p, c), methods: () => control.methods(), register: (m) => control.register(m) },
    };
    const plugin = new SeqPlugin(ctx);
    await plugin.start();
    const context = () => ({
      signal: new AbortController().signal,
      task_id: 't',
      call_id: 'c',
      source: 'bench',
      channel: 'bench',
      trust: 'owner',
    });
    const call = async (name, args) => {
      const def = tools.get(name);
      const check = tools.validate(def, JSON.stringify(args));
      if (!check.ok) throw new Error(JSON.stringify(check.error));
      return def.execute(check.args, context());
    };

    const groups = Array.from({ length: 10 }, (_, i) => ({
      calls: [{ tool: 'noop', args: i === 0 ? { n: '$args.n' } : { n: `$results.r${i - 1}.n`, text: 'after $results.r0.n' }, as: `r${i}` }],
    }));
    await call('seq_create', { name: 'ten', in: { n: 'integer' }, groups });
    const runs = [];
    const direct = [];
    const runGc = watchGc();
    for (let i = 0; i < RUNS; i++) {
      let started = performance.now();
      await call('seq_run', { name: 'ten', args: { n: i } });
      runs.push(performance.now() - started);
      started = performance.now();
      for (let j = 0; j < 10; j++) await call('noop', { n: j });
      direct.push(performance.now() - started);
    }
    const runSpread = { ...spread(runs, [50, 99]), ...runGc() };
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    emit({
      name: 'seq_run_10_steps_ms',
      unit: 'ms',
      value: runSpread.p99,
      n: RUNS,
      ...runSpread,
      goal: 'p99 <= 10',
      goal_met: runSpread.p99 <= 10,
    });
    emit({
      name: 'seq_step_overhead_us',
      unit: 'us',
      value: Math.round(((median(runs) - median(direct)) / 10) * 1000),
      n: RUNS,
    });

    const big = Array.from({ length: 20 }, (_, g) => ({
      name: `g${g}`,
      calls: Array.from({ length: 20 }, (_, c) => ({
        tool: 'noop',
        args: { n: c, text: g > 0 ? `$results.s${g - 1}_0.n` : 'x' },
        as: `s${g}_${c}`,
      })),
    }));
    const creates = [];
    const createGc = watchGc();
    for (let i = 0; i < CREATES; i++) {
      const started = performance.now();
      await call('seq_create', { name: `big ${i % 50}`, groups: big });
      creates.push(performance.now() - started);
    }
    const createSpread = { ...spread(creates, [50, 99]), ...createGc() };
    emit({
      name: 'seq_create_ms',
      unit: 'ms',
      value: createSpread.p99,
      n: CREATES,
      ...createSpread,
      goal: 'p99 <= 50',
      goal_met: createSpread.p99 <= 50,
    });
    await plugin.stop();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

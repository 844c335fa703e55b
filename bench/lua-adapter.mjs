// lua_adapter_transform_us: what one LLM round costs in a Lua adapter, transform_request plus
// transform_response, through the public LuaAdapter API of the built daemon (the script runs in
// its sandbox worker, so the figure includes the hop to the worker and back). The request is a
// typical chat turn with two tools; the response is the vendor's recorded answer with tool calls.
// Every shipped adapter is measured; the value is the slowest adapter's median. `engine_us` is
// the same work on an engine in this thread (no worker hop), to show where the time goes.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { size } from './quick.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const WARMUP = size(300, 10);
const RUNS = size(1500, 20);

/** The recorded tool-call answer each adapter reads. */
const RESPONSES = {
  deepseek: 'deepseek/tools.json',
  anthropic: 'anthropic/tools.json',
  gemini: 'gemini/tools.json',
  qwen: 'qwen/tools.json',
  zhipu: 'zhipu/tools.json',
  moonshot: 'moonshot/tools.json',
};

const REQUEST = {
  model: 'bench-model',
  stream: false,
  temperature: 0.7,
  max_tokens: 1024,
  tool_choice: 'auto',
  messages: [
    { role: 'system', content: 'You are HomeAgent, the assistant of this house. Answer briefly; use the tools to act.' },
    { role: 'user', content: 'Turn on the kitchen light and tell me the temperature in the living room.' },
  ],
  tools: [
    {
      name: 'set_light',
      description: 'Switch a light on or off',
      parameters: {
        type: 'object',
        properties: { room: { type: 'string', enum: ['kitchen', 'living_room', 'bedroom'] }, on: { type: 'boolean' } },
        required: ['room', 'on'],
      },
    },
    {
      name: 'get_temperature',
      description: 'Read the temperature of a room',
      parameters: { type: 'object', properties: { room: { type: 'string' } }, required: ['room'] },
    },
  ],
};

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

export async function run(emit) {
  const { LuaAdapter } = await import(join(root, 'dist/src/llm/lua/lua-adapter.js'));
  const { SandboxEngine } = await import(join(root, 'dist/src/lua/lua-engine.js'));
  const { adapterLibraries } = await import(join(root, 'dist/src/llm/lua/lua-library.js'));
  const { pino } = await import('pino');
  const logger = pino({ level: 'silent' });
  const byAdapter = {};
  const engineOnly = {};
  const requestText = JSON.stringify(REQUEST);
  for (const [name, file] of Object.entries(RESPONSES)) {
    const response = readFileSync(join(root, 'test/fixtures/llm', file), 'utf8');
    const engine = await SandboxEngine.create(
      {
        time_limit_ms: 1000,
        memory_limit_bytes: 64 * 1024 * 1024,
        max_string_bytes: 16 * 1024 * 1024,
        max_http_per_call: 8,
        max_log_lines_per_call: 200,
      },
      { log() {}, http: async () => ({ ok: false, error: 'no network in the benchmark' }) },
    );
    try {
      const source = readFileSync(join(root, 'adapters', `${name}.lua`), 'utf8');
      await engine.load(source, `@adapters/${name}.lua`, adapterLibraries(source));
      const times = [];
      for (let i = 0; i < WARMUP + RUNS; i++) {
        const started = performance.now();
        await engine.call('transform_request', [requestText]);
        await engine.call('transform_response', [response]);
        if (i >= WARMUP) times.push((performance.now() - started) * 1000);
      }
      engineOnly[name] = round(median(times));
    } finally {
      engine.close();
    }
    const adapter = await LuaAdapter.load(name, { logger, time_limit_ms: 1000, http_timeout_ms: 30000, http_max_bytes: 4194304 });
    try {
      const times = [];
      for (let i = 0; i < WARMUP + RUNS; i++) {
        const started = performance.now();
        await adapter.transformRequest(REQUEST);
        const result = await adapter.transformResponse(response, 'bench-model');
        const took = performance.now() - started;
        if (result.tool_calls.length === 0) throw new Error(`${name}: no tool calls in the transformed answer`);
        if (i >= WARMUP) times.push(took * 1000);
      }
      byAdapter[name] = round(median(times));
    } finally {
      await adapter.close();
    }
  }
  const slowest = Math.max(...Object.values(byAdapter));
  emit({
    name: 'lua_adapter_transform_us',
    unit: 'us',
    value: slowest,
    n: RUNS,
    what: 'transform_request + transform_response (two tools; a tool-call answer) through LuaAdapter, sandbox worker hop included; median per adapter, value is the slowest adapter',
    by_adapter: byAdapter,
    engine_us: engineOnly,
    goal: '<= 200',
    goal_met: slowest <= 200,
  });
}

// Runs alone as `node bench/lua-adapter.mjs` too.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await run((o) => process.stdout.write(`${JSON.stringify(o)}\n`));
}

// A spoken or typed command to the device action, without the LLM (issue 11), on the real modules:
// the entity registry on a temporary home.db (synchronous NORMAL, write-behind, like the daemon)
// holding the intent bench's home of 200 entities in 15 areas, the tool registry and executor with
// the owner confirmation gate and the entity tools, and the intent engine's on_input hook.
// intent_command_to_action_p95: from handing the input to the on_input hook (recognise → intent
//   handler → entity_call through the tool executor → registry.call) to the device's call handler
//   running (goal p95 <= 20 ms).
// intent_command_to_answer_p95: the same up to the answer text being ready.
// intent_daemon_command_roundtrip_p95: the whole way in the real daemon, no LLM configured: a
//   command sent with agent.chat over the CLI socket (a new connection per call, as homeagentctl
//   does) → input scheduler → memory records the input (synchronous FULL) → on_input → entity_call →
//   the GPIO plugin's simulated output pin → the answer back on the socket. The pin switches before
//   the answer is sent, so this bounds command → device action from above.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rpc } from './cli-socket.mjs';
import { buildHome } from './intent.mjs';
import { size } from './quick.mjs';
import { spread, watchGc } from './stats.mjs';

const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const load = (path) => import(join(dist, path));

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const WARMUP_ROUNDS = size(10, 1);
const DAEMON_WARMUP = size(10, 1);
const DAEMON_RUNS = size(100, 5);
const TIMED_ROUNDS = size(60, 2);
const GOAL_P95_MS = 20;

// Commands that switch something: [sentence, entity id that must be called].
const COMMANDS = [
  ['turn on the kitchen light 1', 'light.e0'],
  ['turn off the kitchen light 1', 'light.e0'],
  ['打开客厅灯1', 'light.e1'],
  ['关闭客厅灯1', 'light.e1'],
  ['set the master bedroom light 1 brightness to 40%', 'light.e2'],
  ['把书房风扇1打开', 'fan.e50'],
  ['turn off the study fan 1', 'fan.e50'],
  ['turn on the lights in the garage', 'light.e10'],
  ['关掉车库的灯', 'light.e10'],
];

export async function run(emit) {
  await inProcess(emit);
  await throughDaemon(emit);
}

async function inProcess(emit) {
  const [{ ManagedDatabase }, { EntityRegistry }, { EventBus }, { LogManager }, { ToolRegistry }, { StageRegistry }, { ToolExecutor }] =
    await Promise.all([
      load('src/store/database.js'),
      load('src/home/entity-registry.js'),
      load('src/events/event-bus.js'),
      load('src/log/logger.js'),
      load('src/agent/tool-registry.js'),
      load('src/agent/stage-registry.js'),
      load('src/agent/tool-executor.js'),
    ]);
  const [{ ConfirmationGate }, { entityTools }, { createIntentEngine }, { newStageContext }] = await Promise.all([
    load('src/agent/confirmation-gate.js'),
    load('src/home/entity-tools.js'),
    load('src/intent/intent-engine.js'),
    load('src/agent/agent.js'),
  ]);
  const dir = mkdtempSync(join(tmpdir(), 'ha-bench-intent-'));
  const logs = new LogManager({ level: 'silent', levels: {} });
  const clock = { now: () => Date.now(), monotonic: () => performance.now() };
  const database = ManagedDatabase.open(
    { name: 'home', file: join(dir, 'home.db'), synchronous: 'NORMAL' },
    { busyTimeoutMs: 2000, startupCheck: 'off', log: logs.child('store'), clock },
  );
  const events = new EventBus(logs.child('events'));
  const home = buildHome();
  const registry = new EntityRegistry({
    database: () => database,
    events,
    log: logs.child('home'),
    clock,
    // The bench home's rooms as configured areas, with their Chinese names as aliases.
    settings: () => ({
      areas: home.areas.map((area) => ({ id: area.name.toLowerCase().replaceAll(' ', '_'), name: area.name, aliases: area.aliases })),
      history_raw_days: 7,
      history_days: 365,
      history_period_minutes: 60,
      history_max_rows: 1_000_000,
      maintenance_interval_ms: 3_600_000,
    }),
  });
  const shutdown = new AbortController();
  await registry.start(shutdown.signal);

  // The bench home's entities as registered devices; the id is e<n> so the commands can name them.
  let called = { id: '', at: 0 };
  home.entities.forEach((entity, index) => {
    const handle = registry.register('plugin:bench', {
      domain: entity.domain,
      object_id: `e${index}`,
      name: entity.name,
      aliases: entity.aliases,
      area: entity.area,
      ...(entity.device_class !== undefined && { device_class: entity.device_class }),
      initial_state: 'off',
      call: async (service) => {
        // The first device a command reaches ("the lights in the garage" reaches three, in id order).
        if (called.id === '') called = { id: handle.entity_id, at: performance.now() };
        handle.update(service === 'turn_off' ? 'off' : 'on');
      },
    });
  });

  const tools = new ToolRegistry({ log: logs.child('tools') });
  for (const definition of entityTools(registry)) tools.register(definition);
  const stages = new StageRegistry(logs.child('stages'));
  const executor = new ToolExecutor({
    registry: tools,
    stages,
    gate: new ConfirmationGate({ preauthorized: () => [], ttlMs: () => 300_000, now: () => Date.now() }),
    limits: () => ({ tool_timeout_ms: 30_000, tool_output_max_chars: 20_000, max_parallel_tools: 4 }),
    log: logs.child('tools'),
  });
  const engine = createIntentEngine({
    entities: registry,
    events,
    executeBatch: (calls, options) => executor.executeBatch(calls, options),
    hasTool: (name) => tools.get(name) !== undefined,
    channels: () => [],
    send: async () => {},
    findList: () => undefined,
    settings: () => ({
      enabled: true,
      min_confidence: 0.85,
      near_min_similarity: 0.6,
      followup_quiet_s: 120,
      recompile_delay_ms: 1000,
      weather_entity: '',
      broadcast_channels: [],
      source_areas: [],
    }),
    modelAvailable: () => false,
    isMachineInput: () => false,
    now: () => Date.now(),
    log: logs.child('intent'),
  });
  engine.recognizer.current();

  let seq = 0;
  const once = async ([text, entityId]) => {
    const input = {
      id: `in-${++seq}`,
      source: 'cli',
      channel: 'cli',
      // The person at the CLI socket, as the daemon stamps it (the stage reads the sender's trust).
      sender: { trust: 'owner', id: 'cli', proof: 'the CLI socket' },
      type: 'text',
      payload: text,
      meta: {},
      received_at: Date.now(),
      level: 0,
    };
    const ctx = newStageContext(`task-${seq}`, input);
    called = { id: '', at: 0 };
    const started = performance.now();
    await engine.onInput(ctx);
    const answered = performance.now();
    if (called.id !== entityId)
      throw new Error(`"${text}" called ${called.id || 'nothing'} instead of ${entityId} (answer: ${ctx.response})`);
    return { action: called.at - started, answer: answered - started };
  };

  try {
    for (let i = 0; i < WARMUP_ROUNDS; i++) for (const command of COMMANDS) await once(command);
    const action = [];
    const answer = [];
    const gc = watchGc();
    for (let i = 0; i < TIMED_ROUNDS; i++) {
      for (const command of COMMANDS) {
        const times = await once(command);
        action.push(times.action);
        answer.push(times.answer);
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    const gcSeen = gc();
    for (const [name, list, upTo] of [
      ['intent_command_to_action_p95', action, "the device's call handler running"],
      ['intent_command_to_answer_p95', answer, 'the answer text being ready'],
    ]) {
      const s = spread(list, [50, 95, 99]);
      emit({
        name,
        unit: 'ms',
        value: s.p95,
        ...s,
        ...gcSeen,
        n: list.length,
        commands: COMMANDS.length,
        entities: home.entities.length,
        what: `a command (English and Chinese: on/off by name and by area, brightness) handed to the intent engine's on_input hook, up to ${upTo}: recognise, intent handler, entity_call through the tool executor (hooks, validation, confirmation gate), entity registry call with write-behind to home.db; 200 entities; value is p95`,
        goal: `p95 <= ${GOAL_P95_MS}`,
        goal_met: s.p95 <= GOAL_P95_MS,
      });
    }
  } finally {
    engine.close();
    shutdown.abort();
    await registry.stop();
    database.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function throughDaemon(emit) {
  const dir = mkdtempSync(join(tmpdir(), 'ha-bench-intent-daemon-'));
  const config = join(dir, 'config.yaml');
  const pin = {
    id: 'kitchen_light',
    name: 'Kitchen Light',
    aliases: ['厨房灯'],
    area: 'kitchen',
    bcm: 17,
    direction: 'out',
    domain: 'light',
  };
  writeFileSync(config, JSON.stringify({ plugin: { gpio: { backend: 'simulated', pins: [pin] } } }));
  const env = {
    ...process.env,
    HOMEAGENT_CONFIG: config,
    HOMEAGENT_DATA_DIR: join(dir, 'data'),
    HOMEAGENT_LOG_LEVEL: 'warn',
    HOMEAGENT_PLUGIN_WEBUI_PORT: '0',
    // The same two commands alternate; the duplicate window stays out of the measurement.
    HOMEAGENT_AGENT_DEDUPE_WINDOW_MS: '0',
  };
  for (const key of ['NOTIFY_SOCKET', 'HOMEAGENT_LLM_BASE_URL', 'HOMEAGENT_LLM_API_KEY', 'HOMEAGENT_LLM_SOURCES']) delete env[key];
  const child = spawn(process.execPath, [join(root, 'dist/src/main.js'), 'run'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const socketPath = join(dir, 'data', 'run', 'homeagent.sock');
  try {
    for (let i = 0; ; i++) {
      if (child.exitCode !== null) throw new Error(`the daemon exited with ${child.exitCode}`);
      try {
        await rpc(socketPath, 'entities.get', { entity: 'light.kitchen_light' });
        break;
      } catch (error) {
        if (i > 300) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    const commands = [
      ['turn on the kitchen light', 'Turned on Kitchen Light.', 'on'],
      ['关闭厨房灯', '已关闭厨房灯。', 'off'],
    ];
    const times = [];
    for (let i = 0; i < DAEMON_WARMUP + DAEMON_RUNS; i++) {
      const [text, expected, state] = commands[i % commands.length];
      const started = performance.now();
      const receipt = await rpc(socketPath, 'agent.chat', { text });
      const ms = performance.now() - started;
      if (receipt.text !== expected) throw new Error(`"${text}" answered ${JSON.stringify(receipt.text)}`);
      if (i >= DAEMON_WARMUP) times.push(ms);
      if (i === DAEMON_WARMUP) {
        const entity = (await rpc(socketPath, 'entities.get', { entity: 'light.kitchen_light' })).entity;
        if (entity.state !== state) throw new Error(`the light is ${entity.state} after "${text}"`);
      }
    }
    const s = spread(times, [50, 95, 99]);
    emit({
      name: 'intent_daemon_command_roundtrip_p95',
      unit: 'ms',
      value: s.p95,
      ...s,
      n: times.length,
      what: 'the real daemon without an LLM: agent.chat over the CLI socket (new connection per call) → scheduler → memory records the input (synchronous FULL) → on_input intent engine → entity_call → GPIO plugin (simulated pin) → answer on the socket; English and Chinese alternating; value is p95',
      goal: `p95 <= ${GOAL_P95_MS}`,
      goal_met: s.p95 <= GOAL_P95_MS,
    });
  } finally {
    child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

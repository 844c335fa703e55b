/**
 * The local intent engine on real parts: a real entity registry (home.db in a temp dir) with
 * devices that change state when called, the real tool registry and executor with the owner
 * confirmation gate, the entity tools, the list store on a real state database with its tools,
 * and the real timer plugin on a manual clock. Only the speakers are a recorded list.
 */
import { join } from 'node:path';
import { TimerPlugin } from '../../../plugins/timer/index.js';
import { newStageContext } from '../../../src/agent/agent.js';
import { ConfirmationGate } from '../../../src/agent/confirmation-gate.js';
import { StageRegistry } from '../../../src/agent/stage-registry.js';
import { ToolExecutor } from '../../../src/agent/tool-executor.js';
import type { StageContext } from '../../../src/agent/types.js';
import { entityTools } from '../../../src/home/entity-tools.js';
import type { EntityDefinition, EntityHandle, EntityInfo } from '../../../src/home/types.js';
import { createIntentEngine, type IntentEngineSettings } from '../../../src/intent/intent-engine.js';
import type { InputEvent } from '../../../src/io/types.js';
import { listTools } from '../../../src/lists/list-tools.js';
import type { InputSender } from '../../../src/shared/trust.js';
import { ManualTimerClock } from '../../helpers/manual-timer-clock.js';
import { createTestPluginContext } from '../../helpers/plugin-context.js';
import { OWNER } from '../../helpers/senders.js';
import { silentLogs } from '../fixtures/support.js';
import { openHome } from '../home/home-fixture.js';
import { openLists } from '../lists/list-fixture.js';

export const NOW = Date.UTC(2026, 0, 5, 8, 30, 0);

export interface Device {
  handle: EntityHandle;
  calls: Array<{ service: string; data: Record<string, unknown> }>;
}

interface Testdir {
  testdir(): string;
  teardown(fn: () => void | Promise<void>): void;
}

export async function intentRig(t: Testdir, settings: Partial<IntentEngineSettings> = {}) {
  const dir = t.testdir();
  // Configured areas with Chinese aliases: one home, spoken to in both languages.
  const home = openHome(t, {
    settings: {
      areas: [
        { id: 'kitchen', name: 'Kitchen', aliases: ['厨房'], floor: 'Ground Floor' },
        { id: 'living_room', name: 'Living Room', aliases: ['客厅'], floor: 'Ground Floor' },
        { id: 'attic', name: 'Attic', aliases: [], floor: 'Top Floor' },
      ],
    },
  });
  const clock = new ManualTimerClock(NOW);
  const tc = createTestPluginContext({
    name: 'timer',
    dataDir: join(dir, 'plugins'),
    settings: { max_duration_s: 86400, max_timers: 100 },
  });
  const timer = new TimerPlugin(tc.context, { clock });
  await timer.start();
  t.teardown(() => timer.stop());
  const lists = await openLists(t);
  const tools = tc.tools;
  for (const definition of entityTools(home.registry)) tools.register(definition);
  for (const definition of listTools(lists.lists)) tools.register(definition);
  const logs = silentLogs();
  const stages = new StageRegistry(logs.child('stages'));
  const gate = new ConfirmationGate({ preauthorized: () => [], ttlMs: () => 300_000, now: () => clock.now() });
  const executor = new ToolExecutor({
    registry: tools,
    stages,
    gate,
    limits: () => ({ tool_timeout_ms: 5000, tool_output_max_chars: 20_000, max_parallel_tools: 4 }),
    log: logs.child('tools'),
  });
  const config: IntentEngineSettings = {
    enabled: true,
    min_confidence: 0.85,
    near_min_similarity: 0.6,
    followup_quiet_s: 120,
    recompile_delay_ms: 1000,
    weather_entity: '',
    broadcast_channels: [],
    source_areas: [{ source: 'living_room_panel', area: 'living_room' }],
    ...settings,
  };
  let online = false;
  const speakers = [
    { name: 'kitchen_speaker', audio: true },
    { name: 'telegram', audio: false },
  ];
  const announced: Array<{ channel: string; payload: unknown }> = [];
  const engine = createIntentEngine({
    entities: home.registry,
    events: home.events,
    executeBatch: (calls, options) => executor.executeBatch(calls, options),
    hasTool: (name) => tools.get(name) !== undefined,
    channels: () => speakers,
    send: async (event) => void announced.push({ channel: event.channel, payload: event.payload }),
    findList: (name) => lists.lists.findList(name),
    settings: () => config,
    modelAvailable: () => online,
    isMachineInput: (ctx) => ctx.input.source === 'automation',
    now: () => clock.now(),
    log: logs.child('intent'),
  });
  t.teardown(() => engine.close());

  const devices = new Map<string, Device>();
  let seq = 0;

  return {
    registry: home.registry,
    lists: lists.lists,
    tools,
    gate,
    clock,
    config,
    announced,
    engine,
    setOnline(value: boolean) {
      online = value;
    },
    /** Registers a device that takes the state its calls imply (on/off, open/closed, locked, …). */
    device(
      definition: Omit<EntityDefinition, 'call'>,
      react?: (service: string, data: Record<string, unknown>) => string | number | null,
    ): Device {
      const device: Device = { handle: undefined as unknown as EntityHandle, calls: [] };
      device.handle = home.registry.register('plugin:test', {
        ...definition,
        call: async (service, data) => {
          device.calls.push({ service, data });
          device.handle.update(react ? react(service, data) : (STATE_AFTER[service] ?? null));
        },
      });
      devices.set(device.handle.entity_id, device);
      return device;
    },
    entity(id: string): EntityInfo {
      return home.registry.resolve(id);
    },
    /** Runs one input through on_input (and pre_action when the turn goes on to the model). */
    async say(text: string, meta: Record<string, unknown> = {}, source = 'cli', sender: InputSender = OWNER): Promise<StageContext> {
      const input: InputEvent = {
        id: `in-${++seq}`,
        source,
        channel: 'cli',
        sender,
        type: 'text',
        payload: text,
        meta,
        received_at: clock.now(),
        level: 0,
      };
      const ctx = newStageContext(`task-${seq}`, input);
      await engine.onInput(ctx);
      if (ctx.response === undefined) {
        ctx.messages = [
          { role: 'system', content: 'persona' },
          { role: 'user', content: text },
        ];
        engine.preAction(ctx);
      }
      return ctx;
    },
  };
}

const STATE_AFTER: Record<string, string> = {
  turn_on: 'on',
  turn_off: 'off',
  open: 'open',
  close: 'closed',
  lock: 'locked',
  unlock: 'unlocked',
  media_pause: 'paused',
  media_play: 'playing',
  start: 'cleaning',
  return_to_base: 'returning',
};

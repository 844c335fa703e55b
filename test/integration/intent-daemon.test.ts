/**
 * The local intent engine (issue 11) in the built daemon as a process: a GPIO output on the
 * simulated back end registered as a light, commands sent as chat over the CLI socket
 * (`agent.chat`, what `homeagentctl chat` calls). Without a model the engine is the whole answer:
 * the light is switched through entity_call (audited), the simulated wire follows, a Chinese
 * command works too, an unknown sentence gets the engine's "didn't understand", a timer reaches
 * the timer plugin's file, and unlocking a lock pin is held for /confirm. With a scripted model a
 * confident command still never reaches it, while a misspelt name goes to it with the engine's
 * guess attached and nothing switched.
 *
 * Time here is real (a daemon): every wait polls with a deadline or waits for a log line.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { Receipt } from '../../src/io/types.js';
import { type LogLine, tempDir } from '../helpers/daemon.js';
import { type InProcessDaemonHandle as DaemonHandle, startDaemon } from '../helpers/in-process-daemon.js';
import { RpcConnection } from '../helpers/rpc.js';
import { type ScriptedServer, type ScriptStep, startScriptedServer } from '../helpers/scripted-llm-server.js';
import { until } from '../helpers/until.js';

const WAIT_MS = 10_000;
const CHAT_TIMEOUT_MS = 20_000;

// A plain output that people call a light; the alias is how the household says it in Chinese.
const LIGHT = {
  id: 'kitchen_light',
  name: 'Kitchen Light',
  aliases: ['厨房灯'],
  area: 'kitchen',
  bcm: 17,
  direction: 'out',
  domain: 'light',
};
// A door strike that rests locked: locks are critical entities, never moved without the owner.
const LOCK = { id: 'front_door', name: 'Front Door', area: 'hallway', bcm: 27, direction: 'out', domain: 'lock', safe: 1 };
const LIGHT_ID = 'light.kitchen_light';
const LOCK_ID = 'lock.front_door';

interface Entity {
  entity_id: string;
  state: unknown;
  critical: boolean;
}

/** A configuration file (JSON is YAML) in a fresh directory, and the data directory next to it. */
function writeConfig(t: Test, config: object): { config: string; dataDir: string } {
  const dir = tempDir(t, 'ha-intent-');
  const file = join(dir, 'config.yaml');
  writeFileSync(file, JSON.stringify(config, null, 2));
  return { config: file, dataDir: join(dir, 'data') };
}

function gpioConfig(core: object = {}): object {
  return { core, plugin: { gpio: { backend: 'simulated', pins: [LIGHT, LOCK] } } };
}

/** The control methods over one CLI socket connection, as homeagentctl calls them. */
class Control {
  private constructor(readonly connection: RpcConnection) {}

  static async open(t: Test, daemon: DaemonHandle): Promise<Control> {
    const connection = await RpcConnection.connect(daemon.socketPath);
    t.teardown(() => connection.close());
    return new Control(connection);
  }

  async call<T>(method: string, params: object = {}, timeoutMs?: number): Promise<T> {
    const r = await this.connection.request(method, params, timeoutMs);
    if (!r.ok) throw new Error(`${method} failed: ${r.error?.code}: ${r.error?.message}`);
    return r.result as T;
  }

  /** One chat message as `homeagentctl chat -m` sends it; the receipt must be done. */
  async chat(text: string): Promise<string> {
    const receipt = await this.call<Receipt>('agent.chat', { text }, CHAT_TIMEOUT_MS);
    if (receipt.status !== 'done') throw new Error(`"${text}" was not answered: ${JSON.stringify(receipt)}`);
    return receipt.text ?? '';
  }

  async state(id: string): Promise<unknown> {
    return (await this.call<{ entity: Entity }>('entities.get', { entity: id, history_limit: 0 })).entity.state;
  }

  /** The pin's logical level as the simulated back end reads it. */
  async level(pin: string): Promise<number | null> {
    return (await this.call<{ value: number | null }>('gpio.read', { pin })).value;
  }
}

/** The audit record of an entity call the daemon logged for `entityId` and `service`. */
function entityCallAudit(entityId: string, service: string) {
  return (line: LogLine) =>
    line.json?.audit === true && line.json.action === 'entity.call' && line.json.entity_id === entityId && line.json.service === service;
}

const handledLocally = (intent: string) => (line: LogLine) =>
  line.json?.subsystem === 'intent' && line.msg === `local intent ${intent} handled without the model`;

t.test('offline: the engine answers, switches the GPIO light, sets timers and holds the lock', async (t) => {
  const { config, dataDir } = writeConfig(t, gpioConfig());
  const daemon = await startDaemon(t, { dataDir, env: { HOMEAGENT_CONFIG: config } });
  await daemon.waitForReady();
  const ctl = await Control.open(t, daemon);
  t.equal(await ctl.state(LIGHT_ID), 'off', 'the light starts off');
  t.equal(await ctl.level(LIGHT.id), 0);

  await t.test('"turn on the kitchen light" → entity_call, the entity and the wire are on', async (t) => {
    t.equal(await ctl.chat('turn on the kitchen light'), 'Turned on Kitchen Light.');
    t.equal(await ctl.state(LIGHT_ID), 'on');
    t.equal(await ctl.level(LIGHT.id), 1, 'the simulated pin is high');
    const audit = await daemon.waitForLog(entityCallAudit(LIGHT_ID, 'turn_on'), WAIT_MS);
    t.match(audit.json, { actor: 'agent', state: 'on' }, 'the call went through the audited entity tool');
    await daemon.waitForLog(handledLocally('HassTurnOn'), WAIT_MS);
  });

  await t.test('关闭厨房灯 → switched off by its Chinese alias, answered in Chinese', async (t) => {
    t.equal(await ctl.chat('关闭厨房灯'), '已关闭厨房灯。', 'named as the person said it');
    t.equal(await ctl.state(LIGHT_ID), 'off');
    t.equal(await ctl.level(LIGHT.id), 0, 'the simulated pin is low again');
    await daemon.waitForLog(entityCallAudit(LIGHT_ID, 'turn_off'), WAIT_MS);
  });

  await t.test('an unknown sentence gets the engine’s "didn’t understand" with examples and how to connect a model', async (t) => {
    const text = await ctl.chat('write me a poem');
    t.match(text, /didn't understand/);
    t.match(text, /turn on the kitchen light/, 'with examples of what works');
    t.match(text, /core\.llm\.api_key/, 'and how to connect a model');
  });

  await t.test('"set a timer for 10 minutes" → the timer plugin keeps it', async (t) => {
    t.equal(await ctl.chat('set a timer for 10 minutes'), 'Timer set for 10 minutes.');
    const file = join(dataDir, 'plugin-data', 'timer', 'timers.json');
    const stored = await until('the timer in timers.json', () => {
      if (!existsSync(file)) return undefined;
      const { timers } = JSON.parse(readFileSync(file, 'utf8')) as { timers: Array<{ duration_ms: number; channel: string }> };
      return timers.length > 0 ? timers : undefined;
    });
    t.match(stored, [{ duration_ms: 600_000, channel: 'cli' }]);
    t.equal(stored.length, 1);
    const status = await ctl.chat('how much time is left');
    t.match(status, /^The 10 minute timer: .+ left/, `timer_list answers the status: ${status}`);
  });

  await t.test('"unlock the front door" is held for /confirm; the lock is untouched until then', async (t) => {
    t.equal(await ctl.state(LOCK_ID), 'locked');
    const text = await ctl.chat('unlock the front door');
    t.match(text, /Front Door is a critical device/);
    const code = /\/confirm ([A-Z0-9]{6})/.exec(text)?.[1];
    t.ok(code, `the answer carries the kernel's confirmation request: ${text}`);
    t.equal(await ctl.state(LOCK_ID), 'locked', 'still locked');
    t.equal(await ctl.level(LOCK.id), 1, 'the strike pin was not moved');
    t.notOk(daemon.logs.some(entityCallAudit(LOCK_ID, 'unlock')), 'no unlock call was made');

    // The owner's own confirmation on the same channel runs exactly the held call.
    t.match(await ctl.chat(`/confirm ${code}`), /^Confirmed: entity_call_critical ran/);
    t.equal(await ctl.state(LOCK_ID), 'unlocked', 'confirmed: unlocked');
    await daemon.waitForLog(entityCallAudit(LOCK_ID, 'unlock'), WAIT_MS);
    t.equal(await ctl.level(LOCK.id), 0);
  });
});

function chunk(delta: Record<string, unknown>, finish: string | null = null): object {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    created: 1764460800,
    model: 'test-model',
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}

function textReply(text: string): ScriptStep {
  return { sse: [chunk({ role: 'assistant', content: '' }), chunk({ content: text }), chunk({}, 'stop')], done: true };
}

/** Requests that asked the model for an answer (not the reachability probes). */
function chatRequests(server: ScriptedServer) {
  return server.requests.filter((r) => r.path.endsWith('/chat/completions'));
}

t.test('with a model: confident commands skip it, a misspelt name goes to it with the guess', async (t) => {
  const server = await startScriptedServer(t);
  const llm = { base_url: server.url, api_key: 'sk-test-key', model: 'test-model' };
  const { config, dataDir } = writeConfig(t, gpioConfig({ llm }));
  const daemon = await startDaemon(t, { dataDir, env: { HOMEAGENT_CONFIG: config } });
  await daemon.waitForReady();
  const ctl = await Control.open(t, daemon);

  await t.test('a near-miss name reaches the model with the engine’s guess, and nothing is switched', async (t) => {
    const reply = 'Did you mean the Kitchen Light? Say so and I will switch it on.';
    server.enqueue(textReply(reply));
    const before = chatRequests(server).length;
    t.equal(await ctl.chat('turn on the kichen lihgt'), reply, 'the model answered');
    const sent = chatRequests(server).slice(before);
    t.equal(sent.length, 1, 'one request to the model');
    const messages = (sent[0]?.body.messages ?? []) as Array<{ role: string; content: string }>;
    const note = messages.find((m) => m.role === 'system' && /intent engine/.test(m.content));
    t.ok(note, 'a system note from the intent engine is in the request');
    t.match(note?.content ?? '', /Kitchen Light/, 'naming the guessed device');
    t.same(messages.at(-1), { role: 'user', content: 'turn on the kichen lihgt' }, 'the person’s words come last, unchanged');
    t.equal(await ctl.state(LIGHT_ID), 'off', 'the light was not switched on a guess');
    t.notOk(daemon.logs.some(entityCallAudit(LIGHT_ID, 'turn_on')), 'no entity call was audited');
    t.equal(await ctl.level(LIGHT.id), 0);
  });

  await t.test('a confident command is carried out without any request to the model', async (t) => {
    const before = chatRequests(server).length;
    t.equal(await ctl.chat('turn on the kitchen light'), 'Turned on Kitchen Light.');
    t.equal(await ctl.state(LIGHT_ID), 'on');
    t.equal(await ctl.level(LIGHT.id), 1);
    await daemon.waitForLog(handledLocally('HassTurnOn'), WAIT_MS);
    t.equal(chatRequests(server).length, before, 'the model saw no request for it');
    t.notOk(
      server.requests.some((r) => r.raw.includes('turn on the kitchen light')),
      'no request to the LLM server carried the command',
    );
  });
});

/**
 * The model sees the home (issue 29): the daemon's system prompt carries the home summary built
 * from the entity registry at the time of each turn. GPIO pins on the simulated back end are the
 * entities; a scripted OpenAI-compatible server records what the model was sent. A state changed
 * between two turns shows in the second prompt, a Chinese turn gets the Chinese framing and the
 * Chinese alias, and core.agent.home_summary_max_chars 0 (set at run time) leaves the block out.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { Receipt } from '../../src/io/types.js';
import { tempDir } from '../helpers/daemon.js';
import { startDaemon } from '../helpers/in-process-daemon.js';
import { RpcConnection } from '../helpers/rpc.js';
import { type ScriptStep, startScriptedServer } from '../helpers/scripted-llm-server.js';

const LIGHT = {
  id: 'kitchen_light',
  name: 'Kitchen Light',
  aliases: ['厨房灯'],
  area: 'kitchen',
  bcm: 17,
  direction: 'out',
  domain: 'light',
};
const PUMP = { id: 'garden_pump', name: 'Garden pump', bcm: 22, direction: 'out', domain: 'switch' };
const DOOR = {
  id: 'back_door',
  name: 'Back door',
  area: 'kitchen',
  bcm: 5,
  direction: 'in',
  domain: 'binary_sensor',
  device_class: 'door',
};

function textReply(text: string): ScriptStep {
  const chunk = (delta: object, finish: string | null = null) => ({
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    model: 'test-model',
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  return { sse: [chunk({ role: 'assistant', content: text }), chunk({}, 'stop')], done: true };
}

function writeConfig(t: Test): { config: string; dataDir: string } {
  const dir = tempDir(t, 'ha-summary-');
  const file = join(dir, 'config.yaml');
  const config = {
    core: { home: { areas: [{ id: 'kitchen', name: 'Kitchen', aliases: ['厨房'] }] } },
    plugin: { gpio: { backend: 'simulated', pins: [LIGHT, PUMP, DOOR] } },
  };
  writeFileSync(file, JSON.stringify(config, null, 2));
  return { config: file, dataDir: join(dir, 'data') };
}

t.test('each turn’s system prompt carries the home as it is then, in the turn’s language', async (t) => {
  const server = await startScriptedServer(t, { replyFn: () => textReply('Noted.') });
  const { config, dataDir } = writeConfig(t);
  const daemon = await startDaemon(t, {
    dataDir,
    env: {
      HOMEAGENT_CONFIG: config,
      HOMEAGENT_LLM_BASE_URL: server.url,
      HOMEAGENT_LLM_API_KEY: 'sk-test',
      HOMEAGENT_LLM_MODEL: 'test-model',
    },
  });
  await daemon.waitForReady();
  const connection = await RpcConnection.connect(daemon.socketPath);
  t.teardown(() => connection.close());
  const call = async <T>(method: string, params: object): Promise<T> => {
    const r = await connection.request(method, params, 20_000);
    if (!r.ok) throw new Error(`${method}: ${r.error?.code} ${r.error?.message}`);
    return r.result as T;
  };
  /** Chats (a sentence the intent engine leaves to the model) and returns the system prompt the model got. */
  const promptOf = async (text: string): Promise<string> => {
    const before = server.requests.length;
    const receipt = await call<Receipt>('agent.chat', { text });
    t.equal(receipt.status, 'done', JSON.stringify(receipt));
    const request = server.requests[before];
    const messages = (request?.body.messages ?? []) as Array<{ role: string; content: string }>;
    return messages[0]?.role === 'system' ? messages[0].content : '';
  };

  const first = await promptOf('Tell me something nice about my home');
  const block = first.slice(first.indexOf('[Home]'));
  t.match(block, /^\[Home\]\nThe devices and sensors of the home right now/);
  t.match(block, /\nKitchen: Back door \(door\) closed; Kitchen Light \(light\) off\n/);
  t.match(block, /\nNo area: Garden pump \(switch\) off\n/);
  t.ok(first.indexOf('[Home]') < first.indexOf('[Available tools]'), 'the summary comes before the tool summary');

  await call('entities.call', { entity: 'light.kitchen_light', service: 'turn_on' });
  const second = await promptOf('And now?');
  t.match(second, /Kitchen Light \(light\) on/, 'the next turn sees the light on');

  const chinese = await promptOf('给我讲讲家里的情况吧');
  t.match(chinese, /\[Home\]\n家里的设备和传感器现在的状态/);
  t.match(chinese, /\n厨房: Back door \(door\) 关着; 厨房灯 \(light\) 开着\n/, 'the Chinese alias and area name in a Chinese turn');

  await call('config.set', { key: 'core.agent.home_summary_max_chars', value: 0 });
  const off = await promptOf('Anything else?');
  t.notMatch(off, /\[Home\]/, 'a budget of 0 leaves the summary out');
});

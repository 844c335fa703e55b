/**
 * Every health detail the built-ins produce exists in Chinese: a daemon with every built-in plugin
 * loaded (the optional ones switched on, each in a state it reports about: Home Assistant without
 * a token, OneBot without an implementation, an I2C sensor that does not answer, a language model
 * nobody listens for) answers `health` with a Chinese detail for each kernel component and each
 * plugin, and `homeagentctl health` prints them under a Chinese locale. A new built-in, or a new
 * message in one, that only speaks English fails here.
 */

import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import t from 'tap';
import type { HealthAnswer } from '../../src/api/health.js';
import { textLanguage } from '../../src/shared/language.js';
import { startDaemon } from '../helpers/in-process-daemon.js';
import { RpcConnection } from '../helpers/rpc.js';

/** A port that nothing listens on: bound, then closed again. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const down = await closedPort();
const daemon = await startDaemon(t, {
  env: {
    HOMEAGENT_LLM_BASE_URL: `http://127.0.0.1:${down}/v1`,
    HOMEAGENT_LLM_API_KEY: 'sk-test',
    HOMEAGENT_SUPERVISOR_HEARTBEAT_INTERVAL_MS: '200',
    HOMEAGENT_PLUGIN_HOMEASSISTANT_ENABLED: 'true',
    HOMEAGENT_PLUGIN_KBTREE_ENABLED: 'true',
    HOMEAGENT_PLUGIN_KBTREE_PORT: String(await closedPort()),
    HOMEAGENT_PLUGIN_ONEBOT_ENABLED: 'true',
    HOMEAGENT_PLUGIN_ONEBOT_PORT: String(await closedPort()),
    HOMEAGENT_PLUGIN_I2C_SENSORS: JSON.stringify([{ id: 'attic', driver: 'bme280', bus: 9, address: 0x76 }]),
  },
});
await daemon.waitForReady();

/** The supervisor's answer once it has looked at the plugins and probed the model. */
async function settledHealth(): Promise<HealthAnswer> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const answer = (await daemon.ctl(['health', '--json'])).json() as HealthAnswer;
    const llm = answer.components.find((c) => c.name === 'llm');
    if (answer.components.some((c) => c.kind === 'plugin') && llm?.status === 'degraded') return answer;
    if (Date.now() > deadline) throw new Error(`health did not settle: ${JSON.stringify(answer.components)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const health = await settledHealth();

t.test('every component, kernel and plugin, has its detail in Chinese', async (t) => {
  const names = health.components.map((c) => c.name);
  for (const expected of ['event_loop', 'state_db', 'memory', 'llm', 'devices', 'tracker']) t.ok(names.includes(expected), expected);
  for (const plugin of [
    'cli',
    'webui',
    'timer',
    'cmd',
    'files',
    'mcp',
    'mqtt',
    'gpio',
    'i2c',
    'camera',
    'homeassistant',
    'kbtree',
    'onebot',
  ]) {
    t.ok(names.includes(`plugin:${plugin}`), `plugin ${plugin} is reported`);
  }
  const notChinese = health.components.filter((c) => typeof c.detail_zh !== 'string' || textLanguage(c.detail_zh) !== 'zh');
  t.same(
    notChinese.map((c) => `${c.name}: ${c.detail_zh}`),
    [],
    'components whose detail has no Chinese',
  );
  const sameAsEnglish = health.components.filter((c) => c.detail_zh === c.detail);
  t.same(
    sameAsEnglish.map((c) => c.name),
    [],
    'no Chinese detail is the English one',
  );
});

t.test("each built-in plugin's own health answer carries its Chinese detail", async (t) => {
  const control = await RpcConnection.connect(daemon.socketPath);
  t.teardown(() => control.close());
  const answer = await control.request('plugins.health', {});
  const rows = (answer.result as { plugins: Array<{ name: string; state: string; detail: string; detail_zh?: string }> }).plugins;
  t.ok(rows.length >= 13, 'every built-in answers');
  // A bare state word (a plugin without health(), one that is stopped) is put in Chinese by the supervisor.
  const own = rows.filter((row) => row.detail !== row.state);
  t.ok(own.length >= 10, 'most built-ins describe themselves');
  t.same(
    own
      .filter((row) => typeof row.detail_zh !== 'string' || textLanguage(row.detail_zh) !== 'zh')
      .map((row) => `${row.name}: ${row.detail}`),
    [],
    'plugins whose health detail has no Chinese',
  );
});

t.test('the states the plugins are in are named in Chinese', async (t) => {
  const zh = (name: string) => health.components.find((c) => c.name === name)?.detail_zh ?? '';
  t.match(zh('llm'), /^不可达：default（/, 'the unreachable model');
  t.match(zh('plugin:homeassistant'), /长期访问令牌/, 'Home Assistant without a token says where to get one');
  t.match(zh('plugin:onebot'), /没有 OneBot 实现连上/);
  t.match(zh('plugin:i2c'), /1 个传感器/);
  t.match(zh('plugin:mqtt'), /^运行中：MQTT 已关闭/);
});

t.test('homeagentctl health speaks the terminal locale', async (t) => {
  const chinese = await daemon.ctl(['health'], { env: { LANG: 'zh_CN.UTF-8', LC_ALL: '', LC_MESSAGES: '' } });
  t.match(chinese.stdout, /^(失败|降级|正常)（检查于 /);
  t.match(chinese.stdout, /\n {2}降级 {2}llm +不可达：/);
  const english = await daemon.ctl(['health'], { env: { LANG: 'C.UTF-8', LC_ALL: '', LC_MESSAGES: '' } });
  t.match(english.stdout, /\n {2}degraded +llm +unreachable: /);
  t.notMatch(english.stdout, /不可达/);
});

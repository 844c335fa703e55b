import t from 'tap';
import { HomeAgentError } from '../../../src/shared/errors.js';
import {
  ComponentBook,
  describeComponent,
  devicesComponent,
  llmComponent,
  loopComponent,
  memoryComponent,
  pluginComponent,
  stateDbComponent,
  trackerComponent,
  worstStatus,
} from '../../../src/supervisor/components.js';

const MIB = 1024 * 1024;

t.test('event loop: a stall over the limit fails, at the limit passes', async (t) => {
  t.equal(loopComponent(2000, 2000).status, 'ok');
  const failed = loopComponent(2000.4, 2000);
  t.equal(failed.status, 'failed');
  t.equal(failed.detail, 'longest event-loop stall 2000 ms (limit 2000 ms)');
  t.equal(failed.detail_zh, '事件循环最长卡顿 2000 ms（上限 2000 ms）');
  t.equal(failed.kind, 'kernel');
});

t.test('state database: a throwing write check fails with its reason', async (t) => {
  t.same(
    stateDbComponent(() => {}),
    { name: 'state_db', kind: 'kernel', status: 'ok', detail: 'state database takes writes', detail_zh: '状态数据库可以写入' },
  );
  const sqliteLike = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
  const failed = stateDbComponent(() => {
    throw sqliteLike;
  });
  t.equal(failed.status, 'failed');
  t.equal(failed.detail, 'SQLITE_BUSY: database is locked');
  t.equal(failed.detail_zh, '状态数据库无法写入：SQLITE_BUSY: database is locked', 'the error keeps its own words inside the Chinese line');
  const coded = stateDbComponent(() => {
    throw new HomeAgentError('HA_ERR_STORE_OPEN', 'state.db cannot be opened');
  });
  t.equal(coded.detail, 'HA_ERR_STORE_OPEN: state.db cannot be opened');
});

t.test('memory: over 80 % of the limit is degraded, over the limit failed', async (t) => {
  t.equal(memoryComponent({ rss_bytes: 400 * MIB, cgroup_limit_bytes: null }, 512).status, 'ok');
  t.equal(memoryComponent({ rss_bytes: 410 * MIB, cgroup_limit_bytes: null }, 512).status, 'degraded', '410 of 512 MB is over 80 %');
  const failed = memoryComponent({ rss_bytes: 513 * MIB, cgroup_limit_bytes: null }, 512);
  t.equal(failed.status, 'failed');
  t.match(failed.detail, /resident 513 MB of 512 MB \(core\.supervisor\.memory_limit_mb, 100 %\)/);
  t.equal(failed.detail_zh, '常驻内存 513 MB，上限 512 MB（core.supervisor.memory_limit_mb，100 %）');
});

t.test('memory: the cgroup limit counts when it is lower than the setting, not when higher', async (t) => {
  const lower = memoryComponent({ rss_bytes: 300 * MIB, cgroup_limit_bytes: 256 * MIB }, 512);
  t.equal(lower.status, 'failed', '300 MB is over a 256 MB cgroup limit even though the setting allows 512');
  t.match(lower.detail, /of 256 MB \(cgroup memory limit/);
  const higher = memoryComponent({ rss_bytes: 300 * MIB, cgroup_limit_bytes: 600 * MIB }, 256);
  t.equal(higher.status, 'failed', 'the setting (256) is lower than the cgroup (600)');
  t.match(higher.detail, /of 256 MB \(core\.supervisor\.memory_limit_mb/);
});

t.test('language models: none configured is ok; unreachable ones degrade and are named, never fail', async (t) => {
  t.same(llmComponent([]), {
    name: 'llm',
    kind: 'kernel',
    status: 'ok',
    detail: 'no language model configured',
    detail_zh: '没有配置语言模型',
  });
  const one = llmComponent([{ name: 'a', base_url: 'http://a', reachable: true, detail: 'HTTP 200', detail_zh: 'HTTP 200' }]);
  t.same([one.detail, one.detail_zh], ['1 source reachable', '1 个来源可达']);
  const mixed = llmComponent([
    { name: 'local', base_url: 'http://a', reachable: true, detail: 'HTTP 404', detail_zh: 'HTTP 404' },
    { name: 'cloud', base_url: 'http://b', reachable: false, detail: 'connect ECONNREFUSED', detail_zh: 'connect ECONNREFUSED' },
  ]);
  t.equal(mixed.status, 'degraded');
  t.equal(mixed.detail, 'unreachable: cloud (connect ECONNREFUSED); 1 reachable');
  t.equal(mixed.detail_zh, '不可达：cloud（connect ECONNREFUSED）；1 个可达');
  const allDown = llmComponent([
    { name: 'cloud', base_url: 'http://b', reachable: false, detail: 'no answer within 5000 ms', detail_zh: '5000 ms 内没有应答' },
  ]);
  t.equal(allDown.detail_zh, '不可达：cloud（5000 ms 内没有应答）');
  t.equal(allDown.status, 'degraded', 'all unreachable is still only degraded');
});

t.test('devices: any device in error degrades; long lists are cut', async (t) => {
  t.equal(devicesComponent([]).status, 'ok');
  const one = devicesComponent([{ id: 'sensor.kitchen', detail: 'no reading for 10 min' }]);
  t.same(one, {
    name: 'devices',
    kind: 'kernel',
    status: 'degraded',
    detail: '1 device in error: sensor.kitchen (no reading for 10 min)',
    detail_zh: '1 个设备出错：sensor.kitchen（no reading for 10 min）',
  });
  const many = devicesComponent(Array.from({ length: 8 }, (_, i) => ({ id: `sensor.s${i}`, detail: 'unavailable' })));
  t.match(many.detail, /^8 devices in error: sensor\.s0 \(unavailable\).* and 3 more$/);
  t.match(many.detail_zh, /^8 个设备出错：sensor\.s0（不可用）.*，另有 3 个$/);
});

t.test('tracker: off, idle, or the change on trial (always ok)', async (t) => {
  t.equal(trackerComponent(false, null).detail, 'change tracking is off');
  t.equal(trackerComponent(true, null).detail, 'no change on trial');
  const trial = trackerComponent(true, { change_set_ids: [12, 13], started_at: '', plugins: ['x'], activation_errors: [] });
  t.same(trial, {
    name: 'tracker',
    kind: 'kernel',
    status: 'ok',
    detail: 'trying change 12, 13 on plugins x',
    detail_zh: '正在试运行改动 12, 13（插件 x）',
  });
  t.equal(trackerComponent(false, null).detail_zh, '改动跟踪已关闭');
});

t.test('plugins: ok=false is failed whatever the state; disabled is ok', async (t) => {
  t.same(pluginComponent({ name: 'mqtt', state: 'running', ok: true, detail: 'connected' }), {
    name: 'plugin:mqtt',
    kind: 'plugin',
    status: 'ok',
    detail: 'running: connected',
    detail_zh: '运行中：connected',
  });
  t.equal(
    pluginComponent({ name: 'mqtt', state: 'running', ok: true, detail: 'connected', detail_zh: '已连接' }).detail_zh,
    '运行中：已连接',
    "the plugin's own Chinese detail",
  );
  const disabled = pluginComponent({ name: 'x', state: 'disabled', ok: true, detail: 'disabled' });
  t.same([disabled.detail, disabled.detail_zh], ['disabled', '已停用']);
  const restarting = pluginComponent({ name: 'x', state: 'restarting', ok: false, detail: 'crashed (exit 1); restarting in 2 s' });
  t.equal(restarting.status, 'failed');
  t.equal(restarting.detail, 'restarting: crashed (exit 1); restarting in 2 s');
});

t.test('worst status and names in sentences', async (t) => {
  t.equal(worstStatus([]), 'ok');
  t.equal(worstStatus(['ok', 'degraded', 'ok']), 'degraded');
  t.equal(worstStatus(['degraded', 'failed', 'ok']), 'failed');
  t.equal(describeComponent('plugin:weather'), 'plugin weather');
  t.equal(describeComponent('state_db'), 'the state database');
});

t.test('the book keeps since across equal statuses and counts failures in a row', async (t) => {
  const book = new ComponentBook();
  const first = book.record({ name: 'state_db', kind: 'kernel', status: 'ok', detail: 'a', detail_zh: 'a' }, 'T1');
  t.same(
    first,
    { component: 'state_db', status: 'ok', previous: null, detail: 'a', detail_zh: 'a' },
    'first sighting is reported with previous null',
  );
  t.equal(
    book.record({ name: 'state_db', kind: 'kernel', status: 'ok', detail: 'b', detail_zh: 'b' }, 'T2'),
    undefined,
    'same status: no change',
  );
  t.equal(book.get('state_db')?.since, 'T1');
  t.equal(book.get('state_db')?.detail, 'b', 'the detail is refreshed');
  const failing = book.record({ name: 'state_db', kind: 'kernel', status: 'failed', detail: 'locked', detail_zh: 'locked' }, 'T3');
  t.same(failing, { component: 'state_db', status: 'failed', previous: 'ok', detail: 'locked', detail_zh: 'locked' });
  book.record({ name: 'state_db', kind: 'kernel', status: 'failed', detail: 'locked', detail_zh: 'locked' }, 'T4');
  t.same([book.get('state_db')?.since, book.get('state_db')?.failures], ['T3', 2]);
  book.record({ name: 'state_db', kind: 'kernel', status: 'ok', detail: 'fine', detail_zh: 'fine' }, 'T5');
  t.same([book.get('state_db')?.since, book.get('state_db')?.failures], ['T5', 0]);
});

t.test('the book lists kernel components in order, then plugins by name, and forgets removed plugins', async (t) => {
  const book = new ComponentBook();
  book.record({ name: 'plugin:zeta', kind: 'plugin', status: 'ok', detail: '', detail_zh: '' }, 'T');
  book.record({ name: 'tracker', kind: 'kernel', status: 'ok', detail: '', detail_zh: '' }, 'T');
  book.record({ name: 'plugin:alpha', kind: 'plugin', status: 'failed', detail: '', detail_zh: '' }, 'T');
  book.record({ name: 'event_loop', kind: 'kernel', status: 'ok', detail: '', detail_zh: '' }, 'T');
  t.same(
    book.list().map((c) => c.name),
    ['event_loop', 'tracker', 'plugin:alpha', 'plugin:zeta'],
  );
  t.same(book.failedKernel(), [], 'a failed plugin is not a failed kernel component');
  t.same(book.forgetPluginsExcept(new Set(['plugin:zeta'])), ['plugin:alpha']);
  t.same(
    book.list().map((c) => c.name),
    ['event_loop', 'tracker', 'plugin:zeta'],
  );
});

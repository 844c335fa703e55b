// `homeagentctl health` (src/cli/health.ts): one line per component, the worst first, the trial,
// and the exit code (1 when something failed, 0 when only degraded) — rendered, and through the
// compiled homeagentctl against a `health` method answering the supervisor's shape.
process.env.TZ = 'UTC';

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { CliPlugin } from '../../../plugins/cli/index.js';
import type { ComponentHealth, HealthAnswer } from '../../../src/api/health.js';
import { cliLanguage } from '../../../src/cli/cli-language.js';
import { formatHealthAnswer, healthExitCode } from '../../../src/cli/health.js';
import { ControlRegistry } from '../../../src/plugin/control-registry.js';
import { REPO_ROOT, runCtl } from '../../helpers/daemon.js';
import { type FakeTracker, fakeChangeTracker, okComponent } from '../../helpers/fake-change-tracker.js';
import { asContext, createTestPluginContext } from '../../helpers/plugin-context.js';
import { tempDir } from '../fixtures/support.js';

const since = '2026-01-05T08:00:00.000Z';
const component = (name: string, status: ComponentHealth['status'], detail: string, failures = 0, detailZh = detail): ComponentHealth => ({
  name,
  kind: name.startsWith('plugin:') ? 'plugin' : 'kernel',
  status,
  detail,
  detail_zh: detailZh,
  since,
  failures,
});

const answer = (components: ComponentHealth[], extra: Partial<HealthAnswer> = {}): HealthAnswer => ({
  status: components.some((c) => c.status === 'failed') ? 'failed' : components.some((c) => c.status === 'degraded') ? 'degraded' : 'ok',
  healthy: !components.some((c) => c.kind === 'kernel' && c.status === 'failed'),
  checked_at: '2026-01-05T09:30:00.000Z',
  components,
  trial: null,
  ...extra,
});

t.test('formatHealthAnswer: the worst status first, then components worst first with detail and since', async (t) => {
  const h = answer(
    [
      component('event_loop', 'ok', 'longest stall 12 ms (limit 1000 ms)'),
      component('llm', 'degraded', 'qwen-local unreachable: ECONNREFUSED'),
      component('state_db', 'ok', 'writable'),
      component('plugin:weather', 'failed', 'health ping timed out after 5000 ms', 3),
      component('plugin:clock', 'failed', 'not running', 1),
    ],
    {
      trial: {
        change_set_ids: [7, 8],
        started_at: '2026-01-05T09:29:00.000Z',
        plugins: ['weather'],
        activation_errors: [{ plugin: 'weather', error: 'TypeError: x is not a function' }],
      },
    },
  );
  t.equal(
    formatHealthAnswer(h),
    [
      'FAILED (checked 2026-01-05 09:30:00)',
      '  FAILED    plugin:weather  health ping timed out after 5000 ms (3 failed checks in a row); since 2026-01-05 08:00:00',
      '  FAILED    plugin:clock    not running; since 2026-01-05 08:00:00',
      '  degraded  llm             qwen-local unreachable: ECONNREFUSED; since 2026-01-05 08:00:00',
      '  ok        event_loop      longest stall 12 ms (limit 1000 ms); since 2026-01-05 08:00:00',
      '  ok        state_db        writable; since 2026-01-05 08:00:00',
      'trial: changes 7, 8 since 2026-01-05 09:29:00, plugins weather (homeagentctl changes)',
      '  weather failed to start: TypeError: x is not a function',
    ].join('\n'),
  );
  t.equal(healthExitCode(h), 1, 'a failed plugin fails the command');

  const kernel = answer([component('state_db', 'failed', 'SQLITE_READONLY', 2)]);
  t.match(formatHealthAnswer(kernel), /^FAILED \(checked .*\); a kernel component failed, the systemd watchdog is no longer fed\n/);
  t.equal(healthExitCode(kernel), 1);

  const degraded = answer([component('llm', 'degraded', 'unreachable'), component('memory', 'ok', 'rss 80 MiB of 512 MiB')]);
  t.match(formatHealthAnswer(degraded), /^degraded \(checked 2026-01-05 09:30:00\)\n {2}degraded {2}llm/);
  t.equal(healthExitCode(degraded), 0, 'degraded is not a failure');
  t.equal(healthExitCode(answer([component('memory', 'ok', 'fine')])), 0);

  t.equal(
    formatHealthAnswer({ status: 'ok', healthy: true, checked_at: null, components: [], trial: null }),
    'ok (not checked yet)\n  (no components reported yet)',
  );
  const single = formatHealthAnswer(
    answer([component('memory', 'ok', 'fine')], { trial: { change_set_ids: [9], started_at: since, plugins: [], activation_errors: [] } }),
  );
  t.match(single, /\ntrial: change 9 since 2026-01-05 08:00:00, plugins \(none\)/);
});

t.test('formatHealthAnswer in Chinese: the words around the details and the details themselves', async (t) => {
  const h = answer(
    [
      component('event_loop', 'ok', 'longest event-loop stall 12 ms (limit 2000 ms)', 0, '事件循环最长卡顿 12 ms（上限 2000 ms）'),
      component('plugin:weather', 'failed', 'health ping timed out', 3, '健康 ping 超时'),
      // An external plugin that answers in English only keeps its words.
      component('plugin:clock', 'degraded', 'drifting', 0, ''),
    ],
    {
      healthy: false,
      trial: { change_set_ids: [7], started_at: since, plugins: [], activation_errors: [{ plugin: 'weather', error: 'TypeError: x' }] },
    },
  );
  t.equal(
    formatHealthAnswer(h, 'zh'),
    [
      '失败（检查于 2026-01-05 09:30:00）；有内核组件失败，systemd 看门狗已不再喂',
      '  失败  plugin:weather  健康 ping 超时（连续 3 次检查失败）；自 2026-01-05 08:00:00 起',
      '  降级  plugin:clock    drifting；自 2026-01-05 08:00:00 起',
      '  正常  event_loop      事件循环最长卡顿 12 ms（上限 2000 ms）；自 2026-01-05 08:00:00 起',
      '试运行：改动 7，自 2026-01-05 08:00:00 起，插件 （无）（homeagentctl changes）',
      '  weather 启动失败：TypeError: x',
    ].join('\n'),
  );
  t.match(
    formatHealthAnswer(h, 'en'),
    /^FAILED \(checked .*\n {2}FAILED {4}plugin:weather {2}health ping timed out \(3 failed/,
    'English still English',
  );
  t.equal(
    formatHealthAnswer({ status: 'ok', healthy: true, checked_at: null, components: [], trial: null }, 'zh'),
    '正常（尚未检查）\n  （还没有组件报告）',
  );
});

t.test('cliLanguage: the POSIX locale variables, LC_ALL first', async (t) => {
  t.equal(cliLanguage({ LANG: 'zh_CN.UTF-8' }), 'zh');
  t.equal(cliLanguage({ LANG: 'zh_TW' }), 'zh');
  t.equal(cliLanguage({ LANG: 'zh' }), 'zh');
  t.equal(cliLanguage({ LANG: 'en_US.UTF-8' }), 'en');
  t.equal(cliLanguage({}), 'en', 'no locale: English');
  t.equal(cliLanguage({ LANG: 'C.UTF-8' }), 'en');
  t.equal(cliLanguage({ LC_ALL: 'C', LANG: 'zh_CN.UTF-8' }), 'en', 'LC_ALL wins');
  t.equal(cliLanguage({ LC_ALL: '', LC_MESSAGES: 'zh_CN.UTF-8', LANG: 'en_GB.UTF-8' }), 'zh', 'an empty one is not set');
  t.equal(cliLanguage({ LANG: 'zu_ZA.UTF-8' }), 'en', 'zu is not zh');
});

const CTL_JS = join(REPO_ROOT, 'dist', 'src', 'cli', 'homeagentctl.js');
const notBuilt = existsSync(CTL_JS) ? false : `${CTL_JS} is missing: run npx tsc -p tsconfig.build.json first`;

/** A `health` method on a real ControlRegistry, served by the real cli plugin on a Unix socket. */
async function serve(t: Test): Promise<{ tracker: FakeTracker; dataDir: string }> {
  const control = new ControlRegistry();
  const tracker = fakeChangeTracker((name, params, handler) =>
    control.register({ name, description: `test double of ${name}`, params, handler }),
  );
  const dataDir = tempDir(t);
  const test = createTestPluginContext({
    name: 'cli',
    dataDir,
    settings: { socket_path: '', socket_mode: '660', max_frame_bytes: 1048576, max_connections: 4, idle_timeout_ms: 60_000 },
  });
  const plugin = new CliPlugin(asContext({ ...test.context, control }));
  await plugin.start();
  t.teardown(async () => {
    await plugin.stop();
    test.close();
  });
  return { tracker, dataDir };
}

t.test(
  'homeagentctl health: exit 0 when ok or degraded, 1 when a component failed; --json is the answer',
  { skip: notBuilt },
  async (t) => {
    const s = await serve(t);
    const env = { env: { TZ: 'UTC' } };
    const ok = await runCtl(s.dataDir, ['health'], env);
    t.equal(ok.code, 0, ok.stderr);
    t.match(ok.stdout, /^ok \(checked 2026-01-05 09:30:00\)\n {2}ok +event_loop +fine; since 2026-01-05 06:00:00\n/);
    t.match(ok.stdout, /\ntrial: change 3 since 2026-01-05 09:00:04, plugins weather \(homeagentctl changes\)\n$/);

    s.tracker.setComponents([okComponent('event_loop'), { ...okComponent('llm'), status: 'degraded', detail: 'no model answers' }]);
    const degraded = await runCtl(s.dataDir, ['health'], env);
    t.equal(degraded.code, 0, 'degraded only: exit 0');
    t.match(degraded.stdout, /^degraded /);

    s.tracker.setComponents([
      okComponent('event_loop'),
      { ...okComponent('plugin:weather'), status: 'failed', detail: 'ping failed', detail_zh: 'ping 失败', failures: 2 },
    ]);
    const failed = await runCtl(s.dataDir, ['health', '--json'], env);
    t.equal(failed.code, 1, 'a failed component: exit 1');
    t.match(failed.json(), {
      status: 'failed',
      healthy: true,
      components: [{ name: 'event_loop' }, { name: 'plugin:weather', status: 'failed' }],
    });

    const chinese = await runCtl(s.dataDir, ['health'], { env: { TZ: 'UTC', LANG: 'zh_CN.UTF-8', LC_ALL: '', LC_MESSAGES: '' } });
    t.equal(chinese.code, 1, chinese.stderr);
    t.match(
      chinese.stdout,
      /^失败（检查于 2026-01-05 09:30:00）\n {2}失败 {2}plugin:weather {2}ping 失败（连续 2 次检查失败）；自 .* 起\n/,
    );

    const usage = await runCtl(s.dataDir, ['health', 'now']);
    t.equal(usage.code, 64);
    t.match(usage.stderr, /health takes no arguments/);
  },
);

// homeagentctl in a Chinese terminal (issue 29, point 6): each converted command's readable answer
// rendered in Chinese (the language passed in, as run-homeagentctl passes cliLanguage(io.env)),
// the English rendering of the same values unchanged, and the shared words (ages, durations,
// state words, tables padded by terminal columns).
process.env.TZ = 'UTC';

import { Readable } from 'node:stream';
import t from 'tap';
import type { PluginStatus } from '../../../src/api/plugins.js';
import type { SettingView } from '../../../src/api/settings.js';
import type { StatusReport } from '../../../src/api/status.js';
import { formatAutomationList, formatRunResult, formatRuns, runAutomations } from '../../../src/cli/automations.js';
import { formatChangeList, formatCommit, formatRollback, formatTrackerStatus } from '../../../src/cli/changes.js';
import { runChat } from '../../../src/cli/chat.js';
import { agoIn, durationIn, stateWord } from '../../../src/cli/cli-words.js';
import { formatPending, runConfirm } from '../../../src/cli/confirm.js';
import { age } from '../../../src/cli/entities.js';
import {
  displayWidth,
  formatHistory,
  formatPlugin,
  formatPluginHealth,
  formatPluginList,
  formatSetting,
  formatSettingList,
  formatStatus,
  table,
} from '../../../src/cli/format.js';
import { formatSearch as formatKbSearch, formatStats as formatKbStats, formatTree } from '../../../src/cli/kb.js';
import { formatAdded, formatListItems, formatListSummaries, itemLine, runLists } from '../../../src/cli/lists.js';
import { formatEntity, formatForget, formatSearch, formatStats, runMemory } from '../../../src/cli/memory.js';
import { formatModelList } from '../../../src/cli/models.js';
import { runHomeagentctl } from '../../../src/cli/run-homeagentctl.js';
import { formatActivations, runVoice } from '../../../src/cli/voice.js';
import { formatCredentials } from '../../../src/cli/webui.js';
import type { ConfirmationRequest } from '../../../src/events/event-bus.js';
import type { MemoryStats } from '../../../src/memory/memory-methods.js';
import { startDaemon } from '../../helpers/in-process-daemon.js';

const HOUR_MS = 3_600_000;
const T0 = Date.UTC(2026, 0, 5, 7);

/** A fake daemon that answers each method with `answers[method]` and records the calls. */
function fakeDaemon(answers: Record<string, unknown>) {
  const out: string[] = [];
  const calls: string[] = [];
  return {
    out,
    calls,
    options: {
      connect: async () => ({
        call: async (method: string) => {
          calls.push(method);
          return answers[method];
        },
        close: () => undefined,
      }),
      json: false,
      timeoutMs: 1000,
      stdout: { write: (text: string) => out.push(text) },
      now: () => T0 + 2 * HOUR_MS,
    },
  };
}

const plugin: PluginStatus = {
  name: 'gpio',
  version: '1.0.0',
  description: 'pins',
  kind: 'builtin',
  origin: 'shipped',
  state: 'quarantined',
  enabled: true,
  error: 'crashed 3 times',
  tools: ['gpio_write'],
  dir: '/opt/homeagent/plugins/gpio',
};

const status: StatusReport = {
  name: 'homeagent',
  version: '0.9.0',
  pid: 4242,
  state: 'running',
  status: 'degraded',
  started_at: '2026-01-05T07:00:00.000Z',
  uptime_s: 93_784,
  data_dir: '/var/lib/homeagent',
  runtime_dir: '/run/homeagent',
  services: [{ name: 'scheduler', state: 'running' }],
  plugins: [plugin],
  databases: [
    {
      name: 'state',
      file: '/var/lib/homeagent/state.db',
      file_bytes: 2048,
      wal_bytes: 0,
      synchronous: 'FULL',
      recovered_from_corruption: null,
    },
  ],
  notices: [{ level: 'warning', key: 'x', message: 'disk nearly full', at: '2026-01-05T07:00:00.000Z' }],
  restart_pending: ['core.web.port'],
  memory: { rss_bytes: 50 * 1024 * 1024, heap_used_bytes: 0 },
  llm_sources: [],
  inputs: {
    queued: 1,
    interrupts_by_level: { 1: 0, 2: 0, 3: 0, 4: 0 },
    suspended: 0,
    running: null,
    completed: 12,
    skipped: 2,
    failed: 1,
    cancelled: 0,
    dropped: 0,
    refused: 0,
  },
};

t.test('status in Chinese: labels, uptime and state words; English unchanged', async (t) => {
  const zh = formatStatus(status, 'zh');
  t.match(zh, 'homeagent 0.9.0：降级');
  t.match(zh, '  状态 运行中，已运行 1天2小时3分4秒，进程号 4242，内存 50.0 MiB');
  t.match(zh, '服务：\n  scheduler  运行中');
  t.match(zh, '插件：\n  gpio  1.0.0  内置  已隔离  crashed 3 times');
  t.match(zh, '预写日志 0 B');
  t.match(zh, '语言模型：\n  （未配置：助手会回答它处于离线状态）');
  t.match(zh, '输入：排队 1，挂起 0，完成 12，失败 1，跳过 2');
  t.match(zh, '提示：\n  - disk nearly full');
  t.match(zh, '需要重启才生效：core.web.port');
  t.notMatch(zh, /services:|language models:|inputs:/, 'no English label left');
  const en = formatStatus(status, 'en');
  t.match(en, 'homeagent 0.9.0: degraded\n  state running, up 1d 2h 3m 4s, pid 4242, memory 50.0 MiB');
  t.match(en, 'inputs: 1 queued, 0 suspended, 12 done, 1 failed, 2 skipped');
  t.match(en, 'restart needed for: core.web.port');
});

const setting: SettingView = {
  key: 'core.language',
  value: 'zh',
  source: 'runtime',
  default: 'en',
  type: 'string',
  description: 'The language HomeAgent answers in.',
  description_zh: 'HomeAgent 回答所用的语言。',
  category: 'core',
  requires_restart: true,
  restart_pending: true,
  secret: false,
  file_only: false,
  env: 'HOMEAGENT_CORE_LANGUAGE',
  enum: ['en', 'zh'],
};

t.test('config get in Chinese shows description_zh and translated labels; English falls back when there is none', async (t) => {
  t.equal(
    formatSetting(setting, 'zh'),
    [
      'core.language = zh   （已更改；重启后生效）',
      '  HomeAgent 回答所用的语言。',
      '  类型 string（可选 en、zh），默认 en，来源 运行时设置，环境变量 HOMEAGENT_CORE_LANGUAGE；需重启',
    ].join('\n'),
  );
  t.equal(
    formatSetting(setting, 'en'),
    [
      'core.language = zh   (changed; takes effect after a restart)',
      '  The language HomeAgent answers in.',
      '  type string (one of en, zh), default en, source runtime, env HOMEAGENT_CORE_LANGUAGE; needs restart',
    ].join('\n'),
  );
  const { description_zh: _, ...external } = setting;
  t.match(
    formatSetting({ ...external, source: 'env:HOMEAGENT_CORE_LANGUAGE' }, 'zh'),
    '  The language HomeAgent answers in.\n',
    'no Chinese text: the English one',
  );
  t.match(formatSetting({ ...external, source: 'env:HOMEAGENT_CORE_LANGUAGE' }, 'zh'), '来源 环境变量 HOMEAGENT_CORE_LANGUAGE');
});

t.test('config list and history in Chinese', async (t) => {
  t.equal(formatSettingList([], 'zh'), '（没有匹配的设置）');
  t.equal(
    formatSettingList([setting, { ...setting, key: 'core.x', value: 3, source: 'default' }], 'zh'),
    'core.language  zh  (运行时设置)\ncore.x         3',
  );
  t.equal(formatHistory([], 'zh'), '（没有记录到更改）');
  t.equal(
    formatHistory(
      [
        { id: 1, key: 'core.language', action: 'set', value: '"zh"', actor: 'cli', at: '2026-01-05T07:00:00Z' },
        { id: 2, key: 'plugin.x.token', action: 'set', value: null, actor: 'web', at: '2026-01-05T08:00:00Z' },
        { id: 3, key: 'core.language', action: 'reset', value: null, actor: 'cli', at: '2026-01-05T09:00:00Z' },
      ],
      'zh',
    ),
    [
      '2026-01-05T07:00:00Z  cli  设置  core.language   "zh"',
      '2026-01-05T08:00:00Z  web  设置  plugin.x.token  （机密）',
      '2026-01-05T09:00:00Z  cli  重置  core.language',
    ].join('\n'),
  );
});

t.test('plugins in Chinese; the table pads Chinese cells by terminal columns', async (t) => {
  t.equal(displayWidth('名称'), 4);
  t.equal(displayWidth('gpio'), 4);
  const list = formatPluginList({ plugins: [plugin], rejected: [{ dir: '/x', error: 'no manifest' }] }, 'zh');
  t.equal(
    list,
    [
      '名称  版本   类型  来源  状态    工具  问题',
      'gpio  1.0.0  内置  随附  已隔离  1     crashed 3 times',
      '加载前被拒绝：',
      '  /x: no manifest',
    ].join('\n'),
  );
  t.equal(formatPluginList({ plugins: [], rejected: [] }, 'zh'), '（没有插件）');
  t.equal(formatPlugin(plugin, 'zh'), 'gpio 1.0.0（内置，随附）：已隔离 — crashed 3 times；工具：gpio_write');
  t.equal(formatPlugin(plugin, 'en'), 'gpio 1.0.0 (builtin, shipped): quarantined — crashed 3 times; tools: gpio_write');
  t.equal(
    formatPluginHealth({ plugins: [{ name: 'gpio', state: 'running', ok: false, detail: 'no chip' }] }, 'zh'),
    '失败  gpio  运行中  no chip',
  );
  t.equal(
    table(
      [
        ['门', 'x'],
        ['door', 'y'],
      ],
      '',
    ),
    '门    x\ndoor  y',
    'one Chinese character is two columns',
  );
});

t.test('lists in Chinese: the table, items, adding, ticking off and removing', async (t) => {
  t.equal(formatListSummaries([{ name: '购物清单', open: 2, done: 11 }], 'zh'), '清单      未完成  已完成\n购物清单  2       11');
  const now = T0 + 2 * HOUR_MS;
  t.equal(itemLine({ id: 2, text: '鸡蛋', done: true, added_at: T0, done_at: T0 }, now, 'zh'), '☑ 鸡蛋（2小时前完成）');
  t.equal(itemLine({ id: 3, text: '面包', done: true, added_at: T0, done_at: now }, now, 'zh'), '☑ 面包（刚刚完成）');
  t.equal(formatListItems({ list: '购物清单', items: [] }, now, false, 'zh'), '“购物清单”里没有未完成的条目');
  t.equal(formatListItems({ list: '五金店', items: [] }, now, true, 'zh'), '“五金店”清单里没有条目');
  t.equal(
    formatListItems({ list: '购物清单', items: [{ id: 1, text: '牛奶', done: false, added_at: T0, done_at: null }] }, now, false, 'zh'),
    '购物清单：\n  ☐ 牛奶',
  );
  const item = { id: 1, text: '交电费', done: false, added_at: T0, done_at: null };
  t.equal(formatAdded({ list: '待办清单', item, added: true }, 'zh'), '已把交电费加到“待办清单”');
  t.equal(formatAdded({ list: '待办清单', item, added: false }, 'zh'), '交电费已经在“待办清单”里了');
  t.equal(formatAdded({ list: '待办清单', item, added: false }, 'en'), '交电费 is already on the 待办清单', 'English as before');

  const daemon = fakeDaemon({
    'lists.complete': { list: '购物清单', item: { ...item, text: '牛奶' } },
    'lists.remove': { list: '五金店', item: { ...item, text: '钉子' } },
  });
  t.equal(await runLists({ command: 'done', item: '牛奶' }, { ...daemon.options, language: 'zh' }), 0);
  t.equal(await runLists({ command: 'remove', list: '五金店', item: '钉子' }, { ...daemon.options, language: 'zh' }), 0);
  t.same(daemon.out, ['已在“购物清单”勾掉牛奶\n', '已从“五金店”清单删除钉子\n']);
  t.same(daemon.calls, ['lists.complete', 'lists.remove']);
});

t.test('automations in Chinese: the list, a run, the run log, enable', async (t) => {
  t.equal(formatAutomationList({ automations: [] }, 'zh'), '没有自动化（写在 core.automations.rules 里；见 docs/automations.md）');
  t.equal(
    formatAutomationList(
      {
        automations: [
          {
            id: 'hall_light',
            name: '走廊灯',
            enabled: false,
            enabled_by: 'cli',
            mode: 'restart',
            triggers: ['edge hall_button rising'],
            running: 1,
            queued: 2,
            last_run: {
              run_id: 'r1',
              status: 'failed',
              trigger: 'edge hall_button rising',
              started_at: T0,
              finished_at: 0,
              error: 'HA_ERR_X: y',
            },
            problems: ['no entity'],
          },
          {
            id: 'kettle',
            name: '',
            enabled: true,
            enabled_by: 'config',
            mode: 'single',
            triggers: [],
            running: 0,
            queued: 0,
            last_run: null,
            problems: [],
          },
        ],
      },
      'zh',
    ),
    [
      'hall_light  已停用（由 cli）  模式 restart  "走廊灯"',
      '  触发：edge hall_button rising',
      '  当前：1 个运行中，2 个等待中',
      '  上次运行：失败，2026-01-05 07:00:00（edge hall_button rising）：HA_ERR_X: y',
      '  问题：no entity',
      'kettle  已启用  模式 single',
      '  上次运行：从未',
    ].join('\n'),
  );
  t.equal(
    formatRunResult({ outcome: 'started', automation_id: 'kettle', run_id: 'r9', reason: null } as never, 'zh'),
    '已启动 kettle（运行 r9）；homeagentctl automations runs kettle 可查看结果',
  );
  t.equal(
    formatRunResult({ outcome: 'skipped', automation_id: 'kettle', run_id: null, reason: 'conditions not met' } as never, 'zh'),
    'kettle 没有运行：conditions not met',
  );
  t.equal(formatRuns({ runs: [] }, undefined, 'zh'), '还没有自动化运行过');
  t.equal(formatRuns({ runs: [] }, 'kettle', 'zh'), 'kettle 还没有运行过');

  const daemon = fakeDaemon({ 'automations.enable': { id: 'kettle', enabled: true } });
  t.equal(await runAutomations({ command: 'enable', id: 'kettle' }, { ...daemon.options, language: 'zh' }), 0);
  t.same(daemon.out, ['kettle 已启用\n']);
});

const waiting: ConfirmationRequest = {
  code: 'K7QX2M',
  tool: 'cmd_run',
  arguments: '{"argv":["id"]}',
  origin: { input_id: 'in-1', source: 'mqtt', channel: 'mqtt', sender: { trust: 'untrusted', id: 'mqtt', proof: 'an MQTT payload' } },
  trust: { level: 'untrusted', lowered_by: ['the output of files_read'] },
  inline: false,
  created_at: 1_000_000,
  expires_at: 1_600_000,
  text: '[Confirmation needed] …',
};

t.test('confirm in Chinese: the waiting list, a refusal and a failed approval', async (t) => {
  t.equal(formatPending([], 0, 'zh'), '没有等待你批准的操作');
  t.equal(
    formatPending([waiting], 1_000_000, 'zh'),
    [
      'K7QX2M  cmd_run {"argv":["id"]}',
      '        由 mqtt 在 mqtt 上请求（untrusted：an MQTT payload）；它读过 the output of files_read',
      '        600 秒后过期；homeagentctl confirm approve K7QX2M | deny K7QX2M',
    ].join('\n'),
  );
  const daemon = fakeDaemon({
    'confirm.deny': { code: 'K7QX2M', tool: 'cmd_run', denied: true },
    'confirm.approve': { code: 'K7QX2M', tool: 'cmd_run', receipt: { status: 'failed', error: { message: 'exit 2' } } },
  });
  t.equal(await runConfirm({ command: 'deny', code: 'K7QX2M' }, { ...daemon.options, language: 'zh' }), 0);
  t.equal(await runConfirm({ command: 'approve', code: 'K7QX2M' }, { ...daemon.options, language: 'zh' }), 1);
  t.same(daemon.out, ['已拒绝 K7QX2M：cmd_run 不会执行\n', 'cmd_run：失败：exit 2\n']);
});

const stats: MemoryStats = {
  window: { events: 3, max_size: 50 },
  documents: { total: 4, vectors_current: 3, vectors_stale: 1 },
  entities: { total: 5, aliases: 2, vectors_current: 5, vectors_stale: 0 },
  relations: { current: 6, history: 1, types: [{ type: 'likes', count: 4 }] },
  sentences: 7,
  no_merge_marks: 0,
  hotspots: [{ name: 'Alice', type: 'person', mentions: 9, degree: 3 }],
  embedder: { fingerprint: 'minilm', dim: 384 },
  maintenance_intervals_ms: { consolidate: 600_000 },
  database_bytes: 4096,
};

t.test('memory in Chinese: stats, an entity, search, forget and the --hard refusal', async (t) => {
  t.equal(
    formatStats(stats, 'zh'),
    [
      '记忆：',
      '  上下文窗口  3 / 50 个事件',
      '  文档        4，1 个等待向量',
      '  实体        5（2 个别名）',
      '  关系        当前 6，历史 1',
      '  句子        7',
      '  不合并标记  0',
      '  嵌入模型    minilm（384 维）',
      '  维护        consolidate 每 10 分钟',
      '  数据库      4.0 KiB',
      '关系类型：',
      '  likes 4',
      '提及最多：',
      '  Alice（person）：9 次提及，3 条事实',
    ].join('\n'),
  );
  t.match(formatStats(stats, 'en'), '  window          3 of 50 events\n', 'English as before');
  const relation = {
    id: 1,
    direction: 'out' as const,
    subject: 'Alice',
    relation: 'likes',
    object: 'tea',
    confidence: 0.9,
    session: 's',
    valid_from: '2026-01-05T07:00:00Z',
    valid_to: null,
    evidence_count: 2,
    provenance: [{ sentence_id: 1, text: 'Alice likes tea', source_event_id: 'ev-1', document_id: null }],
  };
  t.equal(
    formatEntity(
      {
        entity: { id: 1, name: 'Alice', type: 'person', aliases: ['爱丽丝'], mention_count: 1, created_at: null, updated_at: null },
        current: [relation],
        history: [],
        truncated: true,
      },
      'zh',
    ),
    [
      'Alice（person）：1 次提及，也叫 爱丽丝',
      '事实：',
      '  Alice likes tea   自 2026-01-05 07:00 起，置信度 0.90，见过 2 次',
      '    "Alice likes tea"（事件 ev-1）',
      '（关系比显示的多；用 memory export 查看全部）',
    ].join('\n'),
  );
  t.equal(formatSearch({ abstain: true, items: [] }, 'zh'), '没有记录：记忆里没有与此相关的内容（提示词也会这样说）');
  t.equal(
    formatForget({ target: 'entity', mode: 'soft', entity: 'Alice', relations_ended: 3 }, 'zh'),
    'Alice：3 条当前事实已结束（保留为历史；--hard 会删除）',
  );
  t.equal(
    formatForget(
      { target: 'event', event: 'ev-1', from_window: true, documents_removed: [], raw_log_records_removed: 2, facts_kept: 1 },
      'zh',
    ),
    '事件 ev-1：已从上下文窗口移除，已从原始对话日志删除 2 行；从中读出的 1 个句子仍留在图谱里（遗忘相应实体才会删除）',
  );
  t.equal(formatForget({ target: 'document', document: 4 }, 'zh'), '文档 4 已删除');

  const stderr: string[] = [];
  let connected = false;
  const code = await runMemory(
    { command: 'forget', target: { entity: 'Alice' }, hard: true, yes: false },
    {
      connect: async () => {
        connected = true;
        throw new Error('must not connect');
      },
      json: false,
      timeoutMs: 1000,
      language: 'zh',
      io: { stdout: { write: () => true }, stderr: { write: (x: string) => stderr.push(x) }, interactive: false, ask: async () => 'y' },
    },
  );
  t.equal(code, 64);
  t.notOk(connected, 'refused before connecting');
  t.same(stderr, ['homeagentctl: memory forget --hard 会永久删除 "Alice" 及其全部关系；标准输入不是终端，请加 --yes 确认\n']);
});

t.test('kb in Chinese: the tree, a search without hits, the stats', async (t) => {
  t.equal(
    formatTree({ name: '', path: '', item_count: 0, total_count: 0, children: [] }, 'zh'),
    '知识库：0 个条目\n  （空的：用 homeagentctl kb add 或 kb import 添加条目）',
  );
  t.equal(formatKbSearch({ query: '番茄', category: 'recipes', hits: [] } as never, 'zh'), 'recipes 里没有条目匹配 "番茄"');
  const kbStats = {
    entries: 3,
    categories: 2,
    media: { files: 1, bytes: 10 },
    index: { state: 'ready', indexed: 3 },
    dense: { enabled: false, ready: false, total: 0 },
  };
  t.equal(
    formatKbStats(kbStats as never, 'zh'),
    [
      '知识库：',
      '  条目  3',
      '  分类  2',
      '  媒体  1 个文件，10 B',
      '  索引  就绪，已索引 3',
      '  向量  关闭（没有嵌入模型：只按词检索）',
    ].join('\n'),
  );
});

t.test('voice and webui in Chinese: the activation log, an announcement, the login', async (t) => {
  t.equal(formatActivations([], 'zh'), '没有记录到唤醒（plugin.voice.activation.log_entries 为 0 时不记录）');
  t.equal(
    formatActivations(
      [
        { at: '2026-01-05T07:00:00Z', method: 'wake_phrase', accepted: true, score: 0.91, heard: '小助手 开灯' },
        { at: '2026-01-05T07:01:00Z', method: 'button', accepted: false, reason: 'refractory' },
      ] as never,
      'zh',
    ),
    [
      '时间                  方式         接受            分数  听到',
      '2026-01-05T07:00:00Z  wake_phrase  是              0.91  小助手 开灯',
      '2026-01-05T07:01:00Z  button       否：refractory',
    ].join('\n'),
  );
  const daemon = fakeDaemon({ 'voice.say': { played: false, stopped: true }, 'voice.listen': { armed: false, reason: 'muted' } });
  t.equal(await runVoice({ command: 'say', text: '开饭了' }, { ...daemon.options, language: 'zh' }), 0);
  t.equal(await runVoice({ command: 'listen' }, { ...daemon.options, language: 'zh' }), 0);
  t.same(daemon.out, ['播报中途停止（被打断）\n', '没有在听：muted\n']);
  const login = { url: 'http://box:8080/', password: 'pw', api_key: 'key', created_at: '2026-01-05T07:00:00Z' };
  t.equal(
    formatCredentials(login, 'api_key', 'zh'),
    [
      '已生成新的 API 密钥；旧的不再可用',
      '网页：    http://box:8080/',
      '密码：    pw',
      'API 密钥：key   （X-API-Key 或 Authorization: Bearer；也用于 OpenAI 接口 http://box:8080/v1）',
      '创建于：  2026-01-05T07:00:00Z',
    ].join('\n'),
  );
  t.match(formatCredentials(login, undefined, 'en'), /^web page: http:\/\/box:8080\/\npassword: pw\n/);
});

t.test('changes in Chinese: the tracker, the list, a rollback and a commit', async (t) => {
  const tracker = {
    backend: 'userspace' as const,
    root: '/opt/homeagent/plugins',
    state_dir: '/var/lib/homeagent/tracker',
    pending_files: 2,
    trial: {
      started_at: '2026-01-05T07:00:00Z',
      change_set_ids: [4],
      plugins: ['gpio', 'mqtt'],
      activation_errors: [{ plugin: 'mqtt', error: 'boom' }],
    },
  };
  t.equal(
    formatTrackerStatus(tracker as never, 'zh'),
    [
      '改动追踪：userspace，位于 /opt/homeagent/plugins，2 个文件与上一个正常状态不同',
      '试运行自 2026-01-05 07:00:00 起：改动 4；插件 gpio、mqtt',
      '  mqtt 启动失败：boom',
    ].join('\n'),
  );
  t.equal(
    formatTrackerStatus({ ...tracker, backend: 'off' } as never, 'zh'),
    '改动追踪：关闭（core.tracker.backend: off）；插件的改动既不记录也不能回滚',
  );
  t.match(formatChangeList({ ...tracker, trial: null } as never, [], 'trial', 'zh'), /\n没有正在试运行的改动\n没有状态为 trial 的改动$/);
  t.match(
    formatChangeList(
      { ...tracker, trial: null } as never,
      [
        {
          id: 4,
          status: 'rolled_back',
          started_at: '2026-01-05T07:00:00Z',
          actor: 'agent',
          tool: 'plugin_edit',
          plugins: [],
          file_count: 1,
        },
      ] as never,
      undefined,
      'zh',
    ),
    /\n编号 {2}状态 {4}时间 {17}操作者 {2}工具 {9}插件 {4}文件\n4 {5}已回滚 {2}2026-01-05 07:00:00 {2}agent {3}plugin_edit {2}（无） {2}1$/,
  );
  const set = { id: 4, reverts: null, plugins: ['gpio'], files: [{}, {}] };
  t.equal(formatRollback(4, [set] as never, 'zh'), '已回滚改动 4：2 个文件恢复到上一个正常状态。已重新加载插件：gpio。');
  t.equal(formatRollback(4, [] as never, 'zh'), '改动 4：没有回滚任何内容');
  t.equal(formatCommit(4, [set] as never, 'zh'), '已确认改动 4：插件 gpio 现在属于正常状态。');
  t.equal(formatCommit(4, [set] as never, 'en'), 'committed change 4: plugins gpio are now part of the last good state.');
});

t.test('chat in Chinese: the greeting and a failed turn are homeagentctl words; the answer is the agent own', async (t) => {
  const answers = [
    { status: 'done', text: '好的，已打开厨房灯。' },
    { status: 'failed', error: { message: 'no language model' } },
  ];
  const client = { call: async () => answers.shift() };
  let stdout = '';
  let stderr = '';
  const io = {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    stdin: Object.assign(Readable.from(['打开厨房灯\n', '讲个笑话\n', '/exit\n']), { isTTY: true }),
  };
  const code = await runChat(client as never, { message: undefined, json: false, timeoutMs: 1000, language: 'zh' }, io);
  t.equal(code, 1, 'the last turn failed');
  t.match(stdout, /^正在与 HomeAgent 对话。输入 \/exit 或按 Ctrl-D 结束。\n/);
  t.match(stdout, '你> ');
  t.match(stdout, '好的，已打开厨房灯。\n');
  t.equal(stderr, 'homeagentctl: 失败：no language model\n');
});

t.test('models list in Chinese: the table and an unusable folder', async (t) => {
  const models = [
    {
      name: 'minilm',
      dir: '/d/minilm',
      bytes: 90 * 1024 * 1024,
      kind: 'embedder',
      manifest: { dim: 384, pooling: 'mean', max_tokens: 256 },
    },
    { name: 'junk', dir: '/d/junk', bytes: 0, problem: 'no model.onnx' },
  ];
  t.equal(
    formatModelList(models as never, '/d', 'zh'),
    [
      '名称    类型      详情               大小     来源',
      'minilm  embedder  384 维，mean 池化  90.0 MB  （手动复制）',
      'junk    -         -                  0.0 MB   不可用：no model.onnx',
    ].join('\n'),
  );
  t.equal(formatModelList([], '/d', 'zh'), '/d 里没有安装模型');
  t.match(
    formatModelList(models as never, '/d', 'en'),
    /^NAME {4}KIND {6}DETAILS {16}SIZE {5}SOURCE\nminilm {2}embedder {2}dim 384, mean pooling {2}90\.0 MB {2}\(copied by hand\)\n/,
  );
});

t.test('the shared words: ages and durations in both languages, state words', async (t) => {
  const now = T0 + 100 * HOUR_MS;
  for (const seconds of [0, 4, 5, 59, 61, 3600, 3661, 86_400 + 7200 + 5, 3 * 86_400]) {
    t.equal(agoIn(now - seconds * 1000, now, 'en'), age(now - seconds * 1000, now), `English age of ${seconds} s as entities prints it`);
  }
  t.equal(agoIn(now - 3661_000, now, 'zh'), '1小时1分前');
  t.equal(agoIn(now - (86_400 + 7200 + 5) * 1000, now, 'zh'), '1天2小时前');
  t.equal(agoIn(now, now, 'zh'), '刚刚');
  t.equal(durationIn(59, 'zh'), '59秒');
  t.equal(durationIn(3600, 'en'), '1h 0s');
  t.equal(stateWord('running', 'zh'), '运行中');
  t.equal(stateWord('something_new', 'zh'), 'something_new', 'an unknown word as the daemon sent it');
  t.equal(stateWord('running', 'en'), 'running');
});

t.test('homeagentctl against a daemon answers in the language of the locale it is run with; --json is the same', async (t) => {
  const daemon = await startDaemon(t);
  await daemon.waitForReady();
  const ctl = async (argv: string[], locale: NodeJS.ProcessEnv) => {
    let stdout = '';
    const code = await runHomeagentctl(['--socket', daemon.socketPath, ...argv], {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: () => true },
      stdin: Readable.from([]),
      cwd: daemon.dataDir,
      env: { LC_ALL: '', LC_MESSAGES: '', ...locale },
    });
    return { code, stdout };
  };
  const chinese = { LANG: 'zh_CN.UTF-8' };
  const english = { LANG: 'C.UTF-8' };

  const statusZh = await ctl(['status'], chinese);
  t.equal(statusZh.code, 0);
  t.match(statusZh.stdout, /已运行 .*进程号 /);
  t.match(statusZh.stdout, /\n服务：\n/);
  t.match((await ctl(['status'], english)).stdout, /\n {2}state running, up .*, pid /);
  t.match((await ctl(['status'], { LC_ALL: 'C', LANG: 'zh_CN.UTF-8' })).stdout, /\nservices:\n/, 'LC_ALL=C wins over a Chinese LANG');

  const getZh = await ctl(['config', 'get', 'core.daemon.stop_timeout_ms'], chinese);
  t.equal(getZh.code, 0);
  t.match(getZh.stdout, /^core\.daemon\.stop_timeout_ms = /);
  t.match(getZh.stdout, /\n {2}类型 .*，默认 .*，来源 默认，环境变量 HOMEAGENT_/);
  t.notMatch(getZh.stdout, /type |default |source /, 'no English label');
  const view = JSON.parse((await ctl(['--json', 'config', 'get', 'core.daemon.stop_timeout_ms'], english)).stdout) as SettingView;
  t.ok(view.description_zh, 'the daemon sends the Chinese description');
  t.match(getZh.stdout, view.description_zh ?? '(none)', 'which the Chinese answer shows');
  t.same(
    JSON.parse((await ctl(['--json', 'config', 'get', 'core.daemon.stop_timeout_ms'], chinese)).stdout),
    view,
    '--json does not follow the locale',
  );
  t.equal(
    getZh.stdout,
    [
      'core.daemon.stop_timeout_ms = 10000',
      '  正常关机最多等多久；超时后守护进程不再等待各服务，直接退出。',
      '  类型 integer（1000..120000），默认 10000，来源 默认，环境变量 HOMEAGENT_DAEMON_STOP_TIMEOUT_MS',
      '',
    ].join('\n'),
    'as README.md shows it',
  );

  const set = await ctl(['config', 'set', 'core.daemon.stop_timeout_ms', '20000'], chinese);
  t.equal(set.code, 0);
  t.match((await ctl(['config', 'history'], chinese)).stdout, /\S+ {2}cli\S* +设置 +core\.daemon\.stop_timeout_ms/);
  t.match((await ctl(['config', 'history'], english)).stdout, /\S+ {2}cli\S* +set +core\.daemon\.stop_timeout_ms/);
});

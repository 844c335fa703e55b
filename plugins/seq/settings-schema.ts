/**
 * The settings of the seq plugin, `plugin.seq.*`: defaults, bounds, descriptions and
 * `requires_restart` for each. The configuration schema composes it (scripts/gen-builtins.mjs); the
 * plugin reads its values through `PluginSettings<SeqSettings>`.
 */
import { type Static, Type } from '@sinclair/typebox';
import { pluginEnabled, pluginMeta } from '../../src/sdk/settings.js';

export const settingsSchema = Type.Object(
  {
    enabled: pluginEnabled('seq'),
    max_sequences: Type.Integer({
      default: 200,
      minimum: 1,
      maximum: 10000,
      ...pluginMeta('seq', 'Sequences kept at most; seq_create refuses a new one beyond it.', {
        description_zh: '最多保存多少条序列；超过时 seq_create 拒绝新建。',
      }),
    }),
    max_groups: Type.Integer({
      default: 20,
      minimum: 1,
      maximum: 200,
      ...pluginMeta('seq', 'Groups one sequence may have.', { description_zh: '一条序列最多有几个组。' }),
    }),
    max_calls_per_group: Type.Integer({
      default: 20,
      minimum: 1,
      maximum: 200,
      ...pluginMeta('seq', 'Tool calls one group may have.', { description_zh: '一个组最多有几个工具调用。' }),
    }),
    max_call_depth: Type.Integer({
      default: 4,
      minimum: 1,
      maximum: 16,
      ...pluginMeta('seq', 'How deep sequences may call sequences (seq_call with #name) while running; deeper is refused.', {
        description_zh: '运行时序列调用序列（seq_call 的 #名称）最多嵌套几层；更深则拒绝。',
      }),
    }),
    run_timeout_s: Type.Integer({
      default: 120,
      minimum: 1,
      maximum: 3600,
      ...pluginMeta('seq', 'Longest a seq_run, seq_call or seq_when_call may take as a whole, in seconds.', {
        description_zh: '一次 seq_run、seq_call 或 seq_when_call 整体最长运行多少秒。',
        requires_restart: true,
      }),
    }),
    max_definition_chars: Type.Integer({
      default: 20000,
      minimum: 1000,
      maximum: 200000,
      ...pluginMeta('seq', 'Longest definition (as JSON) seq_create accepts.', {
        description_zh: 'seq_create 接受的定义（JSON）最长多少字符。',
      }),
    }),
    run_by_name: Type.Boolean({
      default: true,
      ...pluginMeta(
        'seq',
        'A message that is just the name of a sequence ("good night", "晚安") runs it without the model, when its steps only read or act.',
        { description_zh: '一条消息恰好是某条序列的名字（"good night"、"晚安"）时，若其步骤只读取或普通操作，不经模型直接运行。' },
      ),
    }),
  },
  { additionalProperties: false, default: {} },
);

export type SeqSettings = Static<typeof settingsSchema>;

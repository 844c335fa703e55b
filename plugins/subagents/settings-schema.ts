/**
 * The settings of the subagents plugin, `plugin.subagents.*`: every limit of a child sub-agent
 * (how many at once, its tool rounds, its tokens, its wall time, how much of its task and result
 * is kept) with its default, bounds and description. The configuration schema composes it
 * (scripts/gen-builtins.mjs); the plugin reads its values through `PluginSettings<SubagentsSettings>`.
 */
import { type Static, Type } from '@sinclair/typebox';
import { pluginEnabled, pluginMeta } from '../../src/sdk/settings.js';

/** The original's range of spawn_child's max_turns. */
export const MAX_TURNS_CEILING = 30;

export const settingsSchema = Type.Object(
  {
    enabled: pluginEnabled('subagents'),
    max_concurrent: Type.Integer({
      default: 3,
      minimum: 1,
      maximum: 16,
      ...pluginMeta('subagents', 'Sub-agents that may run at once; spawn_child refuses another beyond it.', {
        description_zh: '同时最多运行几个子代理；超过时 spawn_child 拒绝再启动。',
      }),
    }),
    default_max_turns: Type.Integer({
      default: 5,
      minimum: 1,
      maximum: MAX_TURNS_CEILING,
      ...pluginMeta('subagents', 'Tool rounds a sub-agent gets when spawn_child names no max_turns; after them it answers without tools.', {
        description_zh: 'spawn_child 未指定 max_turns 时子代理可用的工具轮数；用完后它不再调用工具，直接作答。',
      }),
    }),
    max_turns: Type.Integer({
      default: MAX_TURNS_CEILING,
      minimum: 1,
      maximum: MAX_TURNS_CEILING,
      ...pluginMeta('subagents', 'The most tool rounds spawn_child may give a sub-agent (its max_turns is cut to this).', {
        description_zh: 'spawn_child 最多能给子代理多少工具轮（更大的 max_turns 会被截到这个值）。',
      }),
    }),
    max_total_tokens: Type.Integer({
      default: 60000,
      minimum: 100,
      maximum: 2000000,
      ...pluginMeta(
        'subagents',
        "Tokens (prompt and completion, as the model's vendor counts them) one sub-agent may use over all its requests; it is stopped when they are spent.",
        { description_zh: '一个子代理所有请求合计最多使用多少 token（提示加回答，按模型厂商的计数）；用完即停止。' },
      ),
    }),
    max_wall_time_s: Type.Integer({
      default: 300,
      minimum: 1,
      maximum: 3600,
      ...pluginMeta('subagents', 'Longest a sub-agent may run, in seconds; it is stopped then, its running request and tools cancelled.', {
        description_zh: '一个子代理最长运行多少秒；到时停止，正在进行的请求和工具被取消。',
      }),
    }),
    max_task_chars: Type.Integer({
      default: 4000,
      minimum: 100,
      maximum: 20000,
      ...pluginMeta('subagents', 'Longest task spawn_child accepts, in characters.', {
        description_zh: 'spawn_child 接受的任务描述最长多少字符。',
      }),
    }),
    max_result_chars: Type.Integer({
      default: 4000,
      minimum: 200,
      maximum: 50000,
      ...pluginMeta('subagents', "Characters of a sub-agent's result kept and passed on to the conversation; the rest is cut.", {
        description_zh: '子代理结果保留并转告对话的最多字符数；其余截断。',
      }),
    }),
    keep_finished: Type.Integer({
      default: 50,
      minimum: 1,
      maximum: 1000,
      ...pluginMeta(
        'subagents',
        'Finished sub-agents child_result still knows; older ones are forgotten first. Nothing is kept across a restart.',
        {
          description_zh: 'child_result 仍能查到的已结束子代理个数；先忘掉最早的。重启后都不保留。',
        },
      ),
    }),
    excluded_tools: Type.Array(Type.String({ minLength: 1, maxLength: 128 }), {
      default: [],
      maxItems: 200,
      ...pluginMeta(
        'subagents',
        'More tools (`*` matches any characters: cmd_*) sub-agents are not offered, besides those that spawn agents, change plugins or approve actions, which they never are.',
        {
          description_zh:
            '除了启动代理、修改插件或批准操作的工具（子代理永远用不到）以外，还有哪些工具不给子代理（`*` 匹配任意字符，如 cmd_*）。',
        },
      ),
    }),
  },
  { additionalProperties: false, default: {} },
);

export type SubagentsSettings = Static<typeof settingsSchema>;

/**
 * The settings of the cmd plugin, `plugin.cmd.*`: defaults, bounds, descriptions and
 * `requires_restart` for each. The configuration schema composes it (src/config/plugin-sections.ts);
 * the plugin reads its values through `PluginSettings<CmdSettings>`.
 */
import { type Static, Type } from '@sinclair/typebox';
import { pluginEnabled, pluginMeta } from '../../src/sdk/settings.js';

/** One program cmd_run may start. */
const CmdProgramSchema = Type.Object(
  {
    program: Type.String({
      pattern: '^(/[^\\u0000]*|[A-Za-z0-9._+-]{1,64})$',
      description: 'Program name (looked up in /usr/local/bin, /usr/bin, /bin) or absolute path.',
    }),
    args: Type.Optional(
      Type.Array(Type.String({ maxLength: 512 }), {
        maxItems: 64,
        description: 'Regular expressions; every argument must match one of them. Absent: any argument that no deny rule refuses.',
      }),
    ),
    allow_flags: Type.Optional(
      Type.Array(Type.String({ maxLength: 64 }), {
        maxItems: 64,
        description: 'Side-effect flags refused by default that this entry explicitly allows (e.g. "-delete" for find, "-i" for sed).',
      }),
    ),
  },
  { additionalProperties: false },
);

const DEFAULT_CMD_PROGRAMS = [
  'cat',
  'date',
  'df',
  'du',
  'echo',
  'file',
  'find',
  'free',
  'grep',
  'head',
  'hostname',
  'id',
  'ls',
  'ping',
  'ps',
  'sed',
  'sort',
  'stat',
  'tail',
  'uname',
  'uniq',
  'uptime',
  'wc',
  'whoami',
].map((program) => ({ program }));

export const settingsSchema = Type.Object(
  {
    enabled: pluginEnabled('cmd'),
    allow: Type.Array(CmdProgramSchema, {
      default: DEFAULT_CMD_PROGRAMS,
      maxItems: 256,
      ...pluginMeta(
        'cmd',
        'Programs cmd_run may start, each {program, args (regexes every argument must match), allow_flags}. No shell is ever used; side-effect flags (find -delete/-exec, sed -i, sort -o, ...) are refused unless listed in allow_flags.',
        {
          description_zh:
            'cmd_run 可以启动的程序，每个为 {program, args（每个参数都必须匹配的正则）, allow_flags}。从不使用 shell；有副作用的选项（find -delete/-exec、sed -i、sort -o 等）除非列在 allow_flags 里，否则拒绝。',
        },
      ),
    }),
    timeout_ms: Type.Integer({
      default: 30000,
      minimum: 100,
      maximum: 600000,
      ...pluginMeta('cmd', 'Default and longest run time of one command; it is killed (SIGTERM, then SIGKILL) when exceeded.', {
        description_zh: '一条命令的默认和最长运行时间；超时就结束它（先 SIGTERM，再 SIGKILL）。',
      }),
    }),
    max_output_bytes: Type.Integer({
      default: 32000,
      minimum: 256,
      maximum: 1048576,
      ...pluginMeta('cmd', 'Output kept per stream (stdout, stderr); the rest is cut with a marker.', {
        description_zh: '每个输出流（stdout、stderr）保留多少字节；其余截断并留下标记。',
      }),
    }),
    workdir: Type.String({
      default: '',
      maxLength: 4096,
      ...pluginMeta(
        'cmd',
        "Default working directory; empty means the plugin's data directory in-process and the runner's own /var/lib/homeagent-cmd in the isolated runner. A workdir given to cmd_run must be inside it.",
        {
          description_zh:
            '默认工作目录；留空时进程内为插件的数据目录，隔离执行器里为执行器自己的 /var/lib/homeagent-cmd。传给 cmd_run 的 workdir 必须在它里面。',
        },
      ),
    }),
    history: Type.Integer({
      default: 100,
      minimum: 0,
      maximum: 10000,
      ...pluginMeta('cmd', 'Recent runs kept for cmd_history.', { description_zh: '为 cmd_history 保留最近几次运行。' }),
    }),
    isolation: Type.Union([Type.Literal('auto'), Type.Literal('runner'), Type.Literal('in_process')], {
      default: 'auto',
      ...pluginMeta(
        'cmd',
        "Where commands run. runner: in the isolated homeagent-cmd service (its own user, none of the daemon's folders, processes or secrets visible) through runner_socket, and nothing runs when it is missing; in_process: as the daemon's own user, with every argument that resolves into the daemon's data, configuration or /proc/<pid> refused (homeagentctl status says \"cmd_run not isolated\"); auto: runner when runner_socket exists, else in_process.",
        {
          description_zh:
            '命令在哪里运行。runner：通过 runner_socket 在隔离的 homeagent-cmd 服务里运行（独立用户，看不到守护进程的目录、进程和机密），它不存在时什么都不运行；in_process：以守护进程自己的用户运行，任何指向守护进程数据、配置或 /proc/<pid> 的参数都被拒绝（homeagentctl status 会显示 "cmd_run not isolated"）；auto：runner_socket 存在时用 runner，否则 in_process。',
        },
      ),
    }),
    runner_socket: Type.String({
      default: '/run/homeagent-cmd/cmd.sock',
      minLength: 1,
      maxLength: 4096,
      ...pluginMeta(
        'cmd',
        "The isolated runner's socket (homeagent-cmd.socket); a workdir set for the runner must be a folder the homeagent-cmd user may use.",
        { description_zh: '隔离执行器的 socket（homeagent-cmd.socket）；为执行器设置的 workdir 必须是 homeagent-cmd 用户能使用的目录。' },
      ),
    }),
  },
  { additionalProperties: false, default: {} },
);

export type CmdSettings = Static<typeof settingsSchema>;

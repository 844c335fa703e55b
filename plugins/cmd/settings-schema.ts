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
      ),
    }),
    timeout_ms: Type.Integer({
      default: 30000,
      minimum: 100,
      maximum: 600000,
      ...pluginMeta('cmd', 'Default and longest run time of one command; it is killed (SIGTERM, then SIGKILL) when exceeded.'),
    }),
    max_output_bytes: Type.Integer({
      default: 32000,
      minimum: 256,
      maximum: 1048576,
      ...pluginMeta('cmd', 'Output kept per stream (stdout, stderr); the rest is cut with a marker.'),
    }),
    workdir: Type.String({
      default: '',
      maxLength: 4096,
      ...pluginMeta(
        'cmd',
        "Default working directory; empty means the plugin's data directory in-process and the runner's own /var/lib/homeagent-cmd in the isolated runner. A workdir given to cmd_run must be inside it.",
      ),
    }),
    history: Type.Integer({
      default: 100,
      minimum: 0,
      maximum: 10000,
      ...pluginMeta('cmd', 'Recent runs kept for cmd_history.'),
    }),
    isolation: Type.Union([Type.Literal('auto'), Type.Literal('runner'), Type.Literal('in_process')], {
      default: 'auto',
      ...pluginMeta(
        'cmd',
        "Where commands run. runner: in the isolated homeagent-cmd service (its own user, none of the daemon's folders, processes or secrets visible) through runner_socket, and nothing runs when it is missing; in_process: as the daemon's own user, with every argument that resolves into the daemon's data, configuration or /proc/<pid> refused (homeagentctl status says \"cmd_run not isolated\"); auto: runner when runner_socket exists, else in_process.",
      ),
    }),
    runner_socket: Type.String({
      default: '/run/homeagent-cmd/cmd.sock',
      minLength: 1,
      maxLength: 4096,
      ...pluginMeta(
        'cmd',
        "The isolated runner's socket (homeagent-cmd.socket); a workdir set for the runner must be a folder the homeagent-cmd user may use.",
      ),
    }),
  },
  { additionalProperties: false, default: {} },
);

export type CmdSettings = Static<typeof settingsSchema>;

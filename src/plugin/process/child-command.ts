/**
 * The command line, working directory and environment of a plugin process. The environment is
 * built from nothing: the daemon's own variables (HOMEAGENT_*, API keys, NODE_OPTIONS) never reach
 * plugin code.
 */
import { findOnPath } from '../../shared/find-on-path.js';
import type { PluginsLimits, RuntimeContext } from '../runtime.js';
import { CHILD_RUNTIME_ENTRY, fsGrants } from './fs-grants.js';

export interface ChildCommand {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
}

/** Node 22 renamed the flag; Node 20 only knows the experimental one. */
const PERMISSION_FLAG = process.allowedNodeEnvironmentFlags.has('--permission') ? '--permission' : '--experimental-permission';
/** The "experimental feature" warning would be logged at every start of every plugin. */
const QUIET_FLAGS = process.allowedNodeEnvironmentFlags.has('--disable-warning') ? ['--disable-warning=ExperimentalWarning'] : [];

/** Variables passed through from the daemon's environment, when set. */
const PASSED_ENV = ['PATH', 'LANG', 'TZ'] as const;

export function childCommand(dc: Pick<RuntimeContext, 'dir' | 'manifest' | 'dataDir' | 'context'>, limits: PluginsLimits): ChildCommand {
  const data = dc.context.paths.data;
  const args = [`--max-old-space-size=${limits.process_heap_mb}`, ...QUIET_FLAGS];
  if (limits.process_permissions) {
    const grants = fsGrants(dc);
    // Repeated flags, one path each: Node 20 no longer splits a flag's value at commas.
    args.push(PERMISSION_FLAG, ...grants.read.map((p) => `--allow-fs-read=${p}`), ...grants.write.map((p) => `--allow-fs-write=${p}`));
  }
  args.push(CHILD_RUNTIME_ENTRY);
  return { ...withParentDeathSignal(process.execPath, args), cwd: data, env: childEnv(data) };
}

/**
 * When the daemon dies without stopping its plugins (SIGKILL, the OOM killer, outside systemd's
 * control-group cleanup), a plugin process must not live on: a blocked one cannot even notice its
 * closed pipes. setpriv(1) (util-linux) sets the kernel's parent-death signal and then execs node,
 * so the process (same pid) is killed with its parent. Without setpriv the pipes' closing is what
 * stops a plugin that still runs its event loop.
 */
const SETPRIV = process.platform === 'linux' ? findOnPath('setpriv') : undefined;

export function withParentDeathSignal(
  file: string,
  args: string[],
  setpriv: string | null = SETPRIV ?? null,
): Pick<ChildCommand, 'file' | 'args'> {
  return setpriv === null ? { file, args } : { file: setpriv, args: ['--pdeathsig', 'KILL', '--', file, ...args] };
}

export function childEnv(home: string): Record<string, string> {
  const env: Record<string, string> = { HOME: home };
  for (const name of PASSED_ENV) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

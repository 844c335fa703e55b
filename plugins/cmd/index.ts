/**
 * The cmd plugin: `cmd_run` starts one program from the owner's allowlist (never through a
 * shell), and `cmd_history` shows recent runs. The policy (policy.ts) decides what may run; every
 * run and every refusal is audited.
 *
 * Where it runs (plugin.cmd.isolation): in the isolated runner service when its socket is there
 * (runner-client.ts; under systemd, homeagent-cmd.socket), as another user who can see none of
 * the daemon's secrets; otherwise in-process, as the daemon's own user, with every argument that
 * resolves into the daemon's folders or processes refused (path-guard.ts) and a status notice
 * saying "cmd_run not isolated". The policy, the audit and the history stay here either way.
 */
import { mkdirSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import { Type } from '@sinclair/typebox';
import {
  type Caller,
  definePlugin,
  ERROR_CODES,
  type ErrorCode,
  HomeAgentError,
  type PluginContext,
  type PluginHealth,
  type PluginInstance,
  ToolError,
} from '../../src/sdk/index.js';
import { guardPaths, type ProtectedTrees } from './path-guard.js';
import { type ApprovedCommand, checkCommand, MAX_ARG_LENGTH, MAX_ARGV_ITEMS, type ProgramLookup } from './policy.js';
import { systemProgramLookup } from './program-lookup.js';
import { isMultiCallBinary } from './program-rules.js';
import { collectProtectedTrees } from './protected-trees.js';
import { type RunResult, runCommand } from './runner.js';
import { runInRunner } from './runner-client.js';
import type { CmdSettings } from './settings-schema.js';
import { resolveWorkdir } from './workdir.js';

interface RunArgs {
  argv: unknown;
  timeout_ms?: number;
  workdir?: string;
}

/** Who asked for a run, for the audit record. */
interface Requester {
  source: string;
  task_id?: string;
  call_id?: string;
}

interface HistoryEntry {
  at: string;
  argv: unknown;
  workdir: string;
  isolation: 'runner' | 'in_process';
  exit_code: number | null;
  signal: string | null;
  duration_ms: number;
  timed_out: boolean;
  truncated: boolean;
}

/** Where the next command runs, and why. */
type Placement = { mode: 'runner'; socket: string } | { mode: 'in_process'; why: string } | { mode: 'unavailable'; why: string };

export interface CmdPluginOptions {
  /** Where programs are found; tests pass their own. */
  lookup?: ProgramLookup;
  /** Between SIGTERM and SIGKILL when a command is stopped. */
  killGraceMs?: number;
}

const CHILD_PATH = '/usr/local/bin:/usr/bin:/bin';
const DEFAULT_KILL_GRACE_MS = 2000;
/** The schema's longest cmd timeout plus the kill grace: the plugin's own timer always fires first. */
const TOOL_TIMEOUT_MS = 600_000 + DEFAULT_KILL_GRACE_MS + 1000;
/** Audit records and history keep this much of an argv. */
const AUDIT_ARGV_ITEMS = 64;
const AUDIT_ARG_CHARS = 512;
/** The status notice this plugin raises while commands are not isolated. */
export const ISOLATION_NOTICE = 'plugin.cmd.isolation';

export class CmdPlugin implements PluginInstance {
  readonly #ctx: PluginContext<CmdSettings>;
  readonly #lookup: ProgramLookup;
  readonly #killGraceMs: number;
  readonly #history: HistoryEntry[] = [];
  readonly #running = new Map<AbortController, Promise<unknown>>();
  readonly #unregister: Array<() => void> = [];
  /** The notice last published, so an unchanged placement publishes nothing. */
  #notice: string | null = null;
  /** Refusals found after the policy check, already audited as cmd.denied. */
  readonly #refusals = new WeakSet<object>();

  constructor(ctx: PluginContext<CmdSettings>, options: CmdPluginOptions = {}) {
    this.#ctx = ctx;
    this.#lookup = options.lookup ?? systemProgramLookup;
    this.#killGraceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  }

  async start(): Promise<void> {
    mkdirSync(this.#ctx.paths.data, { recursive: true });
    this.#unregister.push(
      this.#ctx.tools.register<RunArgs>({
        name: 'cmd_run',
        tier: 'dangerous',
        parallel_safe: false,
        timeout_ms: TOOL_TIMEOUT_MS,
        description:
          "Runs one program from the owner's allowlist, without a shell: argv is the program and then each argument as its own string (no pipes, redirection, globbing, quotes or $VARS). Options that delete, write, edit in place or run other programs (find -delete/-exec, sed -i, sort -o, ...) are refused unless the owner allowed them, and so are paths into HomeAgent's own data, configuration and processes. Returns exit_code, signal, stdout, stderr (each capped), duration_ms, truncated, timed_out.",
        parameters: {
          type: 'object',
          properties: {
            argv: {
              type: 'array',
              items: { type: 'string' },
              description: `Program name first, e.g. ["ls", "-l", "notes"]; at most ${MAX_ARGV_ITEMS} items of ${MAX_ARG_LENGTH} characters.`,
            },
            timeout_ms: {
              type: 'integer',
              minimum: 1,
              description: 'Kill the program after this long (capped by plugin.cmd.timeout_ms, which is also the default).',
            },
            workdir: {
              type: 'string',
              description: 'Working directory, absolute or relative to the default one; it must lie inside the default one.',
            },
          },
          required: ['argv'],
          additionalProperties: false,
        },
        execute: (args, context) =>
          this.#run(args, { task_id: context.task_id, call_id: context.call_id, source: context.source }, context.signal),
      }),
      this.#ctx.tools.register<{ limit?: number }>({
        name: 'cmd_history',
        tier: 'read',
        parallel_safe: true,
        description:
          'Recent cmd_run runs, newest first: argv, workdir, isolation, exit_code, signal, duration_ms, timed_out, truncated (no output).',
        parameters: {
          type: 'object',
          properties: { limit: { type: 'integer', minimum: 1, maximum: 10000, description: 'How many runs (default 20).' } },
          additionalProperties: false,
        },
        execute: ({ limit }) => ({ runs: this.#history.slice(-(limit ?? 20)).reverse() }),
      }),
    );
    this.#registerOwnerMethod();
    this.#place();
  }

  /** cmd.run for the owner's tools; cmd_run works without it in a daemon that takes no control methods. */
  #registerOwnerMethod(): void {
    try {
      this.#unregister.push(
        this.#ctx.control.register({
          name: 'cmd.run',
          description:
            "Runs one program for the owner (the CLI socket, the web page's admin) through cmd_run's allowlist, argument rules, isolation and audit: argv, and optionally workdir and timeout_ms as cmd_run takes them. Other plugins are refused: they go through cmd_run, which asks the owner.",
          // It runs without the owner's approval: only the owner may call it.
          owner_only: true,
          params: Type.Object({
            argv: Type.Array(Type.String({ maxLength: MAX_ARG_LENGTH }), { minItems: 1, maxItems: MAX_ARGV_ITEMS }),
            workdir: Type.Optional(Type.String({ maxLength: MAX_ARG_LENGTH })),
            timeout_ms: Type.Optional(Type.Integer({ minimum: 1 })),
          }),
          handler: (params, caller) => this.#runForOwner(params, caller),
        }),
      );
    } catch (error) {
      // By code, not class: a host built from another copy of the kernel throws its own HomeAgentError.
      if ((error as { code?: unknown }).code !== 'HA_ERR_UNAVAILABLE') throw error;
      this.#ctx.log.warn({ err: error }, 'cmd.run is not available in this daemon; cmd_run is');
    }
  }

  async stop(): Promise<void> {
    for (const unregister of this.#unregister.splice(0)) unregister();
    for (const controller of this.#running.keys()) controller.abort();
    await Promise.allSettled(this.#running.values());
    this.#publishNotice(null);
  }

  health(): Required<PluginHealth> {
    const placement = this.#place();
    // placement.why is the placement's own reason text.
    const [where, whereZh] =
      placement.mode === 'runner'
        ? [`isolated in the runner at ${placement.socket}`, `在 ${placement.socket} 的执行器里隔离运行`]
        : placement.mode === 'in_process'
          ? [`not isolated: in-process (${placement.why})`, `未隔离：在进程内运行（${placement.why}）`]
          : [`no commands run: ${placement.why}`, `不运行任何命令：${placement.why}`];
    return {
      ok: true,
      detail: `${this.#running.size} running, ${this.#history.length} runs in history; ${where}`,
      detail_zh: `${this.#running.size} 个正在运行，历史中 ${this.#history.length} 次运行；${whereZh}`,
    };
  }

  async #runForOwner(params: RunArgs, caller: Caller): Promise<RunResult> {
    try {
      return await this.#run(params, { source: caller.actor }, new AbortController().signal);
    } catch (error) {
      if (!(error instanceof ToolError)) throw error;
      // The control API answers with coded errors; the tool error's detail starts with its code.
      const written = /^(HA_ERR_[A-Z_]+): /.exec(error.info.detail)?.[1];
      const code: ErrorCode = written !== undefined && written in ERROR_CODES ? (written as ErrorCode) : 'HA_ERR_CMD_FAILED';
      const message = written === code ? error.info.detail.slice(code.length + 2) : error.info.detail;
      throw new HomeAgentError(code, error.info.hint ? `${message} (${error.info.hint})` : message);
    }
  }

  async #run(args: RunArgs, who: Requester, signal: AbortSignal): Promise<RunResult> {
    const argv = auditArgv(args.argv);
    const deny = (field: string, reason: string) => this.#ctx.audit('cmd.denied', { argv, field, reason, ...who });
    const check = checkCommand(args.argv, this.#ctx.settings.get('allow'), this.#lookup);
    if (!check.ok) {
      deny(check.denial.field, check.denial.detail);
      throw new ToolError(check.denial);
    }
    const placement = this.#place();
    if (placement.mode === 'unavailable') {
      const detail = `HA_ERR_CMD_RUNNER_UNAVAILABLE: ${placement.why}, so no command runs`;
      deny('argv', detail);
      throw new ToolError({
        reason: 'unavailable',
        detail,
        hint: 'the owner starts homeagent-cmd.socket, or sets plugin.cmd.isolation to auto',
      });
    }

    const { command } = check;
    const limit = this.#ctx.settings.get('timeout_ms');
    const timeoutMs = Math.min(args.timeout_ms ?? limit, limit);
    const controller = new AbortController();
    const forward = () => controller.abort();
    signal.addEventListener('abort', forward, { once: true });
    if (signal.aborted) controller.abort();
    const run =
      placement.mode === 'in_process'
        ? this.#runInProcess(command, args.workdir, timeoutMs, controller.signal, deny)
        : this.#runIsolated(placement.socket, command, args.workdir, timeoutMs, controller.signal);
    this.#running.set(controller, run);
    const base = { argv, executable: command.executable, isolation: placement.mode };
    try {
      const { result, workdir } = await run;
      const summary = {
        exit_code: result.exit_code,
        signal: result.signal,
        duration_ms: result.duration_ms,
        timed_out: result.timed_out,
        truncated: result.truncated,
      };
      this.#ctx.audit('cmd.run', { ...base, workdir, ...summary, cancelled: result.cancelled, ...who });
      this.#remember({ at: new Date().toISOString(), argv, workdir, isolation: placement.mode, ...summary });
      return result;
    } catch (error) {
      if (this.#refusals.has(error as object)) throw error;
      // The runner refuses a workdir outside its base as the in-process check does: a denial, not a run.
      if (error instanceof ToolError && error.info.field === 'workdir') deny('workdir', error.info.detail);
      else this.#ctx.audit('cmd.run', { ...base, error: error instanceof ToolError ? error.info.detail : String(error), ...who });
      throw error;
    } finally {
      this.#running.delete(controller);
      signal.removeEventListener('abort', forward);
    }
  }

  /** As the daemon's user, once the working directory and the paths are checked (the runner checks its own). */
  async #runInProcess(
    command: ApprovedCommand,
    requested: string | undefined,
    timeoutMs: number,
    signal: AbortSignal,
    deny: (field: string, reason: string) => void,
  ): Promise<{ result: RunResult; workdir: string }> {
    let workdir: string;
    try {
      workdir = await this.#inProcessWorkdir(command, requested, deny);
    } catch (error) {
      this.#refusals.add(error as object);
      throw error;
    }
    const result = await runCommand({
      executable: command.executable,
      argv0: command.argv0,
      args: command.args,
      cwd: workdir,
      env: { PATH: CHILD_PATH, LANG: 'C.UTF-8', HOME: workdir },
      timeoutMs,
      maxOutputBytes: this.#ctx.settings.get('max_output_bytes'),
      killGraceMs: this.#killGraceMs,
      signal,
    });
    return { result, workdir };
  }

  /** In the runner service, as its own user. */
  #runIsolated(
    socket: string,
    command: ApprovedCommand,
    requested: string | undefined,
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<{ result: RunResult; workdir: string }> {
    return runInRunner(socket, {
      executable: command.executable,
      argv0: command.argv0,
      args: command.args,
      base: this.#ctx.settings.get('workdir'),
      workdir: requested ?? '',
      timeoutMs,
      maxOutputBytes: this.#ctx.settings.get('max_output_bytes'),
      killGraceMs: this.#killGraceMs,
      signal,
    });
  }

  /** The in-process working directory, once the command's paths stay out of the daemon's trees. */
  async #inProcessWorkdir(
    command: ApprovedCommand,
    requested: string | undefined,
    deny: (field: string, reason: string) => void,
  ): Promise<string> {
    let workdir: string;
    let trees: ProtectedTrees;
    try {
      workdir = resolveWorkdir(this.#ctx.settings.get('workdir') || this.#ctx.paths.data, requested);
      trees = await collectProtectedTrees(this.#ctx);
    } catch (error) {
      if (error instanceof ToolError) deny(error.info.field ?? 'argv', error.info.detail);
      throw error;
    }
    const real = basename(command.executable);
    const names = [basename(command.argv0), ...(isMultiCallBinary(real) ? [] : [real])];
    const problem = guardPaths([...new Set(names)], command.args, workdir, trees);
    if (problem !== undefined) {
      const detail = `HA_ERR_CMD_DENIED: ${problem}`;
      deny('argv', detail);
      throw new ToolError({
        reason: 'rejected',
        field: 'argv',
        detail,
        hint: "leave out paths into HomeAgent's own data, configuration and processes; commands here run as the daemon's user (not isolated)",
      });
    }
    return workdir;
  }

  /** Decides where commands run now, and keeps the status notice in step with it. */
  #place(): Placement {
    const isolation = this.#ctx.settings.get('isolation');
    const socket = this.#ctx.settings.get('runner_socket');
    let placement: Placement;
    if (isolation === 'in_process') placement = { mode: 'in_process', why: 'plugin.cmd.isolation is in_process' };
    else if (isSocket(socket)) placement = { mode: 'runner', socket };
    else if (isolation === 'runner')
      placement = { mode: 'unavailable', why: `plugin.cmd.isolation is runner and there is no runner socket at ${socket}` };
    else placement = { mode: 'in_process', why: `plugin.cmd.isolation is auto and there is no runner socket at ${socket}` };
    if (placement.mode === 'runner') this.#publishNotice(null);
    else if (placement.mode === 'in_process') {
      this.#publishNotice(
        `cmd_run not isolated: commands run inside the daemon as its own user (${placement.why}); arguments that resolve into the daemon's folders or processes are refused, but only the homeagent-cmd runner keeps its secrets out of reach (docs/security.md)`,
        'warning',
      );
    } else
      this.#publishNotice(
        `cmd_run cannot run commands: ${placement.why} (start homeagent-cmd.socket, or set plugin.cmd.isolation to auto)`,
        'error',
      );
    return placement;
  }

  #publishNotice(message: string | null, level: 'warning' | 'error' = 'warning'): void {
    const key = message === null ? null : `${level}:${message}`;
    if (key === this.#notice) return;
    this.#notice = key;
    this.#ctx.events.publish('daemon.notice', { key: ISOLATION_NOTICE, level, message });
  }

  #remember(entry: HistoryEntry): void {
    this.#history.push(entry);
    const keep = this.#ctx.settings.get('history');
    if (this.#history.length > keep) this.#history.splice(0, this.#history.length - keep);
  }
}

function isSocket(path: string): boolean {
  try {
    return statSync(path).isSocket();
  } catch {
    return false;
  }
}

/** An argv as audit records keep it: bounded, and anything that is not a string described. */
function auditArgv(argv: unknown): unknown {
  if (!Array.isArray(argv)) return `<${argv === null ? 'null' : typeof argv}>`;
  const items: string[] = argv.slice(0, AUDIT_ARGV_ITEMS).map((item) => {
    if (typeof item !== 'string') return `<${item === null ? 'null' : typeof item}>`;
    return item.length > AUDIT_ARG_CHARS ? `${item.slice(0, AUDIT_ARG_CHARS)}… (${item.length} characters)` : item;
  });
  if (argv.length > AUDIT_ARGV_ITEMS) items.push(`… ${argv.length - AUDIT_ARGV_ITEMS} more items`);
  return items;
}

export default definePlugin<CmdSettings>((ctx) => new CmdPlugin(ctx));

/**
 * The cmd plugin: `cmd_run` starts one program from the owner's allowlist (never through a
 * shell), and `cmd_history` shows recent runs. The policy (policy.ts) decides what may run; every
 * run and every refusal is audited.
 */
import { mkdirSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, sep } from 'node:path';
import { definePlugin, type PluginContext, type PluginInstance, type ToolContext, ToolError } from '../../src/sdk/index.js';
import { type CmdAllowEntry, checkCommand, MAX_ARG_LENGTH, MAX_ARGV_ITEMS, type ProgramLookup } from './policy.js';
import { systemProgramLookup } from './program-lookup.js';
import { type RunResult, runCommand } from './runner.js';

interface Settings {
  allow: CmdAllowEntry[];
  timeout_ms: number;
  max_output_bytes: number;
  workdir: string;
  history: number;
}

interface RunArgs {
  argv: unknown;
  timeout_ms?: number;
  workdir?: string;
}

interface HistoryEntry {
  at: string;
  argv: unknown;
  workdir: string;
  exit_code: number | null;
  signal: string | null;
  duration_ms: number;
  timed_out: boolean;
  truncated: boolean;
}

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

export class CmdPlugin implements PluginInstance {
  readonly #ctx: PluginContext;
  readonly #lookup: ProgramLookup;
  readonly #killGraceMs: number;
  readonly #history: HistoryEntry[] = [];
  readonly #running = new Map<AbortController, Promise<unknown>>();
  readonly #unregister: Array<() => void> = [];

  constructor(ctx: PluginContext, options: CmdPluginOptions = {}) {
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
          "Runs one program from the owner's allowlist, without a shell: argv is the program and then each argument as its own string (no pipes, redirection, globbing, quotes or $VARS). Options that delete, write, edit in place or run other programs (find -delete/-exec, sed -i, sort -o, ...) are refused unless the owner allowed them. Returns exit_code, signal, stdout, stderr (each capped), duration_ms, truncated, timed_out.",
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
        execute: (args, context) => this.#run(args, context),
      }),
      this.#ctx.tools.register<{ limit?: number }>({
        name: 'cmd_history',
        tier: 'read',
        parallel_safe: true,
        description: 'Recent cmd_run runs, newest first: argv, workdir, exit_code, signal, duration_ms, timed_out, truncated (no output).',
        parameters: {
          type: 'object',
          properties: { limit: { type: 'integer', minimum: 1, maximum: 10000, description: 'How many runs (default 20).' } },
          additionalProperties: false,
        },
        execute: ({ limit }) => ({ runs: this.#history.slice(-(limit ?? 20)).reverse() }),
      }),
    );
  }

  async stop(): Promise<void> {
    for (const unregister of this.#unregister.splice(0)) unregister();
    for (const controller of this.#running.keys()) controller.abort();
    await Promise.allSettled(this.#running.values());
  }

  health(): { ok: boolean; detail: string } {
    return { ok: true, detail: `${this.#running.size} running, ${this.#history.length} runs in history` };
  }

  async #run(args: RunArgs, context: ToolContext): Promise<RunResult> {
    const who = { task_id: context.task_id, call_id: context.call_id, source: context.source };
    const check = checkCommand(args.argv, this.#setting('allow'), this.#lookup);
    if (!check.ok) {
      this.#ctx.audit('cmd.denied', { argv: auditArgv(args.argv), field: check.denial.field, reason: check.denial.detail, ...who });
      throw new ToolError(check.denial);
    }
    let workdir: string;
    try {
      workdir = this.#workdir(args.workdir);
    } catch (error) {
      if (error instanceof ToolError) {
        this.#ctx.audit('cmd.denied', { argv: auditArgv(args.argv), field: 'workdir', reason: error.info.detail, ...who });
      }
      throw error;
    }

    const { command } = check;
    const limit = this.#setting('timeout_ms');
    const controller = new AbortController();
    const forward = () => controller.abort();
    context.signal.addEventListener('abort', forward, { once: true });
    if (context.signal.aborted) controller.abort();
    const run = runCommand({
      executable: command.executable,
      argv0: command.argv0,
      args: command.args,
      cwd: workdir,
      env: { PATH: CHILD_PATH, LANG: 'C.UTF-8', HOME: workdir },
      timeoutMs: Math.min(args.timeout_ms ?? limit, limit),
      maxOutputBytes: this.#setting('max_output_bytes'),
      killGraceMs: this.#killGraceMs,
      signal: controller.signal,
    });
    this.#running.set(controller, run);
    const argv = auditArgv(args.argv);
    try {
      const result = await run;
      const summary = {
        exit_code: result.exit_code,
        signal: result.signal,
        duration_ms: result.duration_ms,
        timed_out: result.timed_out,
        truncated: result.truncated,
      };
      this.#ctx.audit('cmd.run', { argv, executable: command.executable, workdir, ...summary, cancelled: result.cancelled, ...who });
      this.#remember({ at: new Date().toISOString(), argv, workdir, ...summary });
      return result;
    } catch (error) {
      const detail = error instanceof ToolError ? error.info.detail : String(error);
      this.#ctx.audit('cmd.run', { argv, executable: command.executable, workdir, error: detail, ...who });
      throw error;
    } finally {
      this.#running.delete(controller);
      context.signal.removeEventListener('abort', forward);
    }
  }

  /** The default working directory, or a requested one that really lies inside it. */
  #workdir(requested: string | undefined): string {
    const configured = this.#setting('workdir') || this.#ctx.paths.data;
    let base: string;
    try {
      base = realpathSync(configured);
    } catch {
      throw new ToolError({ reason: 'unavailable', detail: `the cmd working directory ${configured} does not exist` });
    }
    if (requested === undefined || requested === '') return base;
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused
    if (/[\u0000-\u001f\u007f]/.test(requested)) {
      throw new ToolError({ reason: 'rejected', field: 'workdir', detail: 'HA_ERR_CMD_DENIED: workdir contains control characters' });
    }
    const target = isAbsolute(requested) ? requested : join(base, requested);
    let real: string;
    try {
      real = realpathSync(target);
    } catch {
      throw new ToolError({ reason: 'not_found', field: 'workdir', detail: `workdir ${JSON.stringify(requested)} does not exist` });
    }
    // Checked on the real path, so `..` and symlinks that lead out are caught alike.
    if (real !== base && !real.startsWith(base + sep)) {
      throw new ToolError({
        reason: 'rejected',
        field: 'workdir',
        detail: `HA_ERR_CMD_DENIED: workdir ${JSON.stringify(requested)} resolves to ${real}, outside ${base}`,
        hint: `use a directory inside ${base}, or leave workdir out`,
      });
    }
    if (!statSync(real).isDirectory()) {
      throw new ToolError({ reason: 'rejected', field: 'workdir', detail: `workdir ${JSON.stringify(requested)} is not a directory` });
    }
    return real;
  }

  #remember(entry: HistoryEntry): void {
    this.#history.push(entry);
    const keep = this.#setting('history');
    if (this.#history.length > keep) this.#history.splice(0, this.#history.length - keep);
  }

  #setting<K extends keyof Settings>(key: K): Settings[K] {
    return this.#ctx.settings.get<Settings[K]>(key);
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

export default definePlugin((ctx) => new CmdPlugin(ctx));

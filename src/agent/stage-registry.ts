/**
 * Stage hooks: handlers registered by an owner (a subsystem or plugin) for one of the seven
 * closed {@link STAGES}. All handlers of a stage run concurrently on the same context and each is
 * isolated: a throw or rejection is logged with its owner and stage and recorded in
 * `context.errors`, and never reaches the other handlers or the caller. A handler still running
 * after the stage timeout is reported the same way and no longer waited for: a hung hook must not
 * hang every turn of the house.
 */
import type { Logger } from '../log/logger.js';
import { describeError, HomeAgentError } from '../shared/errors.js';
import { STAGES, type Stage, type StageContext, type StageHandler, type StageRegistration, type StageScope } from './types.js';

export interface StageRegistryOptions {
  /** core.agent.stage_timeout_ms, read at each run; default {@link DEFAULT_STAGE_TIMEOUT_MS}. */
  timeoutMs?: () => number;
}

export const DEFAULT_STAGE_TIMEOUT_MS = 10_000;

export interface StageRunOptions {
  /** The owner of the tool a before_toolcall/after_toolcall run is about; `own_tools` handlers of that owner run too. */
  toolOwner?: string;
}

const SCOPES: readonly StageScope[] = ['global', 'own_tools'];

export function isStage(name: string): name is Stage {
  return (STAGES as readonly string[]).includes(name);
}

/** `stage` is readonly for handlers; only the registry moves a context from stage to stage. */
type StageCursor = { stage: Stage };

export class StageRegistry {
  readonly #handlers = new Map<Stage, StageRegistration[]>();
  readonly #log: Logger;
  readonly #timeoutMs: () => number;

  constructor(log: Logger, options: StageRegistryOptions = {}) {
    this.#log = log;
    this.#timeoutMs = options.timeoutMs ?? (() => DEFAULT_STAGE_TIMEOUT_MS);
  }

  /**
   * Adds a handler; returns a function that removes just this one. The stage name is checked here
   * (plugins pass plain strings) so a typo fails at start-up rather than silently never firing.
   */
  register(owner: string, stage: string, handler: StageHandler, scope: StageScope = 'global'): () => void {
    if (!isStage(stage)) {
      throw new HomeAgentError(
        'HA_ERR_STAGE_UNKNOWN',
        `unknown stage ${JSON.stringify(stage)} (owner ${owner}); valid stages: ${STAGES.join(', ')}`,
        {
          details: { owner, stage, valid: [...STAGES] },
        },
      );
    }
    if (!SCOPES.includes(scope)) {
      // A programming error in the caller (TypeScript callers cannot get here); no catalogue code of its own.
      throw new HomeAgentError(
        'HA_ERR_INTERNAL',
        `unknown stage scope ${JSON.stringify(scope)} (owner ${owner}); valid scopes: ${SCOPES.join(', ')}`,
      );
    }
    const registration: StageRegistration = { owner, stage, scope, handler };
    this.#handlers.set(stage, [...(this.#handlers.get(stage) ?? []), registration]);
    return () => {
      const list = this.#handlers.get(stage);
      if (list)
        this.#handlers.set(
          stage,
          list.filter((r) => r !== registration),
        );
    };
  }

  /** Removes every handler the owner registered (the owner stopped or was unloaded). */
  removeOwner(owner: string): void {
    for (const [stage, list] of this.#handlers) {
      this.#handlers.set(
        stage,
        list.filter((r) => r.owner !== owner),
      );
    }
  }

  handlerCount(stage: Stage): number {
    return this.#handlers.get(stage)?.length ?? 0;
  }

  /**
   * Runs every handler of `stage` that applies (global ones, plus `own_tools` ones of
   * `options.toolOwner`) concurrently on `context`, after setting `context.stage`. Resolves, never
   * rejects, once all have settled or the stage timeout passed, with whether `context.response` is
   * set (the turn short-circuits).
   */
  async run(stage: Stage, context: StageContext, options: StageRunOptions = {}): Promise<boolean> {
    if (!isStage(stage))
      throw new HomeAgentError('HA_ERR_STAGE_UNKNOWN', `unknown stage ${JSON.stringify(stage)}; valid stages: ${STAGES.join(', ')}`);
    (context as StageCursor).stage = stage;
    // A snapshot: handlers registered or removed while this stage runs take effect next time.
    const applicable = (this.#handlers.get(stage) ?? []).filter((r) => r.scope === 'global' || r.owner === options.toolOwner);
    if (applicable.length > 0) {
      const timeoutMs = this.#timeoutMs();
      let timer: NodeJS.Timeout | undefined;
      const expired = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), timeoutMs);
      });
      const outcomes = await Promise.all(
        applicable.map((r) => {
          // `async` turns a synchronous throw into a rejection, so every handler is settled the same way.
          const settled = (async () => r.handler(context))().then(
            () => 'done' as const,
            (error: unknown) => ({ error }),
          );
          return Promise.race([settled, expired]);
        }),
      );
      clearTimeout(timer);
      outcomes.forEach((outcome, i) => {
        const registration = applicable[i];
        if (registration === undefined || outcome === 'done') return;
        const error =
          outcome === 'timeout'
            ? new HomeAgentError('HA_ERR_STAGE_TIMEOUT', `did not finish within ${timeoutMs} ms (core.agent.stage_timeout_ms)`)
            : outcome.error;
        this.#report(registration, context, error);
      });
    }
    return context.response !== undefined;
  }

  #report(registration: StageRegistration, context: StageContext, error: unknown): void {
    const { owner, stage } = registration;
    this.#log.error({ owner, stage, task_id: context.task_id, err: error }, `stage handler of ${owner} failed in ${stage}`);
    context.errors.push(`${stage} handler of ${owner} failed: ${describeError(error)}`);
  }
}

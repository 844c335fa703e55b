/**
 * Control methods for automations (`automations.list`, `.get`, `.run`, `.enable`, `.disable`,
 * `.runs`), used by `homeagentctl automations`. Running, enabling and disabling change the house
 * or how it behaves: each is audited with the caller as actor.
 */
import { Type } from '@sinclair/typebox';
import type { AuditRecord } from '../log/logger.js';
import type { ControlMethodRegistrar } from '../shared/control-method.js';
import type { AutomationDetail, AutomationEngine, AutomationSummary, RunNowResult } from './automation-engine.js';
import type { AutomationRunRecord } from './types.js';

export const DEFAULT_RUNS_LIMIT = 20;
export const MAX_RUNS_LIMIT = 1000;

/** The answers, for homeagentctl. */
export type AutomationsListResult = { automations: AutomationSummary[] };
export type AutomationsGetResult = AutomationDetail;
export type AutomationsRunResult = RunNowResult;
export type AutomationsEnableResult = AutomationSummary;
export type AutomationsRunsResult = { runs: AutomationRunRecord[] };

export interface AutomationMethodOptions {
  /** The LogManager: every change writes an audit record. */
  logs: { audit(record: AuditRecord): void };
}

const Id = Type.String({ pattern: '^[a-z0-9_]{1,64}$', description: 'Automation id.' });

/** The engine as the methods use it (AutomationEngine fits). */
export type AutomationControl = Pick<AutomationEngine, 'list' | 'get' | 'runNow' | 'setEnabled' | 'runs'>;

export function registerAutomationMethods(
  control: ControlMethodRegistrar,
  engine: AutomationControl,
  options: AutomationMethodOptions,
): void {
  control.register({
    name: 'automations.list',
    description:
      'The automations with their state: enabled, mode, triggers, runs going on, the last run, and problems (entity references that do not resolve now).',
    params: Type.Object({}),
    handler: (): AutomationsListResult => ({ automations: engine.list() }),
  });

  control.register({
    name: 'automations.get',
    description: 'One automation: its state as in automations.list and its rule as configured.',
    params: Type.Object({ id: Id }),
    handler: ({ id }): AutomationsGetResult => engine.get(id),
  });

  control.register({
    name: 'automations.run',
    description:
      "Run an automation's actions now without a trigger; its conditions are checked unless skip_conditions. Answers at once with the run id (see automations.runs for how it ended).",
    params: Type.Object({ id: Id, skip_conditions: Type.Optional(Type.Boolean()) }),
    handler: ({ id, skip_conditions }, caller): AutomationsRunResult => {
      const result = engine.runNow(id, { actor: caller.actor, ...(skip_conditions !== undefined && { skip_conditions }) });
      options.logs.audit({
        actor: caller.actor,
        action: 'automations.run',
        automation_id: id,
        skip_conditions: skip_conditions === true,
        outcome: result.outcome,
        run_id: result.run_id,
      });
      return result;
    },
  });

  for (const enabled of [true, false]) {
    const name = enabled ? 'automations.enable' : 'automations.disable';
    control.register({
      name,
      description: enabled
        ? 'Enable an automation (kept across restarts; overrides the enabled of its rule).'
        : 'Disable an automation: its triggers are ignored and its runs cancelled (kept across restarts; overrides the enabled of its rule).',
      params: Type.Object({ id: Id }),
      handler: ({ id }, caller): AutomationsEnableResult => {
        const result = engine.setEnabled(id, enabled, caller.actor);
        options.logs.audit({ actor: caller.actor, action: name, automation_id: id });
        return result;
      },
    });
  }

  control.register({
    name: 'automations.runs',
    description: `Finished runs, newest first, of one automation or all: trigger, status, error and each step; limit 1–${MAX_RUNS_LIMIT}, default ${DEFAULT_RUNS_LIMIT}.`,
    params: Type.Object({
      id: Type.Optional(Id),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_RUNS_LIMIT })),
    }),
    handler: ({ id, limit }): AutomationsRunsResult => ({
      runs: engine.runs({ ...(id !== undefined && { automation_id: id }), limit: limit ?? DEFAULT_RUNS_LIMIT }),
    }),
  });
}

/**
 * The actions of a run, in order: service calls, delays, notifications, agent inputs and tool sequences. The first
 * action starts synchronously from the trigger (no await, no database write before it), so a state
 * change reaches the service call in the same tick. A failing action fails the run and stops the
 * actions after it; an aborted run (restart mode, disable, reload, stop) ends its delay at once.
 *
 * Texts of notify and input actions are templates: `{{trigger.<field>}}` and `{{state(entity)}}`
 * (or `{{state('entity')}}`) are filled in; anything else in braces stays as written, so a typo
 * shows up in the message instead of vanishing.
 */
import type { AutomationAction } from '../config/schema.js';
import type { EntityInfo } from '../home/types.js';
import type { TimerClock } from '../shared/clock.js';
import { describeError, HomeAgentError } from '../shared/errors.js';
import type { AutomationEntities, AutomationIo, AutomationTools, RunStatus, RunStep, TriggerData } from './types.js';

export interface ActionContext {
  automation_id: string;
  run_id: string;
  trigger: TriggerData;
  entities: AutomationEntities;
  io: AutomationIo;
  /** What a `sequence` action runs seq_run with; absent: such an action fails with HA_ERR_UNAVAILABLE. */
  tools?: AutomationTools;
  clock: TimerClock;
  /** Aborted when the run is cancelled; the running delay ends at once. */
  signal: AbortSignal;
}

export interface ActionHooks {
  /** An action begins (the engine records it as aborted if the run is cancelled meanwhile). */
  started(index: number, type: AutomationAction['type'], detail: string): void;
  finished(step: RunStep): void;
}

/** Runs the actions in order; resolves with how the run ended (never rejects). */
export async function executeActions(
  actions: readonly AutomationAction[],
  context: ActionContext,
  hooks: ActionHooks,
): Promise<{ status: RunStatus; error: string | null }> {
  for (const [index, action] of actions.entries()) {
    if (context.signal.aborted) return { status: 'aborted', error: abortText(context.signal) };
    const detail = describeAction(action, context);
    hooks.started(index, action.type, detail.text);
    const started = context.clock.monotonic();
    try {
      await runAction(action, detail, context);
    } catch (error) {
      const ms = Math.round(context.clock.monotonic() - started);
      if (context.signal.aborted) {
        const text = abortText(context.signal);
        hooks.finished({ index, type: action.type, status: 'aborted', ms, detail: detail.text, error: text });
        return { status: 'aborted', error: text };
      }
      const text = describeError(error);
      hooks.finished({ index, type: action.type, status: 'failed', ms, detail: detail.text, error: text });
      return { status: 'failed', error: text };
    }
    hooks.finished({ index, type: action.type, status: 'done', ms: Math.round(context.clock.monotonic() - started), detail: detail.text });
  }
  return context.signal.aborted ? { status: 'aborted', error: abortText(context.signal) } : { status: 'done', error: null };
}

interface Described {
  /** For the run log. */
  text: string;
  /** notify/input: the filled-in text. */
  message?: string;
}

function describeAction(action: AutomationAction, context: ActionContext): Described {
  switch (action.type) {
    case 'service': {
      const refs = Array.isArray(action.entity_id) ? action.entity_id : [action.entity_id];
      return { text: `${action.service} ${refs.join(', ')}` };
    }
    case 'delay':
      return { text: `${action.seconds} s` };
    case 'notify':
    case 'input': {
      const message = fillTemplate(action.text, context.trigger, (ref) => context.entities.find(ref));
      return { text: `${action.channel ?? 'automation'}: ${message}`, message };
    }
    case 'sequence':
      return { text: `${action.name} ${JSON.stringify(action.args ?? {})}` };
  }
}

async function runAction(action: AutomationAction, detail: Described, context: ActionContext): Promise<void> {
  const meta = { automation_id: context.automation_id, run_id: context.run_id };
  switch (action.type) {
    case 'service': {
      const refs = Array.isArray(action.entity_id) ? action.entity_id : [action.entity_id];
      const callContext = { actor: `automation:${context.automation_id}`, run_id: context.run_id };
      for (const ref of refs) {
        if (context.signal.aborted) return;
        await context.entities.call(ref, action.service, action.data ?? {}, callContext);
      }
      return;
    }
    case 'delay':
      return delay(action.seconds * 1000, context.clock, context.signal);
    case 'notify':
      return context.io.notify(action.channel, detail.message ?? action.text, meta);
    case 'input':
      context.io.input(action.channel ?? 'automation', detail.message ?? action.text, (action.level ?? 0) as 0 | 1 | 2 | 3, meta);
      return;
    case 'sequence': {
      if (!context.tools)
        throw new HomeAgentError('HA_ERR_UNAVAILABLE', `sequence ${action.name}: this daemon runs no tools for automations`);
      await context.tools.run('seq_run', { name: action.name, args: action.args ?? {} }, { ...meta, signal: context.signal });
      return;
    }
  }
}

/** Waits on the TimerClock; rejects with HA_ERR_ABORTED as soon as the signal aborts. */
export function delay(ms: number, clock: TimerClock, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(abortError(signal));
      return;
    }
    const onAbort = () => {
      timer.cancel();
      reject(abortError(signal));
    };
    const timer = clock.setTimer(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function abortError(signal: AbortSignal): HomeAgentError {
  const reason: unknown = signal.reason;
  return reason instanceof HomeAgentError ? reason : new HomeAgentError('HA_ERR_ABORTED', String(reason ?? 'cancelled'));
}

/** The reason a run was cancelled, as its record says it. */
export function abortText(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  return reason instanceof HomeAgentError ? describeError(reason) : `HA_ERR_ABORTED: ${String(reason ?? 'cancelled')}`;
}

// `{{ ... }}` without braces inside; compiled once.
const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;
const STATE_CALL = /^state\(\s*(?:'([^']*)'|"([^"]*)"|([^'"()]*?))\s*\)$/;
const TRIGGER_FIELDS: ReadonlySet<string> = new Set([
  'type',
  'entity_id',
  'from_state',
  'to_state',
  'pin',
  'edge',
  'topic',
  'payload',
  'text',
  'channel',
  'schedule',
  'actor',
]);

/**
 * Fills `{{trigger.<field>}}` (empty when this trigger has no such field) and `{{state(entity)}}`
 * (`unknown` for a missing entity or an unknown state); other placeholders stay verbatim.
 */
export function fillTemplate(text: string, trigger: TriggerData, find: (reference: string) => EntityInfo | undefined): string {
  if (!text.includes('{{')) return text;
  return text.replace(PLACEHOLDER, (whole, inner: string) => {
    if (inner.startsWith('trigger.')) {
      const field = inner.slice('trigger.'.length);
      if (!TRIGGER_FIELDS.has(field)) return whole;
      const value = (trigger as unknown as Record<string, unknown>)[field];
      return value === undefined || value === null ? '' : String(value);
    }
    const call = STATE_CALL.exec(inner);
    if (!call) return whole;
    const ref = (call[1] ?? call[2] ?? call[3] ?? '').trim();
    if (ref === '') return whole;
    let entity: EntityInfo | undefined;
    try {
      entity = find(ref);
    } catch {
      entity = undefined;
    }
    return entity === undefined || entity.state === null ? 'unknown' : String(entity.state);
  });
}

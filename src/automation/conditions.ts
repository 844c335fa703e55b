/**
 * Conditions of a rule, checked when a trigger fires and before any action: all must hold. State
 * and numeric conditions read the entity's current state; an entity that cannot be found (not
 * registered yet, or a name matching several) makes its condition false rather than failing the
 * rule, so a rule written before its device appears simply does not run. Time windows use local
 * time and may wrap midnight (after 22:00 before 06:00).
 */
import type { AutomationCondition } from '../config/schema.js';
import type { EntityInfo } from '../home/types.js';
import { inRange, numeric, stateMatches } from './triggers.js';

type FlatCondition = Exclude<AutomationCondition, { type: 'and' | 'or' | 'not' }>;

/** What conditions read. */
export interface ConditionContext {
  find(reference: string): EntityInfo | undefined;
  /** Local time now. */
  now: Date;
}

const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;

export function conditionsHold(conditions: readonly AutomationCondition[], context: ConditionContext): boolean {
  return conditions.every((c) => conditionHolds(c, context));
}

export function conditionHolds(condition: AutomationCondition, context: ConditionContext): boolean {
  switch (condition.type) {
    case 'and':
      return condition.conditions.every((c) => flatHolds(c, context));
    case 'or':
      return condition.conditions.some((c) => flatHolds(c, context));
    case 'not':
      return !condition.conditions.some((c) => flatHolds(c, context));
    default:
      return flatHolds(condition, context);
  }
}

function flatHolds(condition: FlatCondition, context: ConditionContext): boolean {
  switch (condition.type) {
    case 'state': {
      const entity = findQuietly(context, condition.entity_id);
      return entity !== undefined && stateMatches(entity.state, condition.state);
    }
    case 'numeric': {
      const entity = findQuietly(context, condition.entity_id);
      const value = entity === undefined ? undefined : numeric(entity.state);
      return value !== undefined && inRange(value, condition.above, condition.below);
    }
    case 'time':
      return timeHolds(condition, context.now);
  }
}

function findQuietly(context: ConditionContext, reference: string): EntityInfo | undefined {
  try {
    return context.find(reference);
  } catch {
    // An ambiguous name is a problem `automations list` reports; here it only means "no".
    return undefined;
  }
}

/** Local time within [after, before) and on one of the weekdays; `after` > `before` wraps midnight. */
export function timeHolds(condition: { after?: string; before?: string; weekdays?: readonly string[] }, now: Date): boolean {
  if (condition.weekdays !== undefined && !condition.weekdays.includes(WEEKDAYS[now.getDay()] as string)) return false;
  const minute = now.getHours() * 60 + now.getMinutes();
  const after = condition.after === undefined ? undefined : minutesOf(condition.after);
  const before = condition.before === undefined ? undefined : minutesOf(condition.before);
  if (after !== undefined && before !== undefined && after > before) return minute >= after || minute < before;
  return (after === undefined || minute >= after) && (before === undefined || minute < before);
}

/** Minutes after midnight of `HH:MM` (checked by the schema). */
export function minutesOf(clock: string): number {
  const [h, m] = clock.split(':').map(Number);
  return (h ?? 0) * 60 + (m ?? 0);
}

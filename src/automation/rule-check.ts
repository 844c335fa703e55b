/**
 * Checks of automation rules that the config schema cannot express, and their compilation into
 * {@link CheckedRule}s (cron schedules, regular expressions and topic filters are built here once).
 * Every problem names the rule id and the field (`night_light: triggers[1].cron: ...`), and all
 * of them are reported together.
 *
 * An entity reference that does not resolve is NOT a problem here: the entity may appear later
 * (an MQTT device, a plugin that starts after the engine). Only references that cannot be right
 * are refused: an id-shaped reference (`sensor.x`, no spaces) with a malformed id or an unknown
 * domain, a service the domain does not offer, or data that service would refuse (a thermostat
 * target of 500): the registry would refuse the call at every run, long after the rule was saved.
 */
import type { AutomationAction, AutomationCondition, AutomationRule, AutomationTrigger } from '../config/schema.js';
import { validateServiceData } from '../home/entity-services.js';
import { DOMAIN_SERVICES, ENTITY_DOMAINS, type EntityDomain } from '../home/types.js';
import { describeError, HomeAgentError, isHomeAgentError } from '../shared/errors.js';
import { minutesOf } from './conditions.js';
import { dailyAt, parseCron } from './cron.js';
import { compileTopicFilter } from './triggers.js';
import type { AutomationMode, CheckedRule, CheckedTrigger } from './types.js';

/** One problem: the rule, the field path within it, and what is wrong. */
export interface RuleProblem {
  automation_id: string;
  field: string;
  problem: string;
}

const ENTITY_ID = /^([a-z_]{1,32})\.[a-z0-9_]{1,64}$/;
const PIN_ID = /^[a-z0-9_]{1,64}$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * The settings check of core.automations.rules (run at load and on every `config set`): undefined
 * when the rules compile, else one line, because each problem already names its rule and field.
 */
export function describeRuleProblems(rules: unknown): string | undefined {
  try {
    checkRules(rules as AutomationRule[]);
    return undefined;
  } catch (error) {
    const problems = isHomeAgentError(error, 'HA_ERR_AUTOMATION_CONFIG')
      ? (error.details?.problems as RuleProblem[] | undefined)
      : undefined;
    return problems?.length ? problems.map((p) => `${p.automation_id}: ${p.field}: ${p.problem}`).join('; ') : describeError(error);
  }
}

/** Checks and compiles rules; throws HA_ERR_AUTOMATION_CONFIG listing every problem (details.problems). */
export function checkRules(rules: readonly AutomationRule[]): CheckedRule[] {
  const problems: RuleProblem[] = [];
  const seen = new Set<string>();
  const checked: CheckedRule[] = [];
  rules.forEach((rule, position) => {
    const report = (field: string, problem: string) => problems.push({ automation_id: rule.id, field, problem });
    if (seen.has(rule.id)) report('id', `the id is used by another rule too (rule ${position + 1} of ${rules.length})`);
    seen.add(rule.id);
    const result = checkRule(rule, report);
    if (result) checked.push(result);
  });
  if (problems.length > 0) {
    const lines = problems.map((p) => `${p.automation_id}: ${p.field}: ${p.problem}`);
    throw new HomeAgentError(
      'HA_ERR_AUTOMATION_CONFIG',
      `invalid automation rule${problems.length === 1 ? '' : 's'} (core.automations.rules):\n${lines.join('\n')}`,
      { details: { problems } },
    );
  }
  return checked;
}

type Report = (field: string, problem: string) => void;

function checkRule(rule: AutomationRule, report: Report): CheckedRule | undefined {
  const triggers: CheckedTrigger[] = [];
  rule.triggers.forEach((trigger, index) => {
    const t = checkTrigger(trigger, index, (field, problem) => report(`triggers[${index}].${field}`, problem));
    if (t) triggers.push(t);
  });
  // Defaults are filled here too: a rule set at run time may not have passed through the loader.
  const conditions: AutomationCondition[] = rule.conditions ?? [];
  conditions.forEach((condition, index) => {
    checkCondition(condition, (field, problem) => report(`conditions[${index}].${field}`, problem));
  });
  const actions = rule.actions.map((action, index) =>
    checkAction(action, (field, problem) => report(`actions[${index}].${field}`, problem)),
  );
  if (triggers.length !== rule.triggers.length) return undefined;
  return {
    id: rule.id,
    name: rule.name ?? '',
    enabled: rule.enabled ?? true,
    mode: (rule.mode ?? 'restart') as AutomationMode,
    triggers,
    conditions,
    actions,
    fingerprint: JSON.stringify(rule),
  };
}

/**
 * The entity references of a rule that do not resolve now, with what that means for the rule
 * (`automations list`). `resolve` throws the registry's error for a missing or ambiguous name.
 */
export function referenceProblems(rule: CheckedRule, resolve: (reference: string) => unknown): string[] {
  const problems: string[] = [];
  const check = (field: string, ref: string, effect: string) => {
    try {
      resolve(ref);
    } catch (error) {
      problems.push(`${field} ${JSON.stringify(ref)}: ${describeError(error)} (${effect})`);
    }
  };
  for (const t of rule.triggers) {
    if (t.type === 'state' || t.type === 'numeric')
      check(`triggers[${t.index}].entity_id`, t.entity_ref, 'the trigger is inactive until it appears');
  }
  const conditions = (list: readonly AutomationCondition[], path: string) => {
    list.forEach((c, i) => {
      if ('conditions' in c) conditions(c.conditions, `${path}[${i}].conditions`);
      else if (c.type !== 'time') check(`${path}[${i}].entity_id`, c.entity_id, 'the condition is false until it appears');
    });
  };
  conditions(rule.conditions, 'conditions');
  rule.actions.forEach((a, i) => {
    if (a.type !== 'service') return;
    const refs = Array.isArray(a.entity_id) ? a.entity_id : [a.entity_id];
    refs.forEach((ref, k) => {
      check(
        Array.isArray(a.entity_id) ? `actions[${i}].entity_id[${k}]` : `actions[${i}].entity_id`,
        ref,
        'the action fails until it appears',
      );
    });
  });
  return problems;
}

function checkTrigger(trigger: AutomationTrigger, index: number, report: Report): CheckedTrigger | undefined {
  switch (trigger.type) {
    case 'state':
      if (!entityRefOk(trigger.entity_id, report)) return undefined;
      return {
        type: 'state',
        index,
        entity_ref: trigger.entity_id,
        ...(trigger.from !== undefined && { from: trigger.from }),
        ...(trigger.to !== undefined && { to: trigger.to }),
        for_ms: (trigger.for_s ?? 0) * 1000,
      };
    case 'numeric': {
      const refOk = entityRefOk(trigger.entity_id, report);
      if (!rangeOk(trigger, report) || !refOk) return undefined;
      return {
        type: 'numeric',
        index,
        entity_ref: trigger.entity_id,
        ...(trigger.above !== undefined && { above: trigger.above }),
        ...(trigger.below !== undefined && { below: trigger.below }),
        hysteresis: trigger.hysteresis ?? 0,
      };
    }
    case 'edge':
      if (!PIN_ID.test(trigger.pin) && !ENTITY_ID.test(trigger.pin)) {
        report('pin', `${JSON.stringify(trigger.pin)} is neither a pin id (lowercase letters, digits, _) nor an entity id`);
        return undefined;
      }
      return { type: 'edge', index, pin: trigger.pin, edge: trigger.edge ?? 'rising' };
    case 'time': {
      if ((trigger.at === undefined) === (trigger.cron === undefined)) {
        report(trigger.at === undefined ? 'at' : 'cron', 'a time trigger needs exactly one of at (HH:MM) and cron');
        return undefined;
      }
      try {
        const schedule = trigger.at !== undefined ? dailyAt(trigger.at) : parseCron(trigger.cron as string);
        return { type: 'time', index, schedule, label: schedule.expression };
      } catch (error) {
        report(trigger.at !== undefined ? 'at' : 'cron', error instanceof HomeAgentError ? error.message : describeError(error));
        return undefined;
      }
    }
    case 'mqtt': {
      const filter = compileTopicFilter(trigger.topic);
      if (!filter) {
        report('topic', `${JSON.stringify(trigger.topic)}: # may only be a whole last level and + only a whole level`);
        return undefined;
      }
      return { type: 'mqtt', index, topic: trigger.topic, filter, ...(trigger.payload !== undefined && { payload: trigger.payload }) };
    }
    case 'input': {
      let pattern: RegExp;
      try {
        // The whole text must match; case-insensitive, Unicode-aware (Chinese input).
        pattern = new RegExp(`^(?:${trigger.match})$`, 'iu');
      } catch (error) {
        report('match', `${JSON.stringify(trigger.match)} is not a valid regular expression: ${(error as Error).message}`);
        return undefined;
      }
      return {
        type: 'input',
        index,
        pattern,
        match: trigger.match,
        ...(trigger.channel !== undefined && { channel: trigger.channel }),
        ...(trigger.reply !== undefined && { reply: trigger.reply }),
      };
    }
  }
}

function checkCondition(condition: AutomationCondition, report: Report): void {
  switch (condition.type) {
    case 'and':
    case 'or':
    case 'not':
      condition.conditions.forEach((c, i) => {
        checkCondition(c, (field, problem) => report(`conditions[${i}].${field}`, problem));
      });
      return;
    case 'state':
      entityRefOk(condition.entity_id, report);
      return;
    case 'numeric':
      entityRefOk(condition.entity_id, report);
      rangeOk(condition, report);
      return;
    case 'time':
      if (condition.after === undefined && condition.before === undefined && condition.weekdays === undefined) {
        report('type', 'a time condition needs after, before or weekdays');
      } else if (
        condition.after !== undefined &&
        condition.before !== undefined &&
        minutesOf(condition.after) === minutesOf(condition.before)
      ) {
        report('before', `after and before are both ${condition.after}: the window would be empty (or the whole day; leave both out)`);
      }
      return;
  }
}

function checkAction(action: AutomationAction, report: Report): AutomationAction {
  switch (action.type) {
    case 'service': {
      const refs = Array.isArray(action.entity_id) ? action.entity_id : [action.entity_id];
      refs.forEach((ref, i) => {
        const field = Array.isArray(action.entity_id) ? `entity_id[${i}]` : 'entity_id';
        if (!entityRefOk(ref, (_f, problem) => report(field, problem))) return;
        const domain = ENTITY_ID.exec(ref)?.[1] as EntityDomain | undefined;
        if (domain !== undefined && !DOMAIN_SERVICES[domain].includes(action.service)) {
          const offered = DOMAIN_SERVICES[domain];
          report(
            'service',
            `${domain} entities have no service ${action.service} (${offered.length === 0 ? 'they only report' : `they offer ${offered.join(', ')}`})`,
          );
        } else if (domain !== undefined) {
          dataProblem(ref, domain, action, report);
        }
      });
      return { ...action, data: action.data ?? {} };
    }
    case 'input':
      return { ...action, channel: action.channel ?? 'automation', level: action.level ?? 0 };
    default:
      return action;
  }
}

/** The data a service action passes, checked as the registry will check it at every run. */
function dataProblem(ref: string, domain: EntityDomain, action: { service: string; data?: Record<string, unknown> }, report: Report): void {
  try {
    validateServiceData(ref, domain, action.service, action.data ?? {});
  } catch (error) {
    if (!(error instanceof HomeAgentError)) throw error;
    const field = typeof error.details?.field === 'string' ? error.details.field : 'data';
    report(field, error.message);
  }
}

/** A reference that could name an entity: an entity id, or a name/alias the registry may know later. */
function entityRefOk(ref: string, report: Report): boolean {
  if (ref.trim() === '' || CONTROL.test(ref)) {
    report('entity_id', `${JSON.stringify(ref)} is empty or contains control characters`);
    return false;
  }
  if (/\s/.test(ref) || !ref.includes('.')) return true;
  const match = ENTITY_ID.exec(ref);
  if (!match) {
    report('entity_id', `${JSON.stringify(ref)} is not a valid entity id (<domain>.<object_id>: lowercase letters, digits and _)`);
    return false;
  }
  if (!(ENTITY_DOMAINS as readonly string[]).includes(match[1] as string)) {
    report('entity_id', `${JSON.stringify(ref)}: unknown domain ${match[1]} (one of ${ENTITY_DOMAINS.join(', ')})`);
    return false;
  }
  return true;
}

function rangeOk(range: { above?: number; below?: number }, report: Report): boolean {
  if (range.above === undefined && range.below === undefined) {
    report('above', 'needs above, below or both');
    return false;
  }
  if (range.above !== undefined && range.below !== undefined && range.above >= range.below) {
    report('below', `below (${range.below}) must be greater than above (${range.above})`);
    return false;
  }
  return true;
}

/**
 * The data each service takes (the contract documented at DOMAIN_SERVICES in types.ts), checked
 * before a call reaches a driver: a driver may trust `brightness` to be an integer 0-255. Fields a
 * service does not take are refused too, so a caller learns that "color" does nothing instead of
 * believing it worked.
 */
import { HomeAgentError } from '../shared/errors.js';
import type { EntityDomain } from './types.js';

interface FieldRule {
  required: boolean;
  min?: number;
  max?: number;
  integer?: boolean;
}

/** Keyed `<domain>.<service>`; a service not listed takes no data. */
export const SERVICE_FIELDS: Readonly<Record<string, Readonly<Record<string, FieldRule>>>> = {
  'light.turn_on': { brightness: { required: false, min: 0, max: 255, integer: true } },
  'fan.turn_on': { percentage: { required: false, min: 0, max: 100 } },
  'fan.set_percentage': { percentage: { required: true, min: 0, max: 100 } },
  'cover.set_position': { position: { required: true, min: 0, max: 100 } },
  'number.set_value': { value: { required: true } },
};

/** The fields a service takes, for error messages and tool descriptions. */
export function serviceFields(domain: EntityDomain, service: string): string[] {
  return Object.keys(SERVICE_FIELDS[`${domain}.${service}`] ?? {});
}

/** A checked copy of the call's data; HA_ERR_ENTITY_SERVICE naming the field otherwise. */
export function validateServiceData(entityId: string, domain: EntityDomain, service: string, data: unknown): Record<string, unknown> {
  const where = `${entityId} ${service}`;
  if (data === undefined || data === null) data = {};
  if (typeof data !== 'object' || Array.isArray(data)) throw invalid(`${where}: data must be an object`);
  const rules = SERVICE_FIELDS[`${domain}.${service}`] ?? {};
  const given = data as Record<string, unknown>;
  for (const field of Object.keys(given)) {
    if (rules[field] === undefined) {
      const takes = Object.keys(rules);
      throw invalid(
        `${where}: unknown field ${JSON.stringify(field)}; ${takes.length === 0 ? 'it takes no data' : `it takes ${takes.join(', ')}`}`,
        `data.${field}`,
      );
    }
  }
  const out: Record<string, unknown> = {};
  for (const [field, rule] of Object.entries(rules)) {
    const value = given[field];
    if (value === undefined) {
      if (rule.required) throw invalid(`${where}: ${field} is required`, `data.${field}`);
      continue;
    }
    if (typeof value !== 'number' || !Number.isFinite(value))
      throw invalid(`${where}: ${field} must be a number, not ${JSON.stringify(value)}`, `data.${field}`);
    if (rule.integer === true && !Number.isInteger(value))
      throw invalid(`${where}: ${field} must be a whole number, not ${value}`, `data.${field}`);
    if ((rule.min !== undefined && value < rule.min) || (rule.max !== undefined && value > rule.max)) {
      throw invalid(`${where}: ${field} must be between ${rule.min} and ${rule.max}, not ${value}`, `data.${field}`);
    }
    out[field] = value;
  }
  return out;
}

/** `details.field` names the offending data field (`data` for the whole object), for tools to point at it. */
function invalid(message: string, field = 'data'): HomeAgentError {
  return new HomeAgentError('HA_ERR_ENTITY_SERVICE', message, { details: { field } });
}

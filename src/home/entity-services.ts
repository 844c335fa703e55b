/**
 * The data each service takes (the contract documented at DOMAIN_SERVICES in types.ts), checked
 * before a call reaches a driver: a driver may trust `brightness` to be an integer 0-255. Fields a
 * service does not take are refused too, so a caller learns that "color" does nothing instead of
 * believing it worked.
 */
import { HomeAgentError } from '../shared/errors.js';
import type { EntityDomain } from './types.js';

/**
 * One data field: a number (the default) within min/max, or a string whose length (surrounding
 * spaces dropped) is within minLength/maxLength.
 */
interface FieldRule {
  required: boolean;
  type?: 'number' | 'string';
  min?: number;
  max?: number;
  integer?: boolean;
  minLength?: number;
  maxLength?: number;
  /** Strings: passed on lowercased, so a driver compares names without caring how the caller wrote them. */
  lowercase?: boolean;
}

/** Keyed `<domain>.<service>`; a service not listed takes no data. */
export const SERVICE_FIELDS: Readonly<Record<string, Readonly<Record<string, FieldRule>>>> = {
  'light.turn_on': {
    brightness: { required: false, min: 0, max: 255, integer: true },
    // A lowercase English colour name ("red", "warm white"); the driver maps it to what its light can show.
    color_name: { required: false, type: 'string', minLength: 1, maxLength: 32, lowercase: true },
  },
  'fan.turn_on': { percentage: { required: false, min: 0, max: 100 } },
  'fan.set_percentage': { percentage: { required: true, min: 0, max: 100 } },
  'cover.set_position': { position: { required: true, min: 0, max: 100 } },
  'number.set_value': { value: { required: true } },
  // Wide enough for °C and °F targets alike; a driver narrows it to what its device takes.
  'climate.set_temperature': { temperature: { required: true, min: -50, max: 100 } },
  'media_player.volume_set': { volume_level: { required: true, min: 0, max: 1 } },
  'media_player.play_media': {
    media_content_id: { required: true, type: 'string', minLength: 1, maxLength: 500 },
    media_content_type: { required: false, type: 'string', minLength: 1, maxLength: 64 },
  },
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
    out[field] = rule.type === 'string' ? checkText(where, field, rule, value) : checkNumber(where, field, rule, value);
  }
  return out;
}

function checkNumber(where: string, field: string, rule: FieldRule, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw invalid(`${where}: ${field} must be a number, not ${JSON.stringify(value)}`, `data.${field}`);
  if (rule.integer === true && !Number.isInteger(value))
    throw invalid(`${where}: ${field} must be a whole number, not ${value}`, `data.${field}`);
  if ((rule.min !== undefined && value < rule.min) || (rule.max !== undefined && value > rule.max)) {
    throw invalid(`${where}: ${field} must be between ${rule.min} and ${rule.max}, not ${value}`, `data.${field}`);
  }
  return value;
}

function checkText(where: string, field: string, rule: FieldRule, value: unknown): string {
  if (typeof value !== 'string') throw invalid(`${where}: ${field} must be text, not ${JSON.stringify(value)}`, `data.${field}`);
  const text = rule.lowercase === true ? value.trim().toLowerCase() : value.trim();
  const min = rule.minLength ?? 0;
  const max = rule.maxLength ?? Number.POSITIVE_INFINITY;
  // Length in characters as a person counts them, not UTF-16 units.
  const length = [...text].length;
  if (length < min || length > max) {
    throw invalid(`${where}: ${field} must be ${min}-${max} characters, not ${length}`, `data.${field}`);
  }
  return text;
}

/** `details.field` names the offending data field (`data` for the whole object), for tools to point at it. */
function invalid(message: string, field = 'data'): HomeAgentError {
  return new HomeAgentError('HA_ERR_ENTITY_SERVICE', message, { details: { field } });
}

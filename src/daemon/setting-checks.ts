/**
 * Checks the config schema cannot express, per key, run at load and on every `config set`. Each
 * check lives with the area that owns the setting; this table only names them.
 */
import { describeRuleProblems } from '../automation/rule-check.js';
import type { SettingChecks } from '../config/definitions.js';

export const SETTING_CHECKS: SettingChecks = {
  'core.automations.rules': describeRuleProblems,
};

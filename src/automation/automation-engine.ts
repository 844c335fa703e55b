/**
 * The automation engine: runs the rules of core.automations.rules on the device, without the LLM.
 * Triggers come from the event bus (entity state changes, GPIO edges, MQTT messages), from timers
 * (time of day, cron, a state that must hold for_s) and from text inputs (handleInput, called by
 * the agent's on_input stage). A fired trigger whose conditions hold starts a run of the rule's
 * actions according to its mode; every run ends in the run log and an `automation.run` event.
 *
 * Limits: an automation starts at most core.automations.max_runs_per_minute runs in a sliding
 * minute, and at most self_trigger_per_minute of them may be caused by its own actions (a state
 * change whose context actor is `automation:<id>`): beyond that the loop is stopped and logged.
 * Skipped triggers are logged (warnings at most once a minute per automation and reason) and
 * emitted as `automation.run` with status skipped, but not stored.
 *
 * Time triggers wake at least once a minute and compare with the wall clock, so a clock set late
 * (NTP after boot on a Pi without a real-time clock) is followed; a time more than five minutes in
 * the past when noticed (the clock jumped forward) is skipped and logged instead of fired late.
 *
 * An entity reference that does not resolve leaves its trigger inactive (and its condition false)
 * until the entity registers; `automations list` shows it as a problem. A removed entity's
 * triggers go inactive the same way until a reference resolves again.
 */
import { randomUUID } from 'node:crypto';
import type { AutomationCondition, AutomationRule } from '../config/schema.js';
import type { EventBus, EventMap } from '../events/event-bus.js';
import type { Logger } from '../log/logger.js';
import type { TimerClock, TimerHandle } from '../shared/clock.js';
import { describeError, HomeAgentError } from '../shared/errors.js';
import type { Service } from '../shared/service.js';
import type { ManagedDatabase } from '../store/database.js';
import { executeActions, fillTemplate } from './actions.js';
import { type AutomationFlag, AutomationStore, lastRunOf, summarizeTrigger } from './automation-store.js';
import { conditionsHold } from './conditions.js';
import { checkRules, referenceProblems } from './rule-check.js';
import { describeTrigger, numericStep, stateMatches, TriggerIndex } from './triggers.js';
import type {
  AutomationEntities,
  AutomationIo,
  AutomationMode,
  AutomationRunRecord,
  AutomationsSettings,
  AutomationTools,
  CheckedRule,
  CheckedTrigger,
  LastRun,
  RunStatus,
  RunStep,
  TriggerData,
} from './types.js';

export interface AutomationEngineOptions {
  entities: AutomationEntities;
  events: EventBus;
  io: AutomationIo;
  /** What `sequence` actions run seq_run with; absent: they fail with HA_ERR_UNAVAILABLE. */
  tools?: AutomationTools;
  /** The home database (component `automations`); opened by the Store before start. */
  database: () => ManagedDatabase;
  log: Logger;
  clock: TimerClock;
  /** core.automations, read live (rules only on start and reload). */
  settings: () => AutomationsSettings;
  /** Run ids; random UUIDs by default. */
  newId?: () => string;
}

/** One automation as `automations list` shows it. */
export interface AutomationSummary {
  id: string;
  name: string;
  enabled: boolean;
  /** `config` (the rule's own `enabled`) or who enabled/disabled it at run time. */
  enabled_by: string;
  mode: AutomationMode;
  triggers: string[];
  running: number;
  queued: number;
  last_run: LastRun | null;
  /** Entity references that do not resolve now, and what that means. */
  problems: string[];
}

/** `automations get`: the summary and the rule as configured. */
export interface AutomationDetail extends AutomationSummary {
  rule: AutomationRule;
}

/** What a manual run did. */
export interface RunNowResult {
  automation_id: string;
  /** started: run_id runs now; queued: it runs after the current one; skipped / conditions_failed: nothing runs. */
  outcome: 'started' | 'queued' | 'skipped' | 'conditions_failed';
  run_id: string | null;
  /** Why it did not start. */
  reason: string | null;
}

const OWNER = 'automation';
const MINUTE_MS = 60_000;
/** Longest sleep of a time trigger: it re-reads the wall clock at least this often. */
const TIME_WAKE_MS = 60_000;
/** A time trigger noticed later than this after its time is skipped (the clock jumped). */
const TIME_LATE_LIMIT_MS = 5 * 60_000;

interface ActiveRun {
  id: string;
  trigger: TriggerData;
  started_at: number;
  started_mono: number;
  controller: AbortController;
  steps: RunStep[];
  current: { index: number; type: RunStep['type']; started: number; detail: string } | undefined;
  finished: boolean;
}

interface TriggerRuntime {
  trigger: CheckedTrigger;
  /** State and numeric triggers: the entity id the reference resolved to. */
  entity_id?: string;
  /** Numeric triggers: see numericStep. */
  armed?: boolean;
  /** State triggers with for_s: the wait in progress. */
  pending?: TimerHandle;
  /** Time triggers. */
  timer?: TimerHandle;
  due?: number;
}

interface Waiting {
  data: TriggerData;
}

interface RuleRuntime {
  rule: CheckedRule;
  source: AutomationRule;
  triggers: TriggerRuntime[];
  running: ActiveRun[];
  queue: Waiting[];
  /** Monotonic ms of the starts in the last minute, all and self-caused. */
  starts: number[];
  self_starts: number[];
  last_run: LastRun | null;
  warned: Map<string, { at: number; suppressed: number }>;
  retired: boolean;
}

type SkipReason = 'single' | 'queue_full' | 'parallel_full' | 'rate' | 'loop';

type FireOutcome =
  | { outcome: 'started'; run_id: string }
  | { outcome: 'queued' | 'disabled' | 'conditions_failed' }
  | { outcome: 'skipped'; reason: string };

export class AutomationEngine implements Service {
  readonly name = 'automation';
  readonly #o: AutomationEngineOptions;
  readonly #newId: () => string;
  #store: AutomationStore | undefined;
  #flags = new Map<string, AutomationFlag>();
  #rules = new Map<string, RuleRuntime>();
  #index = new TriggerIndex<RuleRuntime>();
  #unresolved = 0;
  #unsubscribe: Array<() => void> = [];
  #running = false;

  constructor(options: AutomationEngineOptions) {
    this.#o = options;
    this.#newId = options.newId ?? randomUUID;
  }

  async start(_signal?: AbortSignal): Promise<void> {
    const store = new AutomationStore(this.#o.database(), {
      log: this.#o.log,
      history: () => this.#o.settings().run_history,
    });
    const sources = this.#o.settings().rules;
    const checked = checkRules(sources);
    this.#store = store;
    this.#flags = store.flags();
    const lastRuns = store.lastRuns();
    this.#running = true;
    for (const [i, rule] of checked.entries()) {
      const rt = this.#runtime(rule, sources[i] as AutomationRule);
      rt.last_run = lastRuns.get(rule.id) ?? null;
      this.#rules.set(rule.id, rt);
    }
    this.#resolveReferences(true);
    for (const rt of this.#rules.values()) this.#armTimeTriggers(rt);
    const { events } = this.#o;
    this.#unsubscribe = [
      events.on(OWNER, 'entity.state_changed', (e) => this.#onStateChanged(e)),
      events.on(OWNER, 'gpio.edge', (e) => this.#onEdge(e)),
      events.on(OWNER, 'mqtt.message', (e) => this.#onMqtt(e)),
      events.on(OWNER, 'entity.registered', () => {
        if (this.#unresolved > 0) this.#resolveReferences(false);
      }),
      events.on(OWNER, 'entity.removed', (e) => this.#forget(e.entity_id)),
    ];
    this.#o.log.info({ rules: this.#rules.size }, 'automations started');
  }

  async stop(): Promise<void> {
    for (const off of this.#unsubscribe) off();
    this.#unsubscribe = [];
    for (const rt of this.#rules.values()) this.#retire(rt, new HomeAgentError('HA_ERR_ABORTED'));
    this.#rules.clear();
    this.#index = new TriggerIndex();
    this.#running = false;
    this.#store?.flush();
    this.#store = undefined;
  }

  /**
   * Re-reads core.automations.rules (on settings.changed). Rules whose text did not change keep
   * their runs and trigger state; runs of changed and removed rules are cancelled. Invalid rules
   * throw HA_ERR_AUTOMATION_CONFIG and the rules running now stay as they are.
   */
  reload(): void {
    if (!this.#running) return;
    const sources = this.#o.settings().rules;
    const checked = checkRules(sources);
    const next = new Map<string, RuleRuntime>();
    let changed = 0;
    for (const [i, rule] of checked.entries()) {
      const old = this.#rules.get(rule.id);
      if (old && old.rule.fingerprint === rule.fingerprint) {
        next.set(rule.id, old);
        continue;
      }
      changed++;
      const rt = this.#runtime(rule, sources[i] as AutomationRule);
      if (old) {
        this.#retire(old, new HomeAgentError('HA_ERR_ABORTED', 'the automation rule changed'));
        rt.last_run = old.last_run;
      }
      next.set(rule.id, rt);
    }
    let removed = 0;
    for (const [id, old] of this.#rules) {
      if (next.has(id)) continue;
      removed++;
      this.#retire(old, new HomeAgentError('HA_ERR_ABORTED', 'the automation rule was removed'));
    }
    this.#rules = next;
    this.#resolveReferences(true);
    for (const rt of next.values())
      if (rt.triggers.some((t) => t.trigger.type === 'time' && t.timer === undefined)) this.#armTimeTriggers(rt);
    this.#o.log.info({ rules: next.size, changed, removed }, 'automations reloaded');
  }

  /**
   * A text input, before the agent sees it. Input triggers whose pattern matches the whole text
   * (and whose rule is enabled with its conditions holding) fire; `reply` is the first matching
   * rule's reply, given instead of asking the agent.
   */
  handleInput(input: { text: string; channel: string; source: string }): { matched: boolean; reply?: string } {
    if (!this.#running) return { matched: false };
    const text = input.text.trim();
    let matched = false;
    let reply: string | undefined;
    for (const { owner: rt, trigger } of this.#index.inputs()) {
      if (trigger.channel !== undefined && trigger.channel !== input.channel) continue;
      if (!trigger.pattern.test(text)) continue;
      const data: TriggerData = { type: 'input', index: trigger.index, at: this.#o.clock.now(), text, channel: input.channel };
      const fired = this.#fire(rt, data, false);
      if (fired.outcome === 'disabled' || fired.outcome === 'conditions_failed') continue;
      matched = true;
      if (reply === undefined && trigger.reply !== undefined)
        reply = fillTemplate(trigger.reply, data, (ref) => this.#o.entities.find(ref));
    }
    return reply === undefined ? { matched } : { matched, reply };
  }

  list(): AutomationSummary[] {
    return [...this.#rules.values()].map((rt) => this.#summary(rt));
  }

  /** Throws HA_ERR_AUTOMATION_NOT_FOUND. */
  get(id: string): AutomationDetail {
    const rt = this.#require(id);
    return { ...this.#summary(rt), rule: rt.source };
  }

  /** Runs the actions now, skipping triggers; conditions are checked unless skip_conditions. Works on disabled rules too. */
  runNow(id: string, options: { actor: string; skip_conditions?: boolean }): RunNowResult {
    const rt = this.#require(id);
    const data: TriggerData = { type: 'manual', index: null, at: this.#o.clock.now(), actor: options.actor };
    const fired = this.#fire(rt, data, false, { manual: true, skipConditions: options.skip_conditions === true });
    const base = { automation_id: id, run_id: null, reason: null };
    switch (fired.outcome) {
      case 'started':
        return { ...base, outcome: 'started', run_id: fired.run_id };
      case 'queued':
        return { ...base, outcome: 'queued', reason: 'a run is going on (mode queued): it runs after it' };
      case 'skipped':
        return { ...base, outcome: 'skipped', reason: fired.reason };
      default:
        return { ...base, outcome: 'conditions_failed', reason: 'its conditions do not hold now (skip_conditions runs it anyway)' };
    }
  }

  /** Enables or disables an automation; kept across restarts. Disabling cancels its runs. */
  setEnabled(id: string, enabled: boolean, actor: string): AutomationSummary {
    const rt = this.#require(id);
    const flag: AutomationFlag = { enabled, changed_at: this.#o.clock.now(), actor };
    this.#requireStore().setFlag(id, flag);
    this.#flags.set(id, flag);
    if (!enabled) {
      rt.queue = [];
      for (const t of rt.triggers) cancelPending(t);
      for (const run of [...rt.running])
        this.#abort(rt, run, new HomeAgentError('HA_ERR_ABORTED', `the automation was disabled by ${actor}`));
    }
    this.#o.log.info({ automation_id: id, enabled, actor }, `automation ${enabled ? 'enabled' : 'disabled'}`);
    return this.#summary(rt);
  }

  /** Finished runs, newest first. An id must be a current rule or have stored runs (HA_ERR_AUTOMATION_NOT_FOUND). */
  runs(options: { automation_id?: string; limit: number }): AutomationRunRecord[] {
    const store = this.#requireStore();
    const id = options.automation_id;
    if (id !== undefined && !this.#rules.has(id) && !store.hasRuns(id)) throw notFound(id);
    return store.runs(options);
  }

  // ---- triggers ----

  #onStateChanged(e: EventMap['entity.state_changed']): void {
    if (!e.state_changed) return;
    const list = this.#index.forEntity(e.entity_id);
    if (list.length === 0) return;
    for (const { owner: rt, trigger } of list) {
      const tr = rt.triggers[trigger.index] as TriggerRuntime;
      const self = e.context !== null && e.context.actor === `automation:${rt.rule.id}`;
      const data: TriggerData = {
        type: trigger.type,
        index: trigger.index,
        at: e.at,
        entity_id: e.entity_id,
        from_state: e.old_state,
        to_state: e.new_state,
      };
      if (trigger.type === 'numeric') {
        const step = numericStep(trigger, tr.armed, e.new_state);
        if (step.armed === undefined) delete tr.armed;
        else tr.armed = step.armed;
        if (step.fire) this.#fire(rt, data, self);
        continue;
      }
      // Any change ends a for_s wait; the change itself may start a new one.
      cancelPending(tr);
      if (trigger.from !== undefined && !stateMatches(e.old_state, trigger.from)) continue;
      if (trigger.to !== undefined && !stateMatches(e.new_state, trigger.to)) continue;
      if (trigger.for_ms > 0) {
        tr.pending = this.#o.clock.setTimer(() => {
          delete tr.pending;
          if (!rt.retired) this.#fire(rt, data, self);
        }, trigger.for_ms);
        continue;
      }
      this.#fire(rt, data, self);
    }
  }

  #onEdge(e: EventMap['gpio.edge']): void {
    for (const { owner: rt, trigger } of this.#index.forEdge(e.pin, e.entity_id)) {
      if (trigger.edge !== 'both' && trigger.edge !== e.edge) continue;
      this.#fire(rt, { type: 'edge', index: trigger.index, at: e.at, pin: e.pin, edge: e.edge, entity_id: e.entity_id }, false);
    }
  }

  #onMqtt(e: EventMap['mqtt.message']): void {
    for (const { owner: rt, trigger } of this.#index.forTopic(e.topic)) {
      if (trigger.payload !== undefined && trigger.payload !== e.payload) continue;
      this.#fire(rt, { type: 'mqtt', index: trigger.index, at: e.at, topic: e.topic, payload: e.payload }, false);
    }
  }

  #armTimeTriggers(rt: RuleRuntime): void {
    for (const tr of rt.triggers) {
      if (tr.trigger.type !== 'time') continue;
      tr.due = tr.trigger.schedule.next(new Date(this.#o.clock.now())).getTime();
      this.#sleepUntilDue(rt, tr);
    }
  }

  #sleepUntilDue(rt: RuleRuntime, tr: TriggerRuntime): void {
    const wait = Math.min((tr.due ?? 0) - this.#o.clock.now(), TIME_WAKE_MS);
    tr.timer = this.#o.clock.setTimer(() => this.#timeWake(rt, tr), wait);
  }

  #timeWake(rt: RuleRuntime, tr: TriggerRuntime): void {
    if (rt.retired || tr.trigger.type !== 'time' || tr.due === undefined) return;
    const now = this.#o.clock.now();
    const due = tr.due;
    if (now < due) {
      this.#sleepUntilDue(rt, tr);
      return;
    }
    const schedule = tr.trigger.schedule;
    tr.due = schedule.next(new Date(Math.max(now, due))).getTime();
    this.#sleepUntilDue(rt, tr);
    if (now - due > TIME_LATE_LIMIT_MS) {
      this.#o.log.warn(
        { automation_id: rt.rule.id, schedule: schedule.expression, due: new Date(due).toISOString(), late_ms: now - due },
        'time trigger skipped: noticed too late (the clock jumped forward)',
      );
      return;
    }
    this.#fire(rt, { type: 'time', index: tr.trigger.index, at: due, schedule: schedule.expression }, false);
  }

  // ---- runs ----

  #fire(rt: RuleRuntime, data: TriggerData, self: boolean, options: { manual?: boolean; skipConditions?: boolean } = {}): FireOutcome {
    if (rt.retired) return { outcome: 'disabled' };
    if (options.manual !== true && !this.#enabled(rt)) return { outcome: 'disabled' };
    if (options.skipConditions !== true && rt.rule.conditions.length > 0 && !this.#conditionsHold(rt.rule.conditions)) {
      this.#o.log.debug({ automation_id: rt.rule.id, trigger: summarizeTrigger(data) }, 'automation conditions do not hold');
      return { outcome: 'conditions_failed' };
    }
    const settings = this.#o.settings();
    const now = this.#o.clock.monotonic();
    dropOlderThanAMinute(rt.starts, now);
    dropOlderThanAMinute(rt.self_starts, now);
    if (self && rt.self_starts.length >= settings.self_trigger_per_minute) {
      return this.#skip(
        rt,
        data,
        'loop',
        `loop stopped: its own actions triggered it more than ${settings.self_trigger_per_minute} times in a minute (core.automations.self_trigger_per_minute)`,
      );
    }
    if (rt.starts.length >= settings.max_runs_per_minute) {
      return this.#skip(
        rt,
        data,
        'rate',
        `more than ${settings.max_runs_per_minute} runs in a minute (core.automations.max_runs_per_minute)`,
      );
    }
    const busy = rt.running.length > 0;
    switch (rt.rule.mode) {
      case 'single':
        if (busy) return this.#skip(rt, data, 'single', 'a run is still going on (mode single)');
        break;
      case 'queued':
        if (busy) {
          if (rt.queue.length >= settings.max_queued_runs) {
            return this.#skip(rt, data, 'queue_full', `${rt.queue.length} runs already wait (core.automations.max_queued_runs)`);
          }
          rt.queue.push({ data });
          this.#counted(rt, now, self);
          return { outcome: 'queued' };
        }
        break;
      case 'parallel':
        if (rt.running.length >= settings.max_queued_runs) {
          return this.#skip(rt, data, 'parallel_full', `${rt.running.length} runs already going on (core.automations.max_queued_runs)`);
        }
        break;
      case 'restart':
        for (const run of [...rt.running]) {
          this.#abort(rt, run, new HomeAgentError('HA_ERR_ABORTED', 'restarted by a new trigger (mode restart)'));
        }
        break;
    }
    this.#counted(rt, now, self);
    return { outcome: 'started', run_id: this.#startRun(rt, data) };
  }

  #counted(rt: RuleRuntime, now: number, self: boolean): void {
    rt.starts.push(now);
    if (self) rt.self_starts.push(now);
  }

  #startRun(rt: RuleRuntime, data: TriggerData): string {
    const { clock, entities, io, tools } = this.#o;
    const run: ActiveRun = {
      id: this.#newId(),
      trigger: data,
      started_at: clock.now(),
      started_mono: clock.monotonic(),
      controller: new AbortController(),
      steps: [],
      current: undefined,
      finished: false,
    };
    rt.running.push(run);
    const context = {
      automation_id: rt.rule.id,
      run_id: run.id,
      trigger: data,
      entities,
      io,
      ...(tools === undefined ? {} : { tools }),
      clock,
      signal: run.controller.signal,
    };
    // Runs synchronously up to the first action's first await: nothing is written before it.
    void executeActions(rt.rule.actions, context, {
      started: (index, type, detail) => {
        run.current = { index, type, started: clock.monotonic(), detail };
      },
      finished: (step) => {
        run.current = undefined;
        if (!run.finished) run.steps.push(step);
      },
    }).then(
      (result) => this.#finish(rt, run, result.status, result.error),
      (error: unknown) => this.#finish(rt, run, 'failed', describeError(error)),
    );
    return run.id;
  }

  /** Cancels a run and records it as aborted at once; its pending action unwinds later, unheard. */
  #abort(rt: RuleRuntime, run: ActiveRun, reason: HomeAgentError): void {
    if (run.finished) return;
    run.controller.abort(reason);
    const text = describeError(reason);
    if (run.current !== undefined) {
      const ms = Math.round(this.#o.clock.monotonic() - run.current.started);
      const { index, type, detail } = run.current;
      run.steps.push({ index, type, status: 'aborted', ms, detail, error: text });
      run.current = undefined;
    }
    this.#finish(rt, run, 'aborted', text);
  }

  #finish(rt: RuleRuntime, run: ActiveRun, status: RunStatus, error: string | null): void {
    if (run.finished) return;
    run.finished = true;
    rt.running = rt.running.filter((r) => r !== run);
    const { clock, log, events } = this.#o;
    const record: AutomationRunRecord = {
      id: run.id,
      automation_id: rt.rule.id,
      trigger: run.trigger,
      started_at: run.started_at,
      finished_at: clock.now(),
      status,
      error,
      steps: run.steps,
    };
    rt.last_run = lastRunOf(record);
    this.#store?.append(record);
    const trigger = summarizeTrigger(run.trigger);
    const line = { automation_id: rt.rule.id, run_id: run.id, trigger, status, ms: Math.round(clock.monotonic() - run.started_mono) };
    if (status === 'failed') log.warn({ ...line, error }, `automation ${rt.rule.id} failed`);
    else log.info(error === null ? line : { ...line, error }, `automation ${rt.rule.id} ${status}`);
    events.emit('automation.run', {
      automation_id: rt.rule.id,
      run_id: run.id,
      trigger,
      status,
      ...(error !== null && { error }),
      started_at: record.started_at,
      finished_at: record.finished_at,
    });
    if (rt.rule.mode === 'queued' && !rt.retired && rt.running.length === 0) {
      const next = rt.queue.shift();
      if (next) this.#startRun(rt, next.data);
    }
  }

  #skip(rt: RuleRuntime, data: TriggerData, reason: SkipReason, why: string): FireOutcome {
    const { clock, log, events } = this.#o;
    const trigger = summarizeTrigger(data);
    const at = clock.now();
    events.emit('automation.run', {
      automation_id: rt.rule.id,
      run_id: this.#newId(),
      trigger,
      status: 'skipped',
      error: why,
      started_at: at,
      finished_at: at,
    });
    if (reason === 'single') {
      log.info({ automation_id: rt.rule.id, trigger, status: 'skipped' }, `automation ${rt.rule.id} skipped: ${why}`);
    } else {
      // A flood of triggers logs one warning a minute, with the count of the ones not logged.
      const now = clock.monotonic();
      const last = rt.warned.get(reason);
      if (last === undefined || now - last.at >= MINUTE_MS) {
        log.warn(
          { automation_id: rt.rule.id, trigger, status: 'skipped', reason, not_logged: last?.suppressed ?? 0 },
          `automation ${rt.rule.id} skipped: ${why}`,
        );
        rt.warned.set(reason, { at: now, suppressed: 0 });
      } else last.suppressed++;
    }
    return { outcome: 'skipped', reason: why };
  }

  /** Stops everything of a rule that is removed, replaced or stopping. */
  #retire(rt: RuleRuntime, reason: HomeAgentError): void {
    rt.queue = [];
    for (const tr of rt.triggers) {
      cancelPending(tr);
      tr.timer?.cancel();
      delete tr.timer;
    }
    for (const run of [...rt.running]) this.#abort(rt, run, reason);
    rt.retired = true;
  }

  // ---- helpers ----

  #runtime(rule: CheckedRule, source: AutomationRule): RuleRuntime {
    return {
      rule,
      source,
      triggers: rule.triggers.map((trigger) => ({ trigger })),
      running: [],
      queue: [],
      starts: [],
      self_starts: [],
      last_run: null,
      warned: new Map(),
      retired: false,
    };
  }

  #enabled(rt: RuleRuntime): boolean {
    return this.#flags.get(rt.rule.id)?.enabled ?? rt.rule.enabled;
  }

  #conditionsHold(conditions: readonly AutomationCondition[]): boolean {
    return conditionsHold(conditions, { find: (ref) => this.#o.entities.find(ref), now: new Date(this.#o.clock.now()) });
  }

  /** Resolves the entity references of state and numeric triggers (all, or only the unresolved) and rebuilds the index. */
  #resolveReferences(all: boolean): void {
    let changed = all;
    let unresolved = 0;
    for (const rt of this.#rules.values()) {
      for (const tr of rt.triggers) {
        const t = tr.trigger;
        if (t.type !== 'state' && t.type !== 'numeric') continue;
        if (!all && tr.entity_id !== undefined) continue;
        const id = this.#findId(t.entity_ref);
        if (id !== tr.entity_id) {
          changed = true;
          if (id === undefined) delete tr.entity_id;
          else tr.entity_id = id;
          delete tr.armed;
        }
        if (id === undefined) unresolved++;
      }
    }
    this.#unresolved = unresolved;
    if (changed) this.#rebuildIndex();
  }

  /** A removed entity's triggers wait for a reference to resolve again (the same entity back, or another by that name). */
  #forget(entityId: string): void {
    let forgotten = 0;
    for (const rt of this.#rules.values()) {
      for (const tr of rt.triggers) {
        if (tr.entity_id !== entityId) continue;
        delete tr.entity_id;
        delete tr.armed;
        cancelPending(tr);
        forgotten++;
      }
    }
    if (forgotten === 0) return;
    this.#unresolved += forgotten;
    this.#rebuildIndex();
  }

  #findId(reference: string): string | undefined {
    try {
      return this.#o.entities.find(reference)?.entity_id;
    } catch {
      return undefined;
    }
  }

  #rebuildIndex(): void {
    const index = new TriggerIndex<RuleRuntime>();
    for (const rt of this.#rules.values()) {
      for (const tr of rt.triggers) {
        const trigger = tr.trigger;
        if (trigger.type === 'state' || trigger.type === 'numeric') {
          if (tr.entity_id !== undefined) index.addEntity(tr.entity_id, { owner: rt, trigger });
        } else index.add({ owner: rt, trigger });
      }
    }
    this.#index = index;
  }

  #summary(rt: RuleRuntime): AutomationSummary {
    const flag = this.#flags.get(rt.rule.id);
    return {
      id: rt.rule.id,
      name: rt.rule.name,
      enabled: flag?.enabled ?? rt.rule.enabled,
      enabled_by: flag === undefined ? 'config' : flag.actor,
      mode: rt.rule.mode,
      triggers: rt.rule.triggers.map(describeTrigger),
      running: rt.running.length,
      queued: rt.queue.length,
      last_run: rt.last_run,
      problems: referenceProblems(rt.rule, (ref) => this.#o.entities.resolve(ref)),
    };
  }

  #require(id: string): RuleRuntime {
    const rt = this.#rules.get(id);
    if (!rt) throw notFound(id);
    return rt;
  }

  #requireStore(): AutomationStore {
    if (!this.#store) throw new HomeAgentError('HA_ERR_INTERNAL', 'the automation engine is not running');
    return this.#store;
  }
}

function cancelPending(tr: TriggerRuntime): void {
  tr.pending?.cancel();
  delete tr.pending;
}

function dropOlderThanAMinute(times: number[], now: number): void {
  let drop = 0;
  while (drop < times.length && (times[drop] as number) <= now - MINUTE_MS) drop++;
  if (drop > 0) times.splice(0, drop);
}

function notFound(id: string): HomeAgentError {
  return new HomeAgentError('HA_ERR_AUTOMATION_NOT_FOUND', `no automation has the id ${JSON.stringify(id)}`);
}

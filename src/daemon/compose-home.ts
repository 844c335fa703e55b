/**
 * The home: its entities (the one place device state is read and changed, docs/decisions/0004)
 * with their tools and control methods, the automations that run on the device without the model
 * (docs/automations.md), and the household's shopping and to-do lists.
 */

import type { ToolRegistry } from '../agent/tool-registry.js';
import { AutomationEngine } from '../automation/automation-engine.js';
import { AutomationFileWatch } from '../automation/automation-file-watch.js';
import { registerAutomationMethods } from '../automation/automation-methods.js';
import type { AutomationTools } from '../automation/types.js';
import { registerEntityMethods } from '../home/entity-methods.js';
import { EntityRegistry } from '../home/entity-registry.js';
import { entityTools } from '../home/entity-tools.js';
import type { InputScheduler } from '../io/input-scheduler.js';
import type { IoManager } from '../io/io-manager.js';
import { registerListMethods } from '../lists/list-methods.js';
import { ListStore } from '../lists/list-store.js';
import { listTools } from '../lists/list-tools.js';
import { ListUpkeep } from '../lists/list-upkeep.js';
import { describeError, HomeAgentError } from '../shared/errors.js';
import { callTier, ToolError } from '../shared/tool.js';
import type { InputSender } from '../shared/trust.js';
import type { CoreParts } from './compose-core.js';
import type { ToolParts } from './compose-tools.js';

/** An automation's input: a rule the owner wrote, fired by whatever triggered it. */
const AUTOMATION_SENDER: InputSender = { trust: 'household', id: 'automation', proof: 'an automation rule in the configuration' };

export function composeEntities(core: CoreParts, toolbox: ToolParts): EntityRegistry {
  const { store, events, logs, clock, settings, control } = core;
  const entities = new EntityRegistry({
    database: () => store.database('home'),
    events,
    log: logs.child('home'),
    clock,
    settings: () => settings.config().core.home,
  });
  for (const definition of entityTools(entities, { audit: (record) => logs.audit(record) })) toolbox.tools.register(definition);
  registerEntityMethods(control, entities, { logs, now: () => clock.now() });
  return entities;
}

export function composeAutomations(
  core: CoreParts,
  deps: { entities: EntityRegistry; io: IoManager; scheduler: InputScheduler; tools?: ToolRegistry },
): AutomationEngine {
  const { events, store, logs, settings, clock, control } = core;
  const { io, scheduler } = deps;
  const automations = new AutomationEngine({
    entities: deps.entities,
    events,
    io: {
      notify: (channel, text, meta) => io.send({ id: core.newId(), channel, type: 'text', payload: text, meta, created_at: clock.now() }),
      input: (channel, text, level, meta) => {
        void scheduler.submit(
          {
            id: core.newId(),
            source: 'automation',
            channel,
            sender: AUTOMATION_SENDER,
            type: 'text',
            payload: text,
            meta,
            received_at: clock.now(),
            level,
          },
          { origin: 'builtin' },
        );
      },
    },
    ...(deps.tools === undefined ? {} : { tools: automationTools(deps.tools) }),
    database: () => store.database('home'),
    log: logs.child('automation'),
    clock: core.timerClock,
    settings: () => settings.config().core.automations,
  });
  registerAutomationMethods(control, automations, { logs });
  // A `config set core.automations.rules` takes effect at once; rules that fail to load leave the
  // running ones in place (the settings check already refused what it could see).
  const log = logs.child('daemon');
  events.on('daemon', 'settings.changed', ({ key }) => {
    if (key !== 'core.automations.rules') return;
    try {
      automations.reload();
    } catch (error) {
      log.error({ err: describeError(error) }, 'automation rules not reloaded: the rules running stay');
    }
  });
  return automations;
}

/** The daemon notice of a configuration file whose automations do not load (cleared by one that does). */
const FILE_NOTICE = 'automation.config_file';

/** Automations follow the configuration file (docs/automations.md); started after the engine. */
export function composeAutomationFileWatch(core: CoreParts): AutomationFileWatch {
  const { loaded, settings, logs, status } = core;
  return new AutomationFileWatch({
    file: loaded.file,
    settings,
    log: logs.child('automation'),
    clock: core.timerClock,
    watchSettings: () => settings.config().core.automations,
    problem: (text) => (text === undefined ? status.clearNotice(FILE_NOTICE) : status.notice('warning', FILE_NOTICE, text)),
  });
}

export interface ListParts {
  lists: ListStore;
  upkeep: ListUpkeep;
}

/** Shopping and to-do lists, kept with the household's other durable state. */
export function composeLists(core: CoreParts, toolbox: ToolParts): ListParts {
  const { store, settings, clock, logs, control } = core;
  const lists = new ListStore({ database: () => store.database('state'), settings: () => settings.config().core.lists, clock });
  for (const definition of listTools(lists)) toolbox.tools.register(definition);
  registerListMethods(control, lists, { logs });
  return { lists, upkeep: new ListUpkeep({ lists, log: logs.child('lists') }) };
}

/**
 * What an automation's `sequence` action runs seq_run with: the registry's tool at the automation's
 * household trust, never a call whose tier is dangerous (only the owner's approval may run that).
 */
export function automationTools(registry: ToolRegistry): AutomationTools {
  return {
    run: async (tool, args, context) => {
      const def = registry.get(tool);
      if (!def) throw new HomeAgentError('HA_ERR_UNAVAILABLE', `no tool named ${tool} is registered (is its plugin enabled?)`);
      const check = registry.validate(def, JSON.stringify(args));
      if (!check.ok) throw new HomeAgentError('HA_ERR_TOOL_INVALID_ARGS', `${tool}: ${check.error.detail}`);
      if (callTier(def, check.args) === 'dangerous')
        throw new HomeAgentError(
          'HA_ERR_CONFIRMATION_REQUIRED',
          `${tool} ${JSON.stringify(args)} has a dangerous step, which needs the owner's approval; an automation does not run it`,
        );
      try {
        return await def.execute(check.args, {
          signal: context.signal,
          task_id: context.run_id,
          call_id: `${context.automation_id}:${context.run_id}`,
          source: 'automation',
          channel: 'automation',
          trust: AUTOMATION_SENDER.trust,
        });
      } catch (error) {
        if (error instanceof ToolError) throw new HomeAgentError('HA_ERR_TOOL_FAILED', `${tool}: ${error.info.detail}`, { cause: error });
        throw error;
      }
    },
  };
}

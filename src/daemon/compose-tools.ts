/**
 * The parts every turn runs through, composed before the areas that add tools to them: the IO
 * manager (output channels, routing), the stage hooks, the tool registry, the confirmation gate
 * and the tool executor with its trust policy. Calls of core.tracker.tracked_tools run inside the
 * change tracker, so a tool that edits <data>/plugins leaves a change set on trial.
 */
import { ConfirmationGate } from '../agent/confirmation-gate.js';
import { StageRegistry } from '../agent/stage-registry.js';
import { ToolExecutor } from '../agent/tool-executor.js';
import { ToolRegistry } from '../agent/tool-registry.js';
import { IoManager } from '../io/io-manager.js';
import type { Logger } from '../log/logger.js';
import type { ChangeTracker } from '../tracker/change-tracker.js';
import type { CoreParts } from './compose-core.js';

export interface ToolParts {
  /** The logger of the agent core (stages, tools, agent). */
  agentLog: Logger;
  io: IoManager;
  stages: StageRegistry;
  tools: ToolRegistry;
  confirmations: ConfirmationGate;
  executor: ToolExecutor;
}

export function composeTools(core: CoreParts, tracker: ChangeTracker): ToolParts {
  const { logs, settings, clock, events } = core;
  const agentLog = logs.child('agent');
  const io = new IoManager({ clock });
  const stages = new StageRegistry(agentLog, { timeoutMs: () => settings.config().core.agent.stage_timeout_ms });
  const tools = new ToolRegistry({ log: agentLog });
  tools.addProvider(io);
  const confirmations = new ConfirmationGate({
    preauthorized: () => settings.config().core.agent.preauthorized_tools,
    ttlMs: () => settings.config().core.agent.confirmation_ttl_ms,
    now: () => clock.now(),
    events,
  });
  const executor = new ToolExecutor({
    registry: tools,
    stages,
    limits: () => settings.config().core.agent,
    log: agentLog,
    gate: confirmations,
    audit: (record) => logs.audit(record),
    actPolicy: () => ({
      household: settings.config().core.agent.household_act_tools,
      untrusted: settings.config().core.agent.untrusted_act_tools,
    }),
    // Calls of core.tracker.tracked_tools are recorded as change sets when they touch <data>/plugins.
    around: (call, run) =>
      settings.config().core.tracker.tracked_tools.includes(call.tool)
        ? tracker.track({ actor: 'agent', tool: call.tool, channel: call.channel, task_id: call.task_id }, run)
        : run(),
  });
  return { agentLog, io, stages, tools, confirmations, executor };
}

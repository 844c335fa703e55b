/**
 * The supervisor: sd_notify (READY/STATUS/WATCHDOG/STOPPING) through the notifier, the event-loop
 * delay check, the health loop over the state database, language models, devices and plugins,
 * and the rollback policy for plugin changes on trial, whose announcements go out through
 * {@link announceWithFallback}.
 */
import type { EntityRegistry } from '../home/entity-registry.js';
import { announceWithFallback } from '../io/announce.js';
import type { IoManager } from '../io/io-manager.js';
import { resolveSources } from '../llm/provider-manager.js';
import type { Logger } from '../log/logger.js';
import type { PluginHost } from '../plugin/plugin-host.js';
import { LoopDelayCheck } from '../supervisor/health.js';
import { Notifier } from '../supervisor/notifier.js';
import { Supervisor } from '../supervisor/supervisor.js';
import type { ChangeTracker } from '../tracker/change-tracker.js';
import type { CoreParts } from './compose-core.js';

export function composeNotifier(core: CoreParts, env: NodeJS.ProcessEnv): Notifier {
  return Notifier.create({ backend: core.loaded.config.core.supervisor.notify_backend, env, log: core.logs.child('supervisor') });
}

export function composeSupervisor(
  core: CoreParts,
  deps: { notifier: Notifier; io: IoManager; entities: EntityRegistry; plugins: PluginHost; tracker: ChangeTracker },
): Supervisor {
  const { settings, store, status, events, logs } = core;
  const { io, entities, plugins, tracker } = deps;
  return new Supervisor({
    notifier: deps.notifier,
    loop: new LoopDelayCheck(() => settings.config().core.supervisor.max_loop_delay_ms),
    stateDb: () => store.database('state').checkWritable(),
    llm: () =>
      resolveSources(settings.config().core.llm)
        .filter((s) => s.base_url !== '')
        .map((s) => ({ name: s.name, base_url: s.base_url })),
    devices: () =>
      entities
        .list()
        .filter((e) => e.state === 'unavailable')
        .map((e) => ({ id: e.entity_id, detail: typeof e.attributes.error === 'string' ? e.attributes.error : 'unavailable' })),
    plugins: {
      health: () => plugins.health(),
      restart: async (name, actor) => {
        await plugins.reload(name, actor);
      },
      folderOf: (name) => plugins.folderOf(name),
    },
    tracker: tracker.enabled ? tracker : undefined,
    startupRollbacks: () => tracker.startupRollbacks(),
    // The conversation that made the change (or core.supervisor.announce_channel), else the web
    // page's channel: the household's screen. The status notice and the log carry it in any case.
    announce: (text, channel) => announceWithFallback(io, text, [channel, 'webui'], { newId: core.newId, now: () => core.clock.now() }),
    status,
    settings: () => ({ supervisor: settings.config().core.supervisor, tracker: settings.config().core.tracker }),
    events,
    log: logs.child('supervisor'),
    clock: core.timerClock,
  });
}

/**
 * What the daemon's status line and systemd see of the others: status text to sd_notify, log
 * levels changed at run time, plugins' own notices, and a notice per failed plugin.
 */
export function wireStatus(core: CoreParts, deps: { notifier: Notifier; agentLog: Logger }): void {
  const { events, settings, logs, status } = core;
  events.on('daemon', 'daemon.status', ({ text }) => deps.notifier.status(text));
  events.on('daemon', 'agent.llm_chain', (round) => deps.agentLog.debug(round, 'llm round'));
  events.on('daemon', 'settings.changed', ({ key }) => {
    if (key.startsWith('core.log.')) logs.setLevels(settings.config().core.log.level, settings.config().core.log.levels);
  });
  // Plugins' own notices (cmd: "cmd_run not isolated"), keyed plugin.<name>.<what>: never one of the
  // kernel's (plugin.<name> is the kernel's notice that the plugin failed).
  events.on('daemon', 'daemon.notice', ({ key, level, message }) => {
    if (!/^plugin\.[^.]+\.[^.]+/.test(key)) return;
    if (message === null) status.clearNotice(key);
    else status.notice(level, key, message);
  });
  events.on('daemon', 'service.state', ({ name, kind, state, error }) => {
    if (kind !== 'plugin') return;
    if (state === 'failed') status.notice('error', `plugin.${name}`, `plugin ${name} failed: ${error ?? 'unknown error'}`);
    else if (state === 'running') status.clearNotice(`plugin.${name}`);
  });
}

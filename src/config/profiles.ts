/**
 * Configuration profiles (`core.profile`): named sets of defaults for a kind of machine. The
 * loader lays a profile's values over the schema defaults BEFORE the configuration file and the
 * environment, so a value the owner sets always wins and the profile only moves the starting
 * point. `standard` changes nothing (the schema defaults are written for a Pi 4/5 with 2 GB or
 * more); `small` is for boards such as a Pi Zero 2 W (512 MB shared by everything): fewer items
 * held in memory at once (context window, queues, histories kept in the databases and read back,
 * connections and sessions, concurrent work), with every feature still on. docs/small-boards.md
 * has what each value saves and the figures measured under it.
 *
 * Keys are flat setting keys (`core.agent.max_context_size`); test/unit/config/profile.test.ts
 * checks that every key is a setting and every value passes the setting's own schema.
 */

export const PROFILES = ['standard', 'small'] as const;
export type ProfileName = (typeof PROFILES)[number];

/** Where a value laid down by a profile came from, as `LoadedConfig.sources` records it. */
export const profileSource = (name: string): string => `profile:${name}`;

export const PROFILE_DEFAULTS: Record<ProfileName, Readonly<Record<string, unknown>>> = {
  standard: {},
  small: {
    // The conversation window is sent to the model and held per conversation: half the events.
    'core.agent.max_context_size': 16,
    'core.agent.tool_output_max_chars': 8000,
    'core.agent.max_parallel_tools': 2,
    'core.agent.ready_queue_size': 64,
    'core.agent.interrupt_queue_size': 16,
    'core.agent.home_summary_max_chars': 1000,
    // Histories kept in the databases (smaller files, smaller pages read back into the cache).
    'core.settings.history_max_rows': 200,
    'core.home.history_max_rows': 200000,
    'core.automations.run_history': 200,
    'core.automations.max_queued_runs': 5,
    'core.tracker.keep_change_sets': 50,
    // Concurrent clients and work each hold buffers and state.
    'plugin.cli.max_connections': 8,
    'plugin.cmd.history': 50,
    'plugin.mqtt.outbox_max_messages': 1000,
    'plugin.mqtt.broker_max_connections': 16,
    'plugin.mqtt.broker_max_queued_messages': 200,
    'plugin.mqtt.broker_max_stored_mb': 16,
    'plugin.subagents.max_concurrent': 1,
    'plugin.subagents.keep_finished': 20,
    'plugin.webui.max_sessions': 8,
    'plugin.webui.max_connections': 64,
    'plugin.webui.max_event_streams': 4,
    'plugin.remotedevice.max_connections': 8,
    'plugin.remotedevice.max_jobs': 16,
    // The local recogniser's grammar is built in memory from the home's names.
    'plugin.voice.stt.local_max_grammar_states': 50000,
  },
};

export function isProfileName(name: unknown): name is ProfileName {
  return typeof name === 'string' && (PROFILES as readonly string[]).includes(name);
}

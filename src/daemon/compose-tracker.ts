/**
 * The change tracker of <data>/plugins (docs/changes.md) and its control methods. It reloads the
 * plugins a change touched, but the plugin host is composed last (it needs every other area), so
 * the tracker reaches it through a late binding the plugins area binds.
 */
import { mkdirSync } from 'node:fs';
import { selectTrackerBackend } from '../tracker/backend-select.js';
import { registerChangeMethods } from '../tracker/change-methods.js';
import { ChangeTracker } from '../tracker/change-tracker.js';
import type { TrackedPluginHost } from '../tracker/change-types.js';
import type { CoreParts } from './compose-core.js';
import type { LateBinding } from './late-binding.js';

export function composeTracker(core: CoreParts, plugins: LateBinding<TrackedPluginHost>): ChangeTracker {
  const { paths, logs, settings, store, events, clock, control } = core;
  const trackerConfig = core.loaded.config.core.tracker;
  mkdirSync(paths.installedPluginsDir, { recursive: true, mode: 0o750 });
  const log = logs.child('tracker');
  const tracker = new ChangeTracker({
    backend: selectTrackerBackend({
      setting: trackerConfig.backend,
      root: paths.installedPluginsDir,
      stateDir: paths.trackerStateDir,
      applyTimeoutMs: trackerConfig.apply_timeout_ms,
      log,
    }),
    stateDir: paths.trackerStateDir,
    database: () => store.database('state'),
    plugins: {
      refresh: (folders, actor) => plugins.get().refresh(folders, actor),
      stopTracked: (actor) => plugins.get().stopTracked(actor),
    },
    settings: () => settings.config().core.tracker,
    events,
    log,
    audit: (record) => logs.audit(record),
    clock,
  });
  registerChangeMethods(control, tracker, { logs });
  return tracker;
}

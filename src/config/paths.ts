/** Resolves where HomeAgent keeps its files, from the configuration and systemd's directories. */
import { isAbsolute, join, resolve } from 'node:path';
import type { LoadedConfig } from './loader.js';

export interface RuntimePaths {
  dataDir: string;
  runtimeDir: string;
  stateDb: string;
  /** The household memory (context window, documents, graph). */
  memoryDb: string;
  /** The knowledge library's index (the files under <data>/knowledge are the source of truth). */
  knowledgeDb: string;
  /** Entities, their state history, automation runs and switches. */
  homeDb: string;
  backupDir: string;
  /** Private data of each plugin: `<data>/plugin-data/<name>`. */
  pluginDataDir: string;
  /** Installed (external) plugins, one folder each: `<data>/plugins/<name>`. */
  installedPluginsDir: string;
  /** Installed skills: `<data>/skills/<name>/SKILL.md`. */
  installedSkillsDir: string;
  /** The change tracker's last good state, trial marker and kept contents (never inside installedPluginsDir). */
  trackerStateDir: string;
  pidFile: string;
}

/**
 * systemd's StateDirectory= and RuntimeDirectory= (passed as $STATE_DIRECTORY and
 * $RUNTIME_DIRECTORY) are used when the configuration leaves the directories at their defaults.
 */
export function resolvePaths(loaded: LoadedConfig, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): RuntimePaths {
  const core = loaded.config.core;
  const dataFromDefault = loaded.sources.get('core.data_dir') === 'default';
  const stateDirectory = env.STATE_DIRECTORY?.split(':')[0];
  const dataDir =
    dataFromDefault && stateDirectory ? stateDirectory : isAbsolute(core.data_dir) ? core.data_dir : resolve(cwd, core.data_dir);
  const runtimeDirectory = env.RUNTIME_DIRECTORY?.split(':')[0];
  const runtimeDir = core.runtime_dir ? resolve(cwd, core.runtime_dir) : runtimeDirectory ? runtimeDirectory : join(dataDir, 'run');
  return {
    dataDir,
    runtimeDir,
    stateDb: join(dataDir, 'state.db'),
    memoryDb: join(dataDir, 'memory.db'),
    knowledgeDb: join(dataDir, 'knowledge.db'),
    homeDb: join(dataDir, 'home.db'),
    backupDir: core.store.backup_dir ? resolve(cwd, core.store.backup_dir) : join(dataDir, 'backups'),
    pluginDataDir: join(dataDir, 'plugin-data'),
    installedPluginsDir: join(dataDir, 'plugins'),
    installedSkillsDir: join(dataDir, 'skills'),
    trackerStateDir: core.tracker.state_dir ? resolve(cwd, core.tracker.state_dir) : join(dataDir, 'tracker'),
    pidFile: join(dataDir, 'homeagent.pid'),
  };
}

/**
 * Automations follow the configuration file: when the file changes on disk, its
 * `core.automations.rules` is read again and, if it loads, becomes the running rules at once (the
 * settings registry emits settings.changed and the engine reloads: unchanged rules keep running,
 * changed ones restart, removed ones stop). Nothing else in the file is reread here; other keys
 * take effect at the next start (or with `homeagentctl config set`).
 *
 * Editors save in several steps (truncate and write, or write a temporary file and rename it over
 * the old one, which replaces the inode a file watch would follow), so the folder is watched for
 * the file's name and the file is read once it stayed quiet for core.automations.watch_debounce_ms.
 * A file that does not load — a YAML syntax error, a rule the schema or the rule check refuses, the
 * file gone — keeps the running rules: the problem is logged and shown as a daemon notice naming the
 * file, line and key, until an edit that loads clears it.
 */
import { createHash } from 'node:crypto';
import { type FSWatcher, readFileSync, watch } from 'node:fs';
import { basename, dirname } from 'node:path';
import { readFileSetting } from '../config/loader.js';
import type { SettingsRegistry } from '../config/settings-registry.js';
import type { Logger } from '../log/logger.js';
import type { TimerClock, TimerHandle } from '../shared/clock.js';
import { describeError, isHomeAgentError } from '../shared/errors.js';
import type { Service } from '../shared/service.js';

/** The one key this watch rereads. */
export const RULES_KEY = 'core.automations.rules';

export interface AutomationFileWatchOptions {
  /** The configuration file the daemon read at start; none: nothing to watch. */
  file: string | undefined;
  settings: Pick<SettingsRegistry, 'reloadFromFile'>;
  log: Logger;
  clock: TimerClock;
  /** core.automations.watch_config_file and watch_debounce_ms, read at start. */
  watchSettings: () => { watch_config_file: boolean; watch_debounce_ms: number };
  /** A problem of the file as it is now (a daemon notice), or undefined once it loads again. */
  problem: (text: string | undefined) => void;
}

export class AutomationFileWatch implements Service {
  readonly name = 'automation-file-watch';
  readonly #o: AutomationFileWatchOptions;
  #watcher: FSWatcher | undefined;
  #timer: TimerHandle | undefined;
  /** The digest of the text last read, so that a save without changes reads nothing again. */
  #lastDigest: string | undefined;
  #reads = 0;
  #debounceMs = 0;

  constructor(options: AutomationFileWatchOptions) {
    this.#o = options;
  }

  /** How many times the file was read since start (for tests and the debug log). */
  get reads(): number {
    return this.#reads;
  }

  async start(): Promise<void> {
    const { file, log } = this.#o;
    const { watch_config_file: enabled, watch_debounce_ms: debounceMs } = this.#o.watchSettings();
    this.#debounceMs = debounceMs;
    if (!enabled || file === undefined) {
      log.debug({ file: file ?? null, enabled }, 'automation rules do not follow the configuration file');
      return;
    }
    this.#lastDigest = digestOf(file);
    const name = basename(file);
    try {
      this.#watcher = watch(dirname(file), { persistent: false }, (_event, changed) => {
        // Some platforms give no name; then any change in the folder may be ours.
        if (changed === null || changed === name) this.#schedule();
      });
    } catch (error) {
      log.warn({ file, err: describeError(error) }, 'cannot watch the configuration file: automation rules change only at restart');
      return;
    }
    this.#watcher.on('error', (error) => {
      log.warn({ file, err: describeError(error) }, 'watching the configuration file failed: automation rules change only at restart');
      this.#close();
    });
    log.info({ file }, 'automation rules follow the configuration file');
  }

  async stop(): Promise<void> {
    this.#close();
  }

  #close(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#watcher?.close();
    this.#watcher = undefined;
  }

  #schedule(): void {
    this.#timer?.cancel();
    this.#timer = this.#o.clock.setTimer(() => {
      this.#timer = undefined;
      this.#reread();
    }, this.#debounceMs);
  }

  #reread(): void {
    const { file, settings, log, problem } = this.#o;
    if (file === undefined || this.#watcher === undefined) return;
    const digest = digestOf(file);
    if (digest !== undefined && digest === this.#lastDigest) return;
    this.#reads++;
    let setting: ReturnType<typeof readFileSetting>;
    try {
      setting = readFileSetting(file, RULES_KEY);
    } catch (error) {
      // Gone, unreadable or not YAML: the text is what to fix. A file being replaced comes back.
      // One line (the parser's message names the line and column; its source excerpt is left out).
      const reason = describeError(error).replace(/\s*\n\s*/g, ' ');
      const text = `${file} not reloaded, the running automations stay: ${reason}`;
      log.error({ file, err: reason }, text);
      problem(text);
      return;
    }
    this.#lastDigest = digest;
    try {
      const outcome = settings.reloadFromFile(RULES_KEY, setting.value, file);
      problem(undefined);
      if (outcome === 'overridden')
        log.warn(
          { file, key: RULES_KEY },
          `${RULES_KEY} changed in ${file}, but a value from the environment or \`homeagentctl config set\` wins; \`homeagentctl config reset ${RULES_KEY}\` uses the file's`,
        );
      else log.info({ file, key: RULES_KEY, outcome }, `${file} read again: automation rules ${outcome}`);
    } catch (error) {
      // Called from a timer: nothing may escape (it would end the daemon).
      if (!isHomeAgentError(error, 'HA_ERR_SETTINGS_INVALID_VALUE')) {
        log.error({ file, err: describeError(error) }, `${file} not reloaded, the running automations stay`);
        problem(`${file} not reloaded, the running automations stay: ${describeError(error)}`);
        return;
      }
      const where = /^core\.automations\.rules([^:]*):/.exec(error.message)?.[1] ?? '';
      const line = setting.lineOf(where);
      const text = `${file}${line === undefined ? '' : `:${line}`}: ${error.message}; not reloaded, the running automations stay`;
      log.error({ file, line: line ?? null, problem: error.message }, text);
      problem(text);
    }
  }
}

/** The SHA-256 of the file's bytes, or undefined when it cannot be read now. */
function digestOf(file: string): string | undefined {
  try {
    return createHash('sha256').update(readFileSync(file)).digest('hex');
  } catch {
    return undefined;
  }
}

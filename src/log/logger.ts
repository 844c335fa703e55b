/**
 * Logging: one pino root writing JSON lines to stdout (journald in production), a cached child
 * per subsystem or plugin with its own level, redaction of secrets, and audit records for every
 * mutation. The last lines are also kept in memory for `logs.recent` (recent-lines.ts).
 */
import { type DestinationStream, type LevelWithSilent, type Logger as PinoLogger, pino } from 'pino';
import { HomeAgentError } from '../shared/errors.js';
import { RecentLines, type RecentLinesFilter, type RecentLog, teeDestination } from './recent-lines.js';

export type Logger = PinoLogger;
export type { LevelWithSilent };

/** Field names whose values are replaced by "[redacted]" wherever they appear (two levels deep). */
const SECRET_FIELDS = ['api_key', 'apiKey', 'password', 'token', 'secret', 'authorization', 'cookie'];
export const REDACT_PATHS = SECRET_FIELDS.flatMap((f) => [f, `*.${f}`, `*.*.${f}`]);

export interface LogManagerOptions {
  level: LevelWithSilent;
  /** Level per subsystem name (`store`, `plugin.cli`, ...). */
  levels: Record<string, LevelWithSilent>;
  /** Where lines go; stdout when omitted. Tests pass a stream to read them back. */
  destination?: DestinationStream;
  /**
   * core.log.recent_lines and core.log.recent_line_bytes: the last lines kept in memory for
   * {@link LogManager.recent}. None are kept when absent or when `lines` is 0.
   */
  recent?: { lines: number; lineBytes: number };
}

export interface AuditRecord {
  /** Who did it: `cli`, `webui:admin`, `plugin:mqtt`, `system`. */
  actor: string;
  /** What was done, `settings.set`, `store.backup`, ... */
  action: string;
  [field: string]: unknown;
}

export class LogManager {
  readonly root: Logger;
  readonly #recent: RecentLines | undefined;
  readonly #children = new Map<string, Logger>();
  #level: LevelWithSilent;
  #levels: Record<string, LevelWithSilent>;

  constructor(options: LogManagerOptions) {
    this.#level = options.level;
    this.#levels = { ...options.levels };
    const pinoOptions = {
      level: 'trace' as const,
      base: { pid: process.pid },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label: string) => ({ level: label }) },
    };
    this.#recent = options.recent && options.recent.lines > 0 ? new RecentLines(options.recent) : undefined;
    const destination = this.#recent ? teeDestination(this.#recent, options.destination ?? stdoutDestination()) : options.destination;
    this.root = destination ? pino(pinoOptions, destination) : pino(pinoOptions);
    this.root.level = this.#level;
  }

  /**
   * The newest kept lines matching `filter`, newest last (`logs.recent`). Throws HA_ERR_UNAVAILABLE
   * when no lines are kept (core.log.recent_lines is 0).
   */
  recent(filter: RecentLinesFilter): RecentLog {
    if (!this.#recent) {
      throw new HomeAgentError(
        'HA_ERR_UNAVAILABLE',
        'no log lines are kept in memory: core.log.recent_lines is 0 (set it and restart; the journal has every line)',
      );
    }
    return this.#recent.query(filter);
  }

  /** The logger of a subsystem (`store`, `config`) or plugin (`plugin.cli`); one per name. */
  child(subsystem: string): Logger {
    let child = this.#children.get(subsystem);
    if (!child) {
      child = this.root.child({ subsystem });
      child.level = this.#levelFor(subsystem);
      this.#children.set(subsystem, child);
    }
    return child;
  }

  /** Applies new levels to the root and every existing child at once (no restart needed). */
  setLevels(level: LevelWithSilent, levels: Record<string, LevelWithSilent>): void {
    this.#level = level;
    this.#levels = { ...levels };
    this.root.level = level;
    for (const [name, child] of this.#children) child.level = this.#levelFor(name);
  }

  /** An audit record: written at info level even when other levels are quieter (unless logging is silent). */
  audit(record: AuditRecord): void {
    let audit = this.#children.get('audit');
    if (!audit) {
      audit = this.root.child({ subsystem: 'audit' });
      this.#children.set('audit', audit);
    }
    audit.level = this.#level === 'silent' ? 'silent' : 'info';
    audit.info({ audit: true, ...record }, `audit: ${record.action} by ${record.actor}`);
  }

  #levelFor(subsystem: string): LevelWithSilent {
    // `plugin.cli` falls back to `plugin`, then to the default level.
    const parts = subsystem.split('.');
    for (let n = parts.length; n > 0; n--) {
      const level = this.#levels[parts.slice(0, n).join('.')];
      if (level) return level;
    }
    return this.#level;
  }
}

/**
 * The destination pino picks itself when given none: an asynchronous SonicBoom on stdout (flushed
 * at exit), or process.stdout when something replaced its write (a test runner capturing output).
 */
function stdoutDestination(): DestinationStream {
  const stdout = process.stdout;
  const replaced = stdout.write !== Object.getPrototypeOf(stdout).write;
  return replaced ? stdout : pino.destination({ dest: stdout.fd ?? 1, sync: false });
}

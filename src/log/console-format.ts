/**
 * What the log looks like on standard output. Under systemd (the journal), in a pipe or a file the
 * lines stay JSON, one record each, for machines; on a terminal (`npm start`, `homeagent run` by
 * hand) a person reads them, so each record becomes one readable line: local time, level,
 * component, message, then the record's other fields as key=value, and an error's stack below it.
 * core.log.format (HOMEAGENT_LOG_FORMAT) forces either. Colour only where the terminal has it
 * (Node's hasColors, which honours NO_COLOR and FORCE_COLOR). Written here rather than taking
 * pino-pretty: one small formatter, no transport thread, no new dependency.
 */
import type { DestinationStream } from 'pino';

export type LogFormatSetting = 'auto' | 'json' | 'pretty';
export type LogFormat = 'json' | 'pretty';

/** What core.log.format means for this stdout: auto is pretty exactly when it is a terminal. */
export function chooseLogFormat(setting: LogFormatSetting, stdout: { isTTY?: boolean }): LogFormat {
  if (setting !== 'auto') return setting;
  return stdout.isTTY === true ? 'pretty' : 'json';
}

/** Fields every record has, shown in the line's fixed columns (or not at all: pid, hostname). */
const FIXED_FIELDS = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'subsystem']);

const LEVEL_COLOUR: Record<string, string> = {
  fatal: '\x1b[41;97m',
  error: '\x1b[31m',
  warn: '\x1b[33m',
  info: '\x1b[32m',
  debug: '\x1b[36m',
  trace: '\x1b[90m',
};
const DIM = '\x1b[2m';
const BOLD_CYAN = '\x1b[1;36m';
const RESET = '\x1b[0m';

/** A field value longer than this is cut in the readable line (the journal keeps JSON whole). */
const VALUE_CHARS = 300;

/**
 * One pino record (parsed JSON) as a readable line, without the trailing newline:
 * `14:03:07.412 INFO  daemon: HomeAgent ready; CLI socket: /run/x.sock  notify=none`.
 */
export function formatLogRecord(record: Readonly<Record<string, unknown>>, options: { colour: boolean }): string {
  const paint = (code: string, text: string) => (options.colour ? `${code}${text}${RESET}` : text);
  const level = typeof record.level === 'string' ? record.level : String(record.level ?? '');
  const time = clockTime(record.time);
  const component = typeof record.subsystem === 'string' ? `${paint(BOLD_CYAN, record.subsystem)}: ` : '';
  const text = typeof record.msg === 'string' ? record.msg : '';
  // Some messages name their part themselves ("tracker: ..."), for JSON readers; say it once.
  const message =
    typeof record.subsystem === 'string' && text.startsWith(`${record.subsystem}: `) ? text.slice(record.subsystem.length + 2) : text;
  const extras: string[] = [];
  let stack: string | undefined;
  for (const [key, value] of Object.entries(record)) {
    if (FIXED_FIELDS.has(key) || value === undefined) continue;
    if (key === 'err' && isErrorRecord(value)) {
      extras.push(`err=${fieldText(value.message)}`);
      if (typeof value.stack === 'string' && (level === 'error' || level === 'fatal' || level === 'debug' || level === 'trace'))
        stack = value.stack;
      continue;
    }
    extras.push(`${key}=${fieldText(value)}`);
  }
  const head = `${paint(DIM, time)} ${paint(LEVEL_COLOUR[level] ?? '', level.toUpperCase().padEnd(5))} ${component}${message}`;
  const line = extras.length > 0 ? `${head}  ${paint(DIM, extras.join(' '))}` : head;
  if (stack === undefined) return line;
  const indented = stack
    .split('\n')
    .slice(1)
    .map((frame) => `    ${frame.trim()}`)
    .join('\n');
  return indented === '' ? line : `${line}\n${paint(DIM, indented)}`;
}

/** `14:03:07.412` in local time, from pino's ISO time; the text as given when it is no time. */
function clockTime(time: unknown): string {
  const at = typeof time === 'string' || typeof time === 'number' ? new Date(time) : undefined;
  if (at === undefined || Number.isNaN(at.getTime())) return String(time ?? '');
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(at.getHours())}:${two(at.getMinutes())}:${two(at.getSeconds())}.${String(at.getMilliseconds()).padStart(3, '0')}`;
}

function isErrorRecord(value: unknown): value is { message?: unknown; stack?: unknown } {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && 'message' in value;
}

/** A value as it reads after `key=`: a plain word as it is, anything else as JSON, long ones cut. */
function fieldText(value: unknown): string {
  const text = typeof value === 'string' && /^[^\s"=]+$/.test(value) ? value : (JSON.stringify(value) ?? String(value));
  return text.length > VALUE_CHARS ? `${text.slice(0, VALUE_CHARS - 3)}...` : text;
}

/** Where readable lines go: a stream taking text (process.stdout). */
export interface ConsoleStream {
  write(text: string): unknown;
  isTTY?: boolean;
  hasColors?: () => boolean;
}

/**
 * A pino destination that writes each JSON line it gets as a readable line to `out`. A chunk that
 * is not a JSON record (never written by pino) is passed through as it is.
 */
export function prettyDestination(out: ConsoleStream, options: { colour?: boolean } = {}): DestinationStream {
  const colour = options.colour ?? (out.isTTY === true && out.hasColors?.() === true);
  return {
    write(chunk: string) {
      let text = '';
      for (const line of chunk.split('\n')) {
        if (line === '') continue;
        let record: unknown;
        try {
          record = JSON.parse(line);
        } catch {
          record = undefined;
        }
        const readable =
          typeof record === 'object' && record !== null && !Array.isArray(record)
            ? formatLogRecord(record as Record<string, unknown>, { colour })
            : line;
        text += `${readable}\n`;
      }
      if (text !== '') out.write(text);
    },
  };
}

/**
 * The destination of the daemon's log on this process's stdout for core.log.format: readable
 * lines, or undefined for JSON lines, which LogManager writes to stdout itself by default.
 */
export function consoleDestination(setting: LogFormatSetting, stdout: ConsoleStream = process.stdout): DestinationStream | undefined {
  return chooseLogFormat(setting, stdout) === 'pretty' ? prettyDestination(stdout) : undefined;
}

/**
 * `homeagentctl i2c [list] | i2c scan BUS`: the I2C sensors of a running daemon (the i2c plugin's
 * `i2c.sensors` and `i2c.scan` control methods). The table answers "why is this reading missing?"
 * in one look: state, failures in a row, when the next retry comes, and the last error.
 */
import type { I2cScanResult, I2cSensorsResult } from '../api/i2c.js';
import { type CommandRunOptions, withDaemon } from './command-client.js';
import { defineCommand, type NoFlags } from './command-module.js';

/** homeagentctl's option table entries for sensors: none of its own (`--json` is global). */
export const SENSORS_OPTIONS = {} as const;

export type SensorsCommand = { command: 'list' } | { command: 'scan'; bus: number };

export class SensorsUsageError extends Error {}

/** `homeagentctl i2c` for the command catalogue (src/cli/commands.ts): its flags, help and parser. */
export const i2cCommand = defineCommand<NoFlags>({
  name: 'i2c',
  options: SENSORS_OPTIONS,
  usage: [
    { synopsis: 'i2c [list]', about: 'I2C sensors: driver, bus/address, state, values with units, failures, last error' },
    { synopsis: 'i2c scan BUS', about: 'the addresses answering on an I2C bus, and whether each configured sensor does' },
  ],
  parse: (args) => {
    const command = parseSensorsCommand(args);
    return (context) => runSensors(command, context);
  },
});

/**
 * Reads `i2c [list] | i2c scan BUS` (positionals after the command word); throws SensorsUsageError.
 * `word` is the command word the messages name, should homeagentctl mount this under another one.
 */
export function parseSensorsCommand(positionals: readonly string[], word = 'i2c'): SensorsCommand {
  const [sub, ...rest] = positionals;
  switch (sub) {
    case undefined:
    case 'list':
      if (rest.length > 0) throw new SensorsUsageError(`${word} takes no arguments (${word} scan BUS scans a bus)`);
      return { command: 'list' };
    case 'scan': {
      if (rest.length !== 1) throw new SensorsUsageError(`${word} scan needs exactly one BUS number (1 for /dev/i2c-1)`);
      const text = rest[0] as string;
      const bus = Number(text);
      if (text.trim() === '' || !Number.isInteger(bus) || bus < 0 || bus > 255) {
        throw new SensorsUsageError(`${word} scan: BUS must be a whole number from 0 to 255, found ${JSON.stringify(text)}`);
      }
      return { command: 'scan', bus };
    }
    default:
      throw new SensorsUsageError(`unknown ${word} command ${sub}; use ${word} or ${word} scan BUS`);
  }
}

/**
 * Runs a parsed sensors command; resolves with the exit code. Daemon errors are thrown (homeagentctl
 * reports them). `options.now` is the clock for "retry in 40 s".
 */
export async function runSensors(command: SensorsCommand, options: CommandRunOptions): Promise<number> {
  return withDaemon(options, { plugin: 'i2c', also: 'configure plugin.i2c.sensors' }, async ({ call, print }) => {
    if (command.command === 'scan') return print((await call('i2c.scan', { bus: command.bus })) as I2cScanResult, formatScan);
    return print((await call('i2c.sensors', {})) as I2cSensorsResult, (r) => formatSensors(r, (options.now ?? Date.now)()));
  });
}

// ---- readable output ----

function seconds(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m} min ${s % 60} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

function table(rows: string[][]): string[] {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? [];
  return rows.map((row) =>
    row
      .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

/** Buses that need a word first, then one line per sensor. */
export function formatSensors(result: I2cSensorsResult, now: number): string {
  const lines: string[] = [];
  for (const bus of result.buses) {
    if (bus.error !== undefined) lines.push(`bus ${bus.bus}: not opened: ${bus.error}`);
    else if (bus.simulated)
      lines.push(`bus ${bus.bus}: simulated (${bus.name ?? '?'})${bus.fallback_reason === undefined ? '' : `: ${bus.fallback_reason}`}`);
  }
  if (result.sensors.length === 0) {
    lines.push('no I2C sensors configured (plugin.i2c.sensors)');
    return lines.join('\n');
  }
  if (lines.length > 0) lines.push('');
  const rows = [['ID', 'DRIVER', 'BUS/ADDRESS', 'STATE', 'VALUES', 'LAST ERROR']];
  for (const sensor of result.sensors) {
    const values = sensor.last_reading?.values.map((v) => `${v.value} ${v.unit}`).join(', ') ?? '-';
    const stale = sensor.state !== 'available' && sensor.last_reading !== null;
    const problem: string[] = [];
    // An error from before the last good reading is history, not a problem.
    if (sensor.last_error !== null && (sensor.state !== 'available' || sensor.failures > 0)) problem.push(sensor.last_error.message);
    const retry: string[] = [];
    if (sensor.failures > 0) retry.push(`${sensor.failures} in a row`);
    if (sensor.state === 'unavailable' && sensor.next_poll_at !== null)
      retry.push(`retry in ${seconds(Date.parse(sensor.next_poll_at) - now)}`);
    if (retry.length > 0) problem.push(`(${retry.join(', ')})`);
    rows.push([
      sensor.id,
      sensor.driver,
      `${sensor.bus}/${sensor.address}${sensor.simulated ? ' sim' : ''}`,
      sensor.state,
      stale ? `last: ${values}` : values,
      problem.join(' '),
    ]);
  }
  lines.push(...table(rows));
  return lines.join('\n');
}

export function formatScan(result: I2cScanResult): string {
  const lines = [
    `bus ${result.bus} (${result.name}${result.simulated ? ', simulated' : ''}): ${
      result.addresses.length === 0 ? 'no device answers' : `answering ${result.addresses.join(' ')}`
    }`,
  ];
  for (const busy of result.busy) lines.push(`  ${busy.address} busy: ${busy.error}`);
  for (const configured of result.configured) {
    lines.push(`  ${configured.sensor} at ${configured.address}: ${configured.answering ? 'answers' : 'does not answer'}`);
  }
  return lines.join('\n');
}

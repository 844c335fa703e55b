/**
 * `homeagentctl i2c [list] | i2c scan BUS | i2c simulate SENSOR --temperature N …`: the I2C sensors
 * of a running daemon (the i2c plugin's `i2c.sensors`, `i2c.scan` and `i2c.simulate` control
 * methods). The table answers "why is this reading missing?" in one look: state, failures in a row,
 * when the next retry comes, and the last error. `simulate` moves a simulated chip's physical
 * values (or takes it off the bus), so the readings, charts and automations can be tried on a
 * machine without sensors; the daemon refuses it for a real bus and checks the bounds.
 */
import type { I2cScanResult, I2cSensorStatus, I2cSensorsResult, SensorQuantity } from '../api/i2c.js';
import type { Language } from '../shared/language.js';
import { cliLanguage } from './cli-language.js';
import { runLanguage, stateWord } from './cli-words.js';
import { type CommandRunOptions, withDaemon } from './command-client.js';
import { CommandUsageError, defineCommand } from './command-module.js';
import { table } from './format.js';

/** homeagentctl's option table entries for i2c: the quantities `simulate` sets, and the bus state (`--json` is global). */
export const SENSORS_OPTIONS = {
  temperature: { type: 'string' },
  humidity: { type: 'string' },
  pressure: { type: 'string' },
  illuminance: { type: 'string' },
  offline: { type: 'boolean' },
  online: { type: 'boolean' },
} as const;

export type SensorsFlags = { [Q in SensorQuantity]?: string | undefined } & {
  offline?: boolean | undefined;
  online?: boolean | undefined;
};

/** What `simulate` sets, in option order; each option is the quantity's name, in the unit the chip reports. */
const SIMULATED_QUANTITIES: ReadonlyArray<{ quantity: SensorQuantity; unit: string }> = [
  { quantity: 'temperature', unit: '°C' },
  { quantity: 'humidity', unit: '%' },
  { quantity: 'pressure', unit: 'hPa' },
  { quantity: 'illuminance', unit: 'lx' },
];

export type SensorsCommand =
  | { command: 'list' }
  | { command: 'scan'; bus: number }
  | { command: 'simulate'; sensor: string; values: Partial<Record<SensorQuantity, number>>; offline?: boolean };

export class SensorsUsageError extends CommandUsageError {}

/** `homeagentctl i2c` for the command catalogue (src/cli/commands.ts): its flags, help and parser. */
export const i2cCommand = defineCommand<SensorsFlags>({
  name: 'i2c',
  options: SENSORS_OPTIONS,
  usage: [
    {
      synopsis: 'i2c [list]',
      about: 'I2C sensors: driver, bus/address, state, values with units, failures, last error',
      zh: 'I2C 传感器：驱动、总线/地址、状态、带单位的数值、失败次数、最近的错误',
    },
    {
      synopsis: 'i2c scan BUS',
      about: 'the addresses answering on an I2C bus, and whether each configured sensor does',
      zh: '一条 I2C 总线上应答的地址，以及每个已配置的传感器是否应答',
    },
    {
      synopsis: 'i2c simulate SENSOR [--temperature N] [--humidity N] [--pressure N] [--illuminance N]',
      about:
        "simulated bus only: set the chip's values in °C, %, hPa, lx (the next poll reads them);\n--offline takes it off the bus (it stops answering), --online brings it back",
      zh: '仅限模拟总线：以 °C、%、hPa、lx 设置芯片的数值（下次轮询读到）；\n--offline 让它离开总线（不再应答），--online 让它回来',
    },
  ],
  parse: (args, flags) => {
    const command = parseSensorsCommand(args, 'i2c', flags);
    return (context) => runSensors(command, context);
  },
});

/**
 * Reads `i2c [list] | i2c scan BUS | i2c simulate SENSOR …` (positionals after the command word, and
 * the i2c flags); throws SensorsUsageError. `word` is the command word the messages name, should
 * homeagentctl mount this under another one.
 */
export function parseSensorsCommand(positionals: readonly string[], word = 'i2c', flags: SensorsFlags = {}): SensorsCommand {
  const [sub, ...rest] = positionals;
  const given = givenFlags(flags);
  if (sub !== 'simulate' && given.length > 0) {
    throw new SensorsUsageError(
      `--${given[0]} belongs to ${word} simulate, not ${word}${sub === undefined ? '' : ` ${sub}`}`,
      `--${given[0]} 是 ${word} simulate 的选项，不属于 ${word}${sub === undefined ? '' : ` ${sub}`}`,
    );
  }
  switch (sub) {
    case undefined:
    case 'list':
      if (rest.length > 0)
        throw new SensorsUsageError(
          `${word} takes no arguments (${word} scan BUS scans a bus)`,
          `${word} 不接受参数（${word} scan BUS 扫描一条总线）`,
        );
      return { command: 'list' };
    case 'scan': {
      if (rest.length !== 1)
        throw new SensorsUsageError(
          `${word} scan needs exactly one BUS number (1 for /dev/i2c-1)`,
          `${word} scan 需要恰好一个总线号 BUS（/dev/i2c-1 为 1）`,
        );
      const text = rest[0] as string;
      const bus = Number(text);
      if (text.trim() === '' || !Number.isInteger(bus) || bus < 0 || bus > 255) {
        throw new SensorsUsageError(
          `${word} scan: BUS must be a whole number from 0 to 255, found ${JSON.stringify(text)}`,
          `${word} scan：BUS 须为 0 到 255 之间的整数，而不是 ${JSON.stringify(text)}`,
        );
      }
      return { command: 'scan', bus };
    }
    case 'simulate':
      return parseSimulate(rest, word, flags);
    default:
      throw new SensorsUsageError(
        `unknown ${word} command ${sub}; use ${word} [list], ${word} scan BUS or ${word} simulate SENSOR`,
        `未知的 ${word} 子命令 ${sub}；可用 ${word} [list]、${word} scan BUS 或 ${word} simulate SENSOR`,
      );
  }
}

function givenFlags(flags: SensorsFlags): Array<keyof SensorsFlags> {
  return (Object.keys(SENSORS_OPTIONS) as Array<keyof SensorsFlags>).filter((flag) => flags[flag] !== undefined);
}

function parseSimulate(rest: readonly string[], word: string, flags: SensorsFlags): SensorsCommand {
  const options = SIMULATED_QUANTITIES.map(({ quantity, unit }) => `--${quantity} ${unit}`).join(', ');
  const sensor = rest[0]?.trim() ?? '';
  if (rest.length !== 1 || sensor === '') {
    throw new SensorsUsageError(
      `${word} simulate needs exactly one SENSOR (its id in plugin.i2c.sensors), then ${options} or --offline/--online`,
      `${word} simulate 需要恰好一个 SENSOR（它在 plugin.i2c.sensors 中的 ID），再加 ${options} 或 --offline/--online`,
    );
  }
  const values: Partial<Record<SensorQuantity, number>> = {};
  for (const { quantity, unit } of SIMULATED_QUANTITIES) {
    const text = flags[quantity];
    if (text === undefined) continue;
    const value = Number(text);
    if (text.trim() === '' || !Number.isFinite(value)) {
      throw new SensorsUsageError(
        `--${quantity} must be a number of ${unit}, found ${JSON.stringify(text)}`,
        `--${quantity} 须为以 ${unit} 计的数值，而不是 ${JSON.stringify(text)}`,
      );
    }
    values[quantity] = value;
  }
  if (flags.offline === true && flags.online === true)
    throw new SensorsUsageError('--offline and --online cannot both be given', '--offline 和 --online 不能同时给出');
  const offline = flags.offline === true ? true : flags.online === true ? false : undefined;
  if (Object.keys(values).length === 0 && offline === undefined) {
    throw new SensorsUsageError(
      `${word} simulate ${sensor} needs a value to set (${options}) or --offline/--online`,
      `${word} simulate ${sensor} 需要一个要设置的值（${options}）或 --offline/--online`,
    );
  }
  return { command: 'simulate', sensor, values, ...(offline !== undefined && { offline }) };
}

/**
 * Runs a parsed sensors command; resolves with the exit code. Daemon errors are thrown (homeagentctl
 * reports them). `options.now` is the clock for "retry in 40 s".
 */
export async function runSensors(command: SensorsCommand, options: CommandRunOptions): Promise<number> {
  const language = runLanguage(options);
  return withDaemon(options, { plugin: 'i2c', also: 'configure plugin.i2c.sensors' }, async ({ call, print }) => {
    if (command.command === 'scan')
      return print((await call('i2c.scan', { bus: command.bus })) as I2cScanResult, (r) => formatScan(r, language));
    if (command.command === 'simulate') {
      const params = {
        sensor: command.sensor,
        ...(Object.keys(command.values).length > 0 && { values: command.values }),
        ...(command.offline !== undefined && { offline: command.offline }),
      };
      const status = (await call('i2c.simulate', params)) as I2cSensorStatus;
      return print(status, (s) => formatSimulated(command, s, (options.now ?? Date.now)(), language));
    }
    return print((await call('i2c.sensors', {})) as I2cSensorsResult, (r) => formatSensors(r, (options.now ?? Date.now)(), language));
  });
}

// ---- readable output ----

/** Every word the i2c command prints around the sensors' values, in both languages. */
const WORDS = {
  en: {
    seconds: (s: number) => `${s} s`,
    minutes: (m: number, s: number) => `${m} min ${s} s`,
    hours: (h: number, m: number) => `${h} h ${m} min`,
    notOpened: (bus: number, error: string) => `bus ${bus}: not opened: ${error}`,
    simulatedBus: (bus: number, name: string, reason: string | undefined) =>
      `bus ${bus}: simulated (${name})${reason === undefined ? '' : `: ${reason}`}`,
    none: 'no I2C sensors configured (plugin.i2c.sensors)',
    header: ['ID', 'DRIVER', 'BUS/ADDRESS', 'STATE', 'VALUES', 'LAST ERROR'],
    state: (state: string) => state,
    last: (values: string) => `last: ${values}`,
    inARow: (n: number) => `${n} in a row`,
    retry: (after: string) => `retry in ${after}`,
    offBus: 'off the bus (it no longer answers)',
    backOnBus: 'back on the bus',
    simulated: (id: string, set: string[]) => `${id}: ${set.join(', ')}; the next poll reads it`,
    scan: (r: I2cScanResult) =>
      `bus ${r.bus} (${r.name}${r.simulated ? ', simulated' : ''}): ${r.addresses.length === 0 ? 'no device answers' : `answering ${r.addresses.join(' ')}`}`,
    busy: (address: string, error: string) => `  ${address} busy: ${error}`,
    configured: (sensor: string, address: string, answering: boolean) =>
      `  ${sensor} at ${address}: ${answering ? 'answers' : 'does not answer'}`,
  },
  zh: {
    seconds: (s: number) => `${s} 秒`,
    minutes: (m: number, s: number) => `${m} 分 ${s} 秒`,
    hours: (h: number, m: number) => `${h} 小时 ${m} 分`,
    notOpened: (bus: number, error: string) => `总线 ${bus}：未打开：${error}`,
    simulatedBus: (bus: number, name: string, reason: string | undefined) =>
      `总线 ${bus}：模拟（${name}）${reason === undefined ? '' : `：${reason}`}`,
    none: '没有配置 I2C 传感器（plugin.i2c.sensors）',
    header: ['ID', '驱动', '总线/地址', '状态', '读数', '上次错误'],
    state: (state: string) => (state === 'available' ? '可用' : state === 'unavailable' ? '不可用' : stateWord(state, 'zh')),
    last: (values: string) => `上次：${values}`,
    inARow: (n: number) => `连续 ${n} 次`,
    retry: (after: string) => `${after}后重试`,
    offBus: '已离开总线（不再应答）',
    backOnBus: '已回到总线',
    simulated: (id: string, set: string[]) => `${id}：${set.join('，')}；下次轮询生效`,
    scan: (r: I2cScanResult) =>
      `总线 ${r.bus}（${r.name}${r.simulated ? '，模拟' : ''}）：${r.addresses.length === 0 ? '没有设备应答' : `应答的地址 ${r.addresses.join(' ')}`}`,
    busy: (address: string, error: string) => `  ${address} 忙：${error}`,
    configured: (sensor: string, address: string, answering: boolean) => `  ${sensor} 在 ${address}：${answering ? '有应答' : '没有应答'}`,
  },
} as const;

function seconds(ms: number, language: Language): string {
  const w = WORDS[language];
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return w.seconds(s);
  const m = Math.floor(s / 60);
  return m < 60 ? w.minutes(m, s % 60) : w.hours(Math.floor(m / 60), m % 60);
}

/** Buses that need a word first, then one line per sensor. */
export function formatSensors(result: I2cSensorsResult, now: number, language: Language = cliLanguage()): string {
  const w = WORDS[language];
  const lines: string[] = [];
  for (const bus of result.buses) {
    if (bus.error !== undefined) lines.push(w.notOpened(bus.bus, bus.error));
    else if (bus.simulated) lines.push(w.simulatedBus(bus.bus, bus.name ?? '?', bus.fallback_reason));
  }
  if (result.sensors.length === 0) {
    lines.push(w.none);
    return lines.join('\n');
  }
  if (lines.length > 0) lines.push('');
  const rows: string[][] = [[...w.header]];
  for (const sensor of result.sensors) {
    const values = sensor.last_reading?.values.map((v) => `${v.value} ${v.unit}`).join(', ') ?? '-';
    const stale = sensor.state !== 'available' && sensor.last_reading !== null;
    const problem: string[] = [];
    // An error from before the last good reading is history, not a problem.
    if (sensor.last_error !== null && (sensor.state !== 'available' || sensor.failures > 0)) problem.push(sensor.last_error.message);
    const retry: string[] = [];
    if (sensor.failures > 0) retry.push(w.inARow(sensor.failures));
    if (sensor.state === 'unavailable' && sensor.next_poll_at !== null)
      retry.push(w.retry(seconds(Date.parse(sensor.next_poll_at) - now, language)));
    if (retry.length > 0) problem.push(language === 'zh' ? `（${retry.join('，')}）` : `(${retry.join(', ')})`);
    rows.push([
      sensor.id,
      sensor.driver,
      `${sensor.bus}/${sensor.address}${sensor.simulated ? ' sim' : ''}`,
      w.state(sensor.state),
      stale ? w.last(values) : values,
      problem.join(' '),
    ]);
  }
  lines.push(table(rows, ''));
  return lines.join('\n');
}

/** What was set, then the sensor's line as `i2c` shows it (the values it shows are the last poll's until the next one). */
export function formatSimulated(
  command: Extract<SensorsCommand, { command: 'simulate' }>,
  status: I2cSensorStatus,
  now: number,
  language: Language = cliLanguage(),
): string {
  const w = WORDS[language];
  const set = SIMULATED_QUANTITIES.filter(({ quantity }) => command.values[quantity] !== undefined).map(
    ({ quantity, unit }) => `${quantity} ${command.values[quantity]} ${unit}`,
  );
  if (command.offline === true) set.push(w.offBus);
  if (command.offline === false) set.push(w.backOnBus);
  return [w.simulated(status.id, set), '', ...formatSensors({ buses: [], sensors: [status] }, now, language).split('\n')].join('\n');
}

export function formatScan(result: I2cScanResult, language: Language = cliLanguage()): string {
  const w = WORDS[language];
  const lines = [w.scan(result)];
  for (const busy of result.busy) lines.push(w.busy(busy.address, busy.error));
  for (const configured of result.configured) lines.push(w.configured(configured.sensor, configured.address, configured.answering));
  return lines.join('\n');
}

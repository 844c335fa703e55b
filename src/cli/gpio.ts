/**
 * `homeagentctl gpio pins|read|write|simulate`: the GPIO pins of a running daemon (the `gpio.*`
 * control methods of the gpio device plugin). `simulate` drives a simulated input, so a button can
 * be pressed on a machine without GPIO; on real hardware the daemon refuses it.
 */
import type { GpioPinStatus, GpioPinsResult, GpioSimulateResult, GpioWriteResult } from '../api/gpio.js';
import type { Language } from '../shared/language.js';
import { cliLanguage } from './cli-language.js';
import { runLanguage } from './cli-words.js';
import { type CommandRunOptions, withDaemon } from './command-client.js';
import { CommandUsageError, defineCommand } from './command-module.js';
import { table } from './format.js';

/** homeagentctl's option table entries for gpio (merged into its parseArgs options). */
export const GPIO_OPTIONS = {
  press: { type: 'string' },
} as const;

export type GpioFlags = { press?: string | undefined };

export type GpioCommand =
  | { command: 'pins' }
  | { command: 'read'; pin: string }
  | { command: 'write'; pin: string; value: 0 | 1 }
  | { command: 'simulate'; pin: string; level: 0 | 1 }
  | { command: 'simulate'; pin: string; press_ms: number };

export class GpioUsageError extends CommandUsageError {}

/** `homeagentctl gpio` for the command catalogue (src/cli/commands.ts): its flags, help and parser. */
export const gpioCommand = defineCommand<GpioFlags>({
  name: 'gpio',
  options: GPIO_OPTIONS,
  usage: [
    {
      synopsis: 'gpio pins',
      about: 'GPIO back end (and why), crash protection, every pin with its level',
      zh: 'GPIO 后端（及选用原因）、崩溃保护、每个引脚及其电平',
    },
    { synopsis: 'gpio read PIN', about: 'one pin (its id, entity id or BCM number)', zh: '读一个引脚（其 ID、实体 ID 或 BCM 编号）' },
    {
      synopsis: 'gpio write PIN 0|1',
      about: 'set an output (audited; a momentary relay pulses)',
      zh: '设置一个输出（记入审计；点动继电器输出一个脉冲）',
    },
    {
      synopsis: 'gpio simulate PIN 0|1 | gpio simulate PIN --press MS',
      about: 'simulated back end only: drive an input, or press it with contact bounce',
      zh: '仅限模拟后端：驱动一个输入，或带触点抖动地按下它',
    },
  ],
  parse: (args, flags) => {
    const command = parseGpioCommand(args, flags);
    return (context) => runGpio(command, context);
  },
});

const COMMANDS = 'pins, read, write or simulate';
const COMMANDS_ZH = 'pins、read、write 或 simulate';
/** The daemon's bounds for a simulated press (gpio.simulate). */
const MIN_PRESS_MS = 10;
const MAX_PRESS_MS = 60_000;

/** Reads `gpio <sub> …` (positionals after `gpio`); throws GpioUsageError. */
export function parseGpioCommand(positionals: readonly string[], flags: GpioFlags): GpioCommand {
  const [sub, ...rest] = positionals;
  if (sub === undefined) throw new GpioUsageError(`gpio needs a command: ${COMMANDS}`, `gpio 需要一个子命令：${COMMANDS_ZH}`);
  if (flags.press !== undefined && sub !== 'simulate')
    throw new GpioUsageError(`--press belongs to gpio simulate, not gpio ${sub}`, `--press 是 gpio simulate 的选项，不属于 gpio ${sub}`);
  const pin = (): string => {
    const p = rest[0]?.trim() ?? '';
    if (p === '')
      throw new GpioUsageError(
        `gpio ${sub} needs a PIN (its id, entity id or BCM number)`,
        `gpio ${sub} 需要一个 PIN（其 ID、实体 ID 或 BCM 编号）`,
      );
    return p;
  };
  switch (sub) {
    case 'pins':
      if (rest.length > 0) throw new GpioUsageError('gpio pins takes no arguments', 'gpio pins 不接受参数');
      return { command: 'pins' };
    case 'read':
      if (rest.length !== 1) throw new GpioUsageError('gpio read needs exactly one PIN', 'gpio read 需要恰好一个 PIN');
      return { command: 'read', pin: pin() };
    case 'write':
      if (rest.length !== 2) throw new GpioUsageError('gpio write needs a PIN and a value 0 or 1', 'gpio write 需要一个 PIN 和值 0 或 1');
      return { command: 'write', pin: pin(), value: bit(rest[1], 'gpio write') };
    case 'simulate': {
      if (flags.press !== undefined) {
        if (rest.length !== 1)
          throw new GpioUsageError('gpio simulate PIN --press MS takes no level', 'gpio simulate PIN --press MS 不接受电平');
        return { command: 'simulate', pin: pin(), press_ms: pressMs(flags.press) };
      }
      if (rest.length !== 2)
        throw new GpioUsageError(
          'gpio simulate needs a PIN and a level 0 or 1, or a PIN and --press MS',
          'gpio simulate 需要一个 PIN 和电平 0 或 1，或一个 PIN 和 --press MS',
        );
      return { command: 'simulate', pin: pin(), level: bit(rest[1], 'gpio simulate') };
    }
    default:
      throw new GpioUsageError(`unknown gpio command ${sub}; use ${COMMANDS}`, `未知的 gpio 子命令 ${sub}；可用 ${COMMANDS_ZH}`);
  }
}

function bit(text: string | undefined, what: string): 0 | 1 {
  if (text === '0') return 0;
  if (text === '1') return 1;
  throw new GpioUsageError(
    `${what}: the value must be 0 or 1, not ${JSON.stringify(text ?? '')}`,
    `${what}：值须为 0 或 1，而不是 ${JSON.stringify(text ?? '')}`,
  );
}

function pressMs(text: string): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isInteger(n) || n < MIN_PRESS_MS || n > MAX_PRESS_MS) {
    throw new GpioUsageError(
      `--press must be a whole number of milliseconds from ${MIN_PRESS_MS} to ${MAX_PRESS_MS}`,
      `--press 须为 ${MIN_PRESS_MS} 到 ${MAX_PRESS_MS} 之间的整数（毫秒）`,
    );
  }
  return n;
}

/** Runs a parsed gpio command; resolves with the exit code. Daemon errors are thrown (homeagentctl reports them). */
export async function runGpio(command: GpioCommand, options: CommandRunOptions): Promise<number> {
  const language = runLanguage(options);
  return withDaemon(options, { plugin: 'gpio' }, async ({ call, print }) => {
    switch (command.command) {
      case 'pins':
        return print((await call('gpio.pins', {})) as GpioPinsResult, (r) => formatGpioPins(r, language));
      case 'read':
        return print((await call('gpio.read', { pin: command.pin })) as GpioPinStatus, (r) => formatGpioPin(r, language));
      case 'write':
        return print((await call('gpio.write', { pin: command.pin, value: command.value })) as GpioWriteResult, (r) =>
          formatGpioWrite(r, language),
        );
      case 'simulate': {
        const params =
          'press_ms' in command ? { pin: command.pin, press_ms: command.press_ms } : { pin: command.pin, level: command.level };
        return print((await call('gpio.simulate', params)) as GpioSimulateResult, (r) => formatGpioSimulate(r, language));
      }
    }
  });
}

// ---- readable output ----

/** Every word the gpio command prints around the pins' values, in both languages. */
const WORDS = {
  en: {
    unknown: 'unknown',
    error: (e: string) => `\n  error: ${e}`,
    pulsed: (pin: string, ms: number, now: string) => `${pin} pulsed for ${ms} ms, now ${now}`,
    pressed: (pin: string, ms: number) => `${pin} pressed for ${ms} ms (with contact bounce)`,
    driven: (pin: string, to: string, now: string) => `${pin} driven to ${to}; now ${now}`,
    backEnd: (reason: string) => `back end: ${reason}`,
    noPins: 'no pins configured (plugin.gpio.pins; see devices/gpio/README.md)',
    activeLow: 'active low',
    pulse: (ms: number) => `pulse ${ms} ms`,
    maxOn: (s: number) => `max on ${s} s`,
    onSince: (at: string) => `on since ${at}`,
    pinError: (e: string) => `ERROR ${e}`,
    header: ['PIN', 'BCM', 'DIR', 'ENTITY', 'LEVEL', ''],
    direction: (d: string) => d,
    separator: ', ',
  },
  zh: {
    unknown: '未知',
    error: (e: string) => `\n  错误：${e}`,
    pulsed: (pin: string, ms: number, now: string) => `${pin} 已脉冲 ${ms} 毫秒，现在 ${now}`,
    pressed: (pin: string, ms: number) => `${pin} 已按下 ${ms} 毫秒（含触点抖动）`,
    driven: (pin: string, to: string, now: string) => `${pin} 已驱动为 ${to}；现在 ${now}`,
    backEnd: (reason: string) => `后端：${reason}`,
    noPins: '没有配置引脚（plugin.gpio.pins；见 devices/gpio/README.md）',
    activeLow: '低电平有效',
    pulse: (ms: number) => `脉冲 ${ms} 毫秒`,
    maxOn: (s: number) => `最长开启 ${s} 秒`,
    onSince: (at: string) => `自 ${at} 起开启`,
    pinError: (e: string) => `错误 ${e}`,
    header: ['引脚', 'BCM', '方向', '实体', '电平', ''],
    direction: (d: string) => (d === 'in' ? '输入' : d === 'out' ? '输出' : d),
    separator: '，',
  },
} as const;

function level(p: GpioPinStatus, language: Language): string {
  if (p.value === null) return WORDS[language].unknown;
  return p.state === null || String(p.state) === String(p.value) ? String(p.value) : `${p.value} (${p.state})`;
}

/** `kitchen_light (GPIO17) = 1 (on)`. */
export function formatGpioPin(p: GpioPinStatus, language: Language = cliLanguage()): string {
  const error = p.error === null ? '' : WORDS[language].error(p.error);
  return `${p.id} (GPIO${p.bcm}) = ${level(p, language)}${error}`;
}

function formatGpioWrite(p: GpioWriteResult, language: Language): string {
  if (p.pulsed_ms !== undefined) return WORDS[language].pulsed(`${p.id} (GPIO${p.bcm})`, p.pulsed_ms, level(p, language));
  return formatGpioPin(p, language);
}

export function formatGpioSimulate(r: GpioSimulateResult, language: Language = cliLanguage()): string {
  const p = r.status;
  const w = WORDS[language];
  if (r.press_ms !== undefined) return w.pressed(`${r.pin} (GPIO${p.bcm})`, r.press_ms);
  return w.driven(`${r.pin} (GPIO${p.bcm})`, String(r.level), level(p, language));
}

/** The back end with its reason, then one aligned line per pin. */
export function formatGpioPins(r: GpioPinsResult, language: Language = cliLanguage()): string {
  const w = WORDS[language];
  const lines = [w.backEnd(r.backend.reason), `  ${r.backend.describe}`, `  ${r.backend.crash_protection}`];
  if (r.pins.length === 0) {
    lines.push(w.noPins);
    return lines.join('\n');
  }
  const rows = r.pins.map((p) => {
    const notes: string[] = [];
    if (p.active_low) notes.push(w.activeLow);
    if (p.pulse_ms > 0) notes.push(w.pulse(p.pulse_ms));
    if (p.max_on_time_s > 0) notes.push(w.maxOn(p.max_on_time_s));
    if (p.on_since !== null) notes.push(w.onSince(p.on_since));
    if (p.error !== null) notes.push(w.pinError(p.error));
    return [p.id, `GPIO${p.bcm}`, w.direction(p.direction), p.entity_id, level(p, language), notes.join(w.separator)];
  });
  lines.push(table([[...w.header], ...rows], ''));
  return lines.join('\n');
}
